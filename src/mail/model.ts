/** The mail intake routes' request and response schemas (TypeBox). */
import { t } from "elysia";
import { Nullable, OneOf, Timestamp, Uuid } from "../http/shapes.ts";
import { AFTER_ACTIONS, MIN_POLL_SECONDS, TLS_MODES } from "./mail-accounts.ts";

export const MailAccountSchema = t.Object(
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

export const MessageSchema = t.Object({
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
export const accountParams = t.Object({ account_id: Uuid("account_id") });
export const NewMailAccount = t.Object({ ...optional, name: fields.name, host: fields.host, username: fields.username, password: fields.password });
export const MailAccountChange = t.Object(optional);
