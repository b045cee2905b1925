/** HTTP binding of /mail-accounts (Mediabox extension; docs/automation.md). */
import { Elysia, t } from "elysia";
import type { MailDeps } from "./deps.ts";
import { permissions } from "../http/permissions.ts";
import { Nullable, OneOf, Timestamp, Uuid, errorResponses } from "../http/shapes.ts";
import { AFTER_ACTIONS, createMailAccount, deleteMailAccount, getMailAccount, listMailAccounts, MIN_POLL_SECONDS, recentMessages, TLS_MODES, updateMailAccount } from "./mail-accounts.ts";

const MailAccountSchema = t.Object(
  {
    id: t.String(),
    name: t.String(),
    host: t.String(),
    port: t.Integer(),
    tls: t.String(),
    username: t.String(),
    has_password: t.Boolean({ description: "The password is sealed at rest and never returned" }),
    mailbox: t.String(),
    after_action: t.String(),
    move_to: Nullable(t.String()),
    from_contains: Nullable(t.String()),
    subject_contains: Nullable(t.String()),
    attachment_types: t.Array(t.String()),
    ingest_body: t.Boolean(),
    project_id: t.String(),
    folder_id: Nullable(t.String()),
    tags: t.Array(t.String()),
    poll_interval_seconds: t.Integer(),
    enabled: t.Boolean(),
    last_polled_at: Nullable(Timestamp),
    last_error: Nullable(t.String()),
    created_by: Nullable(t.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
    messages: t.Object({ done: t.Integer(), skipped: t.Integer(), failed: t.Integer(), ingesting: t.Integer() }),
  },
  { title: "MailAccount" },
);

const MessageSchema = t.Object({
  uid_validity: t.String(),
  uid: t.Integer(),
  message_id: Nullable(t.String()),
  subject: Nullable(t.String()),
  sender: Nullable(t.String()),
  status: t.String({ description: "ingesting, done, skipped (filters) or failed" }),
  parts: t.Array(t.Object({ part: t.String(), filename: t.String(), file_id: t.String(), status: t.String(), error: Nullable(t.String()) })),
  error: Nullable(t.String()),
  received_at: Nullable(Timestamp),
  handled_at: Timestamp,
});

const fields = {
  name: t.String({ error: "name must be a string" }),
  host: t.String({ maxLength: 255, error: "host must be a string" }),
  port: t.Integer({ minimum: 1, maximum: 65535, error: "port must be an integer from 1 to 65535" }),
  tls: OneOf(TLS_MODES, "implicit (default, port 993), starttls (required, port 143) or none"),
  username: t.String({ error: "username must be a string" }),
  password: t.String({ maxLength: 1024, error: "password must be a string" }),
  mailbox: t.String({ error: "mailbox must be a string" }),
  after_action: OneOf(AFTER_ACTIONS, "flag (default: \\Seen and \\Flagged) or move (to move_to)"),
  move_to: Nullable(t.String({ error: "move_to must be a string" })),
  from_contains: Nullable(t.String({ error: "from_contains must be a string" })),
  subject_contains: Nullable(t.String({ error: "subject_contains must be a string" })),
  attachment_types: t.Array(t.String(), { error: "attachment_types must be an array of strings" }),
  ingest_body: t.Boolean({ error: "ingest_body must be true or false" }),
  project_id: Nullable(Uuid("project_id")),
  folder_id: Nullable(Uuid("folder_id")),
  tags: t.Array(t.String(), { error: "tags must be an array of strings" }),
  poll_interval_seconds: t.Integer({ minimum: MIN_POLL_SECONDS, maximum: 86_400, error: `poll_interval_seconds must be an integer from ${MIN_POLL_SECONDS} to 86400` }),
  enabled: t.Boolean({ error: "enabled must be true or false" }),
};
const optional = {
  name: t.Optional(fields.name), host: t.Optional(fields.host), port: t.Optional(fields.port), tls: t.Optional(fields.tls), username: t.Optional(fields.username),
  password: t.Optional(fields.password), mailbox: t.Optional(fields.mailbox), after_action: t.Optional(fields.after_action), move_to: t.Optional(fields.move_to),
  from_contains: t.Optional(fields.from_contains), subject_contains: t.Optional(fields.subject_contains), attachment_types: t.Optional(fields.attachment_types),
  ingest_body: t.Optional(fields.ingest_body), project_id: t.Optional(fields.project_id), folder_id: t.Optional(fields.folder_id), tags: t.Optional(fields.tags),
  poll_interval_seconds: t.Optional(fields.poll_interval_seconds), enabled: t.Optional(fields.enabled),
};
const accountParams = t.Object({ account_id: Uuid("account_id") });

export function mailRoutes(ctx: MailDeps) {
  const { sql } = ctx;
  const accountDeps = { sql, db: ctx.db, clock: ctx.clock, vault: ctx.cloud.vault };
  return new Elysia({ tags: ["Automation"] })
    .use(permissions)
    .post(
      "/mail-accounts",
      ({ principal, body, set }) => {
        set.status = 201;
        return createMailAccount(accountDeps, principal.orgId, principal.keyId, body);
      },
      {
        permission: "edit",
        body: t.Object({ ...optional, name: fields.name, host: fields.host, username: fields.username, password: fields.password }),
        response: { 201: MailAccountSchema, ...errorResponses([400, 404, 409]) },
        detail: { summary: "Add an IMAP account for mail intake (extension)" },
      },
    )
    .get("/mail-accounts", async ({ principal }) => ({ items: await listMailAccounts(sql, principal.orgId) }), {
      permission: "view",
      response: { 200: t.Object({ items: t.Array(MailAccountSchema) }), ...errorResponses([]) },
      detail: { summary: "List mail accounts (extension)" },
    })
    .get("/mail-accounts/:account_id", ({ principal, params }) => getMailAccount(sql, principal.orgId, params.account_id), {
      permission: "view",
      params: accountParams,
      response: { 200: MailAccountSchema, ...errorResponses([400, 404]) },
      detail: { summary: "Get a mail account (extension)" },
    })
    .patch("/mail-accounts/:account_id", ({ principal, params, body }) => updateMailAccount(accountDeps, principal.orgId, params.account_id, body), {
      permission: "edit",
      params: accountParams,
      body: t.Object(optional),
      response: { 200: MailAccountSchema, ...errorResponses([400, 404, 409]) },
      detail: { summary: "Change a mail account (extension)", description: "A new host, user or mailbox starts over from its first message." },
    })
    .delete(
      "/mail-accounts/:account_id",
      async ({ principal, params, set }) => {
        await deleteMailAccount(sql, principal.orgId, params.account_id);
        set.status = 204;
      },
      { permission: "delete", params: accountParams, response: { 204: t.Void(), ...errorResponses([400, 404]) }, detail: { summary: "Remove a mail account (extension)" } },
    )
    .post(
      "/mail-accounts/:account_id/poll",
      async ({ principal, params, set }) => {
        const account = await getMailAccount(sql, principal.orgId, params.account_id);
        const job = await ctx.jobs.submit({ queue: "mail.poll", orgId: principal.orgId, payload: { accountId: account.id }, maxAttempts: 1, dedupeKey: `mail.poll:${account.id}` });
        set.status = 202;
        return { job_id: job.id, account_id: account.id };
      },
      {
        permission: "edit",
        params: accountParams,
        response: { 202: t.Object({ job_id: t.String(), account_id: t.String() }), ...errorResponses([400, 404]) },
        detail: { summary: "Poll a mail account now (extension)", description: "A mail.poll job; GET /job/{job_id} has its summary." },
      },
    )
    .get(
      "/mail-accounts/:account_id/messages",
      async ({ principal, params, query }) => ({ items: await recentMessages(sql, principal.orgId, params.account_id, query.limit ?? 50) }),
      {
        permission: "view",
        params: accountParams,
        query: t.Object({ limit: t.Optional(t.Integer({ minimum: 1, maximum: 200, error: "limit must be an integer from 1 to 200" })) }),
        response: { 200: t.Object({ items: t.Array(MessageSchema) }), ...errorResponses([400, 404]) },
        detail: { summary: "Messages an account handled, newest first (extension)" },
      },
    );
}
