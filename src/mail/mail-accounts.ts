/**
 * An organization's IMAP accounts for mail intake and the messages taken from them: the only
 * writer of `mail_accounts` and `mail_messages`. Passwords are sealed with the cloud token key
 * (token-vault.ts) and never returned. Filters say which messages are taken (sender, subject,
 * attachment types); placement and tags where their files go.
 *
 * On the data-access port (docs/scale-out.md).
 */
import type { TokenVault } from "../cloud/token-vault.ts";
import { isoAt, type Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { ApiError, badRequest, forTenantsOrNull } from "../errors.ts";
import { placement } from "../folders/placement.ts";
import { MAX_TAGS, parseTags } from "../files/file-fields.ts";

export const TLS_MODES = ["implicit", "starttls", "none"] as const;
export const AFTER_ACTIONS = ["flag", "move"] as const;
export const MIN_POLL_SECONDS = 30;

interface AccountRow {
  id: string;
  org_id: string;
  name: string;
  host: string;
  port: number;
  tls: (typeof TLS_MODES)[number];
  username: string;
  password: string;
  mailbox: string;
  after_action: (typeof AFTER_ACTIONS)[number];
  move_to: string | null;
  from_contains: string | null;
  subject_contains: string | null;
  attachment_types: string;
  ingest_body: number;
  project_id: string;
  folder_id: string | null;
  tags: string;
  poll_interval_seconds: number;
  enabled: number;
  uid_validity: string | null;
  last_uid: number;
  last_polled_at: string | null;
  next_poll_at: number;
  last_error: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface MailAccount {
  id: string;
  name: string;
  host: string;
  port: number;
  tls: AccountRow["tls"];
  username: string;
  has_password: boolean;
  mailbox: string;
  after_action: AccountRow["after_action"];
  move_to: string | null;
  from_contains: string | null;
  subject_contains: string | null;
  attachment_types: string[];
  ingest_body: boolean;
  project_id: string;
  folder_id: string | null;
  tags: string[];
  poll_interval_seconds: number;
  enabled: boolean;
  last_polled_at: string | null;
  last_error: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  messages: { done: number; skipped: number; failed: number; ingesting: number };
}

/** An account with its password, for the poller. */
export interface MailAccountSecret extends MailAccount {
  orgId: string;
  password: string;
  uidValidity: string | null;
  lastUid: number;
}

export interface MailAccountInput {
  name: string;
  host: string;
  port?: number | undefined;
  tls?: AccountRow["tls"] | undefined;
  username: string;
  password: string;
  mailbox?: string | undefined;
  after_action?: AccountRow["after_action"] | undefined;
  move_to?: string | null | undefined;
  from_contains?: string | null | undefined;
  subject_contains?: string | null | undefined;
  attachment_types?: string[] | undefined;
  ingest_body?: boolean | undefined;
  project_id?: string | null | undefined;
  folder_id?: string | null | undefined;
  tags?: string[] | undefined;
  poll_interval_seconds?: number | undefined;
  enabled?: boolean | undefined;
}

export type MailAccountPatch = Partial<MailAccountInput>;

/** What creating and changing an account needs. */
export interface MailAccountDeps {
  sql: SqlClient;
  clock: Clock;
  vault: TokenVault;
}

function notFound(id: string): ApiError {
  return new ApiError("MAIL_ACCOUNT_NOT_FOUND", `mail account ${id} not found`);
}

const HOST = /^[A-Za-z0-9.-]{1,253}$|^\[?[0-9A-Fa-f:.]+\]?$/;
const MAILBOX_MAX = 200;

function text(value: string | null | undefined, field: string, max: number): string | null {
  if (value === undefined || value === null || value.trim() === "") return null;
  if (value.length > max || /[\u0000-\u001f]/.test(value)) throw badRequest(`${field}: at most ${max} characters without control characters`);
  return value.trim();
}

/** "pdf", ".PDF", "application/pdf", "image/*" → lowercased, extensions without the dot. */
function attachmentTypes(values: string[]): string[] {
  if (values.length > 30) throw badRequest("attachment_types: at most 30");
  return [...new Set(values.map((v) => {
    const t = v.trim().toLowerCase().replace(/^\./, "");
    if (!/^[a-z0-9.+-]{1,20}$|^[a-z]+\/([a-z0-9.+-]+|\*)$/.test(t)) throw badRequest(`attachment_types: "${v}" is neither an extension (pdf) nor a media type (application/pdf, image/*)`);
    return t;
  }))];
}

async function toAccount(sql: SqlClient, row: AccountRow): Promise<MailAccount> {
  const messages = { done: 0, skipped: 0, failed: 0, ingesting: 0 };
  for (const c of await sql.all<{ status: keyof typeof messages; n: number }>("SELECT status, count(*) AS n FROM mail_messages WHERE account_id = ? GROUP BY status", [row.id])) messages[c.status] = c.n;
  return {
    id: row.id, name: row.name, host: row.host, port: row.port, tls: row.tls, username: row.username, has_password: row.password !== "",
    mailbox: row.mailbox, after_action: row.after_action, move_to: row.move_to, from_contains: row.from_contains, subject_contains: row.subject_contains,
    attachment_types: JSON.parse(row.attachment_types) as string[], ingest_body: row.ingest_body === 1, project_id: row.project_id, folder_id: row.folder_id,
    tags: JSON.parse(row.tags) as string[], poll_interval_seconds: row.poll_interval_seconds, enabled: row.enabled === 1, last_polled_at: row.last_polled_at,
    last_error: row.last_error, created_by: row.created_by, created_at: row.created_at, updated_at: row.updated_at, messages,
  };
}

async function accountRow(sql: SqlClient, orgId: string, id: string): Promise<AccountRow> {
  const row = await sql.one<AccountRow>("SELECT * FROM mail_accounts WHERE id = ? AND org_id = ?", [id.toLowerCase(), orgId]);
  if (!row) throw notFound(id);
  return row;
}

export async function getMailAccount(sql: SqlClient, orgId: string, id: string): Promise<MailAccount> {
  return toAccount(sql, await accountRow(sql, orgId, id));
}

export async function listMailAccounts(sql: SqlClient, orgId: string): Promise<MailAccount[]> {
  const accounts: MailAccount[] = [];
  for (const row of await sql.all<AccountRow>("SELECT * FROM mail_accounts WHERE org_id = ? ORDER BY name", [orgId])) accounts.push(await toAccount(sql, row));
  return accounts;
}

/** The fields both create and patch check, in their stored form. */
async function checked(sql: SqlClient, orgId: string, input: MailAccountPatch, current: AccountRow | null): Promise<Record<string, string | number | null>> {
  const out: Record<string, string | number | null> = {};
  if (input.name !== undefined) {
    const name = text(input.name, "name", 100);
    if (!name) throw badRequest("name: required");
    out.name = name;
  }
  if (input.host !== undefined) {
    if (!HOST.test(input.host.trim())) throw badRequest("host: a host name or IP address");
    out.host = input.host.trim().toLowerCase();
  }
  if (input.port !== undefined) out.port = input.port;
  if (input.tls !== undefined) out.tls = input.tls;
  if (input.username !== undefined) {
    const username = text(input.username, "username", 320);
    if (!username) throw badRequest("username: required");
    out.username = username;
  }
  if (input.mailbox !== undefined) out.mailbox = text(input.mailbox, "mailbox", MAILBOX_MAX) ?? "INBOX";
  if (input.after_action !== undefined) out.after_action = input.after_action;
  if (input.move_to !== undefined) out.move_to = text(input.move_to, "move_to", MAILBOX_MAX);
  if (input.from_contains !== undefined) out.from_contains = text(input.from_contains, "from_contains", 320);
  if (input.subject_contains !== undefined) out.subject_contains = text(input.subject_contains, "subject_contains", 500);
  if (input.attachment_types !== undefined) out.attachment_types = JSON.stringify(attachmentTypes(input.attachment_types));
  if (input.ingest_body !== undefined) out.ingest_body = input.ingest_body ? 1 : 0;
  if (input.tags !== undefined) out.tags = JSON.stringify(parseTags(input.tags, { maxTags: MAX_TAGS }));
  if (input.poll_interval_seconds !== undefined) out.poll_interval_seconds = input.poll_interval_seconds;
  if (input.enabled !== undefined) out.enabled = input.enabled ? 1 : 0;
  if (input.folder_id !== undefined || input.project_id !== undefined) {
    const where = await placement(sql, orgId, input.folder_id ?? null, input.project_id ?? null);
    out.project_id = where.projectId;
    out.folder_id = where.folderId;
  }
  const afterAction = (out.after_action ?? current?.after_action ?? "flag") as string;
  const moveTo = out.move_to !== undefined ? out.move_to : (current?.move_to ?? null);
  if (afterAction === "move" && !moveTo) throw badRequest("move_to: the mailbox messages move to is required with after_action move");
  return out;
}

export async function createMailAccount(deps: MailAccountDeps, orgId: string, createdBy: string | null, input: MailAccountInput): Promise<MailAccount> {
  const { sql, clock, vault } = deps;
  const fields = await checked(sql, orgId, input, null);
  if (!input.password) throw badRequest("password: required");
  if (await sql.one("SELECT 1 FROM mail_accounts WHERE org_id = ? AND name = ?", [orgId, fields.name!])) throw new ApiError("MAIL_ACCOUNT_NAME_EXISTS", `a mail account named "${fields.name}" already exists`);
  const where = fields.project_id === undefined ? await placement(sql, orgId, null, null) : { projectId: fields.project_id as string, folderId: fields.folder_id as string | null };
  const tls = input.tls ?? "implicit";
  const id = crypto.randomUUID();
  const now = isoAt(clock.now());
  await sql.run(
    `INSERT INTO mail_accounts (id, org_id, name, host, port, tls, username, password, mailbox, after_action, move_to, from_contains, subject_contains,
       attachment_types, ingest_body, project_id, folder_id, tags, poll_interval_seconds, enabled, created_by, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [id, orgId, fields.name!, fields.host!, input.port ?? (tls === "implicit" ? 993 : 143), tls, fields.username!, vault.encrypt(input.password),
    (fields.mailbox as string | undefined) ?? "INBOX", input.after_action ?? "flag", (fields.move_to as string | null | undefined) ?? null,
    (fields.from_contains as string | null | undefined) ?? null, (fields.subject_contains as string | null | undefined) ?? null,
    (fields.attachment_types as string | undefined) ?? "[]", input.ingest_body ? 1 : 0, where.projectId, where.folderId, (fields.tags as string | undefined) ?? "[]",
    input.poll_interval_seconds ?? 300, input.enabled === false ? 0 : 1, createdBy, now, now],
  );
  return getMailAccount(sql, orgId, id);
}

export async function updateMailAccount(deps: MailAccountDeps, orgId: string, id: string, patch: MailAccountPatch): Promise<MailAccount> {
  const { sql, clock, vault } = deps;
  const row = await accountRow(sql, orgId, id);
  const fields = await checked(sql, orgId, patch, row);
  if (patch.password !== undefined) {
    if (!patch.password) throw badRequest("password: must not be empty");
    fields.password = vault.encrypt(patch.password);
  }
  if (fields.name !== undefined && (await sql.one("SELECT 1 FROM mail_accounts WHERE org_id = ? AND name = ? AND id != ?", [orgId, fields.name, row.id]))) {
    throw new ApiError("MAIL_ACCOUNT_NAME_EXISTS", `a mail account named "${fields.name}" already exists`);
  }
  // Another server or mailbox has other UIDs: start over there.
  if (fields.host !== undefined || fields.username !== undefined || fields.mailbox !== undefined) Object.assign(fields, { uid_validity: null, last_uid: 0 });
  const columns = Object.keys(fields);
  if (columns.length) {
    await sql.run(`UPDATE mail_accounts SET ${columns.map((c) => `${c} = ?`).join(", ")}, last_error = NULL, updated_at = ? WHERE id = ?`, [
      ...columns.map((c) => fields[c]!), isoAt(clock.now()), row.id,
    ]);
  }
  return getMailAccount(sql, orgId, row.id);
}

export async function deleteMailAccount(sql: SqlClient, orgId: string, id: string): Promise<void> {
  await sql.run("DELETE FROM mail_accounts WHERE id = ?", [(await accountRow(sql, orgId, id)).id]);
}

/** The account with its password unsealed, for a poll; null when it is gone or disabled. */
export async function accountForPoll(sql: SqlClient, vault: TokenVault, id: string): Promise<MailAccountSecret | null> {
  const row = await sql.one<AccountRow>("SELECT * FROM mail_accounts WHERE id = ? AND enabled = 1", [id]);
  if (!row) return null;
  return { ...(await toAccount(sql, row)), orgId: row.org_id, password: vault.decrypt(row.password), uidValidity: row.uid_validity, lastUid: row.last_uid };
}

/**
 * Accounts due for a poll now (their interval has passed); their next time is set. One statement:
 * of processes sharing a PostgreSQL database that look at once, one takes each account (the
 * others' updates find it no longer due).
 */
export async function dueAccounts(sql: SqlClient, now: number): Promise<{ id: string; org_id: string }[]> {
  return sql.all<{ id: string; org_id: string }>(
    "UPDATE mail_accounts SET next_poll_at = ? + poll_interval_seconds * 1000 WHERE enabled = 1 AND next_poll_at <= ? RETURNING id, org_id",
    [now, now],
  );
}

export async function pollEnded(sql: SqlClient, clock: Clock, id: string, outcome: { error: string | null; uidValidity?: string; lastUid?: number }): Promise<void> {
  await sql.run(
    `UPDATE mail_accounts SET last_polled_at = ?, last_error = ?, uid_validity = coalesce(?, uid_validity), last_uid = coalesce(?, last_uid) WHERE id = ?`,
    [isoAt(clock.now()), forTenantsOrNull(outcome.error), outcome.uidValidity ?? null, outcome.lastUid ?? null, id],
  );
}

/** A new UIDVALIDITY means the mailbox's UIDs were renumbered: everything in it is looked at again. */
export async function mailboxRenumbered(sql: SqlClient, id: string, uidValidity: string): Promise<void> {
  await sql.run("UPDATE mail_accounts SET uid_validity = ?, last_uid = 0 WHERE id = ?", [uidValidity, id]);
}

export interface MessagePart {
  part: string;
  filename: string;
  file_id: string;
  status: "pending" | "stored" | "failed";
  error: string | null;
}

export interface MessageRow {
  account_id: string;
  uid_validity: string;
  uid: number;
  message_id: string | null;
  subject: string | null;
  sender: string | null;
  status: "ingesting" | "done" | "skipped" | "failed";
  parts: string;
  error: string | null;
  received_at: string | null;
  handled_at: string;
}

export async function messageRow(sql: SqlClient, accountId: string, uidValidity: string, uid: number): Promise<MessageRow | null> {
  return sql.one<MessageRow>("SELECT * FROM mail_messages WHERE account_id = ? AND uid_validity = ? AND uid = ?", [accountId, uidValidity, uid]);
}

/** Claims a message with the files its parts will become (or records it skipped/failed at once). */
export async function recordMessage(sql: SqlClient, clock: Clock, row: Omit<MessageRow, "handled_at" | "parts"> & { parts: MessagePart[] }): Promise<void> {
  await sql.run(
    `INSERT INTO mail_messages (account_id, uid_validity, uid, message_id, subject, sender, status, parts, error, received_at, handled_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (account_id, uid_validity, uid) DO UPDATE SET status = excluded.status, parts = excluded.parts, error = excluded.error, handled_at = excluded.handled_at`,
    [row.account_id, row.uid_validity, row.uid, row.message_id, row.subject, row.sender, row.status, JSON.stringify(row.parts), row.error, row.received_at, isoAt(clock.now())],
  );
}

export async function recentMessages(sql: SqlClient, orgId: string, accountId: string, limit: number) {
  const account = await accountRow(sql, orgId, accountId);
  return (await sql.all<MessageRow>("SELECT * FROM mail_messages WHERE account_id = ? ORDER BY handled_at DESC, uid DESC LIMIT ?", [account.id, limit]))
    .map(({ account_id: _a, parts, ...m }) => ({ ...m, parts: JSON.parse(parts) as MessagePart[] }));
}

/** Re-seals passwords sealed with a previous key (after a key rotation); returns how many. */
export async function resealMailPasswords(sql: SqlClient, vault: TokenVault): Promise<number> {
  let count = 0;
  for (const row of await sql.all<{ id: string; password: string }>("SELECT id, password FROM mail_accounts")) {
    if (!vault.isStale(row.password)) continue;
    await sql.run("UPDATE mail_accounts SET password = ? WHERE id = ?", [vault.encrypt(vault.decrypt(row.password)), row.id]);
    count += 1;
  }
  return count;
}
