/** HTTP binding of /mail-accounts (Mediabox extension; docs/automation.md). */
import { Elysia, t } from "elysia";
import type { MailDeps } from "./deps.ts";
import { permissions } from "../http/permissions.ts";
import { errorResponses } from "../http/shapes.ts";
import { createMailAccount, deleteMailAccount, getMailAccount, listMailAccounts, recentMessages, updateMailAccount } from "./mail-accounts.ts";
import { MailAccountChange, MailAccountSchema, MessageSchema, NewMailAccount, accountParams } from "./model.ts";

export function mailRoutes(ctx: MailDeps) {
  const { sql } = ctx;
  const accountDeps = { sql, clock: ctx.clock, vault: ctx.cloud.vault };
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
        body: NewMailAccount,
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
      body: MailAccountChange,
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
