/**
 * Outbound webhooks: an organization's receivers and the deliveries made to them. The only
 * writer of `webhooks`, `webhook_deliveries` and `webhook_attempts`. A receiver is a URL that the
 * link crawler's address policy allows (checked when it is saved for an address written in the
 * URL, and on every delivery for the addresses its name resolves to), a signing secret sealed at
 * rest with the cloud token key, and the events it wants. `emitEvent` records one delivery per
 * subscribed receiver and queues its durable `webhook.deliver` job, in the caller's transaction.
 *
 * On the data-access port (docs/scale-out.md), `emitEvent` writing through its caller's
 * transaction (`tx`: the rule jobs', the end of an upload session's, a test delivery's own).
 */
import { randomBytes } from "node:crypto";
import { isIP } from "node:net";
import type { TokenVault } from "../cloud/token-vault.ts";
import { isoAt, type Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { ApiError, badRequest, forTenantsOrNull } from "../errors.ts";
import type { JobRunner } from "../jobs/runner.ts";
import { checkEgressAddress, checkEgressPort, egressPolicy } from "../net/egress-policy.ts";
import { validateLinkUrl } from "../net/url-policy.ts";

export const WEBHOOK_EVENTS = ["file.completed", "file.failed", "batch.completed", "rule.applied"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
/** Sent by POST /webhooks/{id}/test only, whatever the receiver subscribed to. */
export const TEST_EVENT = "webhook.test";

const SECRET_MIN = 16;
const SECRET_MAX = 256;
const DESCRIPTION_MAX = 1000;

interface WebhookRow {
  id: string;
  org_id: string;
  url: string;
  secret: string;
  secret_hint: string;
  events: string;
  description: string | null;
  enabled: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface Webhook {
  id: string;
  url: string;
  events: WebhookEvent[];
  description: string | null;
  enabled: boolean;
  /** The secret's last four characters, to tell secrets apart. */
  secret_hint: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  /** Deliveries by status. */
  deliveries: { pending: number; delivered: number; failed: number };
}

export interface WebhookInput {
  url: string;
  events: string[];
  description?: string | null | undefined;
  enabled?: boolean | undefined;
  secret?: string | undefined;
}

export type WebhookPatch = Partial<Omit<WebhookInput, "secret">>;

/** What the webhook module needs from the server. */
export interface WebhookDeps {
  sql: SqlClient;
  clock: Clock;
  config: Config;
  jobs: JobRunner;
  vault: TokenVault;
}

function notFound(id: string): ApiError {
  return new ApiError("WEBHOOK_NOT_FOUND", `webhook ${id} not found`);
}

/**
 * The URL a receiver may have: what a link may be (absolute http(s), no credentials, ≤ 2048), on a
 * port of MEDIABOX_WEBHOOK_PORTS, and, when it names an address, one the webhooks' egress policy
 * lets through (loopback and private ranges only through MEDIABOX_WEBHOOK_ALLOW_CIDRS). A host
 * name is checked on every delivery, against every address it resolves to then.
 */
export function checkWebhookUrl(config: Config, raw: string): string {
  const verdict = validateLinkUrl(raw);
  if (!verdict.ok) throw new ApiError("INVALID_WEBHOOK_URL", `url: ${verdict.reason}`);
  const url = verdict.url;
  const policy = egressPolicy(config, "webhooks");
  const port = checkEgressPort(policy, url);
  if (!port.ok) throw new ApiError("INVALID_WEBHOOK_URL", `url: ${port.reason}`);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host)) {
    const address = checkEgressAddress(policy, host);
    if (!address.ok) throw new ApiError("INVALID_WEBHOOK_URL", `url: ${address.reason}`);
  }
  return url.href;
}

function checkEvents(events: string[]): WebhookEvent[] {
  if (!events.length) throw badRequest(`events: at least one of ${WEBHOOK_EVENTS.join(", ")}`);
  const unknown = events.find((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
  if (unknown) throw badRequest(`events: "${unknown}" is not one of ${WEBHOOK_EVENTS.join(", ")}`);
  return [...new Set(events)] as WebhookEvent[];
}

function checkDescription(description: string | null | undefined): string | null {
  if (description === undefined || description === null || !description.trim()) return null;
  if (description.length > DESCRIPTION_MAX) throw badRequest(`description: at most ${DESCRIPTION_MAX} characters`);
  return description.trim();
}

function newSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

function checkSecret(secret: string): string {
  if (secret.length < SECRET_MIN || secret.length > SECRET_MAX || /\s/.test(secret)) throw badRequest(`secret: ${SECRET_MIN}-${SECRET_MAX} characters without spaces`);
  return secret;
}

async function toWebhook(sql: SqlClient, row: WebhookRow): Promise<Webhook> {
  const counts = { pending: 0, delivered: 0, failed: 0 };
  for (const c of await sql.all<{ status: keyof typeof counts; n: number }>("SELECT status, count(*) AS n FROM webhook_deliveries WHERE webhook_id = ? GROUP BY status", [row.id])) {
    counts[c.status] = c.n;
  }
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as WebhookEvent[],
    description: row.description,
    enabled: row.enabled === 1,
    secret_hint: row.secret_hint,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
    deliveries: counts,
  };
}

async function webhookRow(sql: SqlClient, orgId: string, id: string): Promise<WebhookRow> {
  const row = await sql.one<WebhookRow>("SELECT * FROM webhooks WHERE id = ? AND org_id = ?", [id.toLowerCase(), orgId]);
  if (!row) throw notFound(id);
  return row;
}

export async function webhookExists(sql: SqlClient, orgId: string, id: string): Promise<boolean> {
  return (await sql.one("SELECT 1 AS one FROM webhooks WHERE id = ? AND org_id = ?", [id.toLowerCase(), orgId])) !== null;
}

export async function getWebhook(sql: SqlClient, orgId: string, id: string): Promise<Webhook> {
  return toWebhook(sql, await webhookRow(sql, orgId, id));
}

export async function listWebhooks(sql: SqlClient, orgId: string, limit: number, offset: number): Promise<{ items: Webhook[]; total: number }> {
  const total = (await sql.one<{ n: number }>("SELECT count(*) AS n FROM webhooks WHERE org_id = ?", [orgId]))!.n;
  const rows = await sql.all<WebhookRow>("SELECT * FROM webhooks WHERE org_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?", [orgId, limit, offset]);
  const items: Webhook[] = [];
  for (const row of rows) items.push(await toWebhook(sql, row));
  return { items, total };
}

/** Creates a receiver; the answer carries its secret, which is never shown again. */
export async function createWebhook(deps: WebhookDeps, orgId: string, createdBy: string | null, input: WebhookInput): Promise<Webhook & { secret: string }> {
  const url = checkWebhookUrl(deps.config, input.url);
  const events = checkEvents(input.events);
  const description = checkDescription(input.description);
  const secret = input.secret === undefined ? newSecret() : checkSecret(input.secret);
  const id = crypto.randomUUID();
  const now = isoAt(deps.clock.now());
  await deps.sql.run(
    `INSERT INTO webhooks (id, org_id, url, secret, secret_hint, events, description, enabled, created_by, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [id, orgId, url, deps.vault.encrypt(secret), secret.slice(-4), JSON.stringify(events), description, input.enabled === false ? 0 : 1, createdBy, now, now],
  );
  return { ...(await getWebhook(deps.sql, orgId, id)), secret };
}

export async function updateWebhook(deps: WebhookDeps, orgId: string, id: string, patch: WebhookPatch): Promise<Webhook> {
  const row = await webhookRow(deps.sql, orgId, id);
  const sets: string[] = [];
  const args: (string | number | null)[] = [];
  const set = (column: string, value: string | number | null) => (sets.push(`${column} = ?`), args.push(value));
  if (patch.url !== undefined) set("url", checkWebhookUrl(deps.config, patch.url));
  if (patch.events !== undefined) set("events", JSON.stringify(checkEvents(patch.events)));
  if (patch.description !== undefined) set("description", checkDescription(patch.description));
  if (patch.enabled !== undefined) set("enabled", patch.enabled ? 1 : 0);
  if (sets.length) await deps.sql.run(`UPDATE webhooks SET ${sets.join(", ")}, updated_at = ? WHERE id = ?`, [...args, isoAt(deps.clock.now()), row.id]);
  return getWebhook(deps.sql, orgId, row.id);
}

/** A new secret, returned once; deliveries from now on are signed with it (retries included). */
export async function rotateSecret(deps: WebhookDeps, orgId: string, id: string): Promise<{ secret: string; webhook: Webhook }> {
  const row = await webhookRow(deps.sql, orgId, id);
  const secret = newSecret();
  await deps.sql.run("UPDATE webhooks SET secret = ?, secret_hint = ?, updated_at = ? WHERE id = ?", [deps.vault.encrypt(secret), secret.slice(-4), isoAt(deps.clock.now()), row.id]);
  return { secret, webhook: await getWebhook(deps.sql, orgId, row.id) };
}

/** Deletes the receiver with its deliveries (pending ones are not sent). */
export async function deleteWebhook(sql: SqlClient, orgId: string, id: string): Promise<void> {
  const row = await webhookRow(sql, orgId, id);
  await sql.run("DELETE FROM webhooks WHERE id = ?", [row.id]);
}

/** Whether an enabled receiver of the organization wants any of these events. */
export async function hasSubscribers(sql: SqlClient, orgId: string, events: string[]): Promise<boolean> {
  return (await sql.all<{ events: string }>("SELECT events FROM webhooks WHERE org_id = ? AND enabled = 1", [orgId])).some((r) =>
    (JSON.parse(r.events) as string[]).some((e) => events.includes(e)),
  );
}

/** The body every receiver of one event gets. */
export interface EventEnvelope {
  id: string;
  type: string;
  created_at: string;
  organization_id: string;
  data: Record<string, unknown>;
}

/**
 * Records the event's delivery to every enabled receiver of the organization that subscribed to
 * it, and to those of `alsoTo` (receivers named by a rule's call_webhook action, or a test)
 * whatever they subscribed to, once each, and queues their delivery jobs. Runs in the caller's
 * transaction `tx`: the deliveries and their jobs commit with what caused them, or not at all.
 * Returns the delivery ids.
 */
export async function emitEvent(deps: Pick<WebhookDeps, "clock" | "config" | "jobs">, tx: SqlClient, orgId: string, type: string, data: Record<string, unknown>, alsoTo: string[] = []): Promise<string[]> {
  const receivers = (await tx.all<WebhookRow>("SELECT * FROM webhooks WHERE org_id = ? AND enabled = 1 ORDER BY created_at, id", [orgId])).filter(
    (r) => alsoTo.includes(r.id) || (JSON.parse(r.events) as string[]).includes(type),
  );
  if (!receivers.length) return [];
  const now = deps.clock.now();
  const envelope: EventEnvelope = { id: crypto.randomUUID(), type, created_at: isoAt(now), organization_id: orgId, data };
  const payload = JSON.stringify(envelope);
  const ids: string[] = [];
  for (const receiver of receivers) {
    const id = crypto.randomUUID();
    const job = await deps.jobs.submit({ queue: "webhook.deliver", orgId, payload: { deliveryId: id }, maxAttempts: deps.config.webhookMaxAttempts }, tx);
    await tx.run(
      `INSERT INTO webhook_deliveries (id, org_id, webhook_id, event_id, event_type, payload, status, max_attempts, next_attempt_at, job_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)`,
      [id, orgId, receiver.id, envelope.id, type, payload, deps.config.webhookMaxAttempts, isoAt(now), job.id, isoAt(now), isoAt(now)],
    );
    ids.push(id);
  }
  return ids;
}

interface DeliveryRow {
  id: string;
  org_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  max_attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  job_id: string | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
}

export interface Attempt {
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/** A delivery as the API shows it: the receiver's URL, the payload parsed, every attempt. */
export interface Delivery extends Omit<DeliveryRow, "org_id" | "payload"> {
  url: string;
  payload: unknown;
  attempt_log: Attempt[];
}

async function toDelivery(sql: SqlClient, row: DeliveryRow & { url: string }): Promise<Delivery> {
  const { payload, org_id: _org, url, ...rest } = row;
  const attemptLog = await sql.all<Attempt>("SELECT attempt, attempted_at, status_code, error, duration_ms FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt", [row.id]);
  return { ...rest, url, payload: JSON.parse(payload), attempt_log: attemptLog };
}

const DELIVERY_SELECT = "SELECT d.*, w.url AS url FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id";

export async function listDeliveries(
  sql: SqlClient,
  orgId: string,
  filter: { webhookId?: string | undefined; status?: DeliveryRow["status"] | undefined },
  limit: number,
  offset: number,
): Promise<{ items: Delivery[]; total: number }> {
  const where = ["d.org_id = ?"];
  const args: (string | number)[] = [orgId];
  if (filter.webhookId) {
    await webhookRow(sql, orgId, filter.webhookId);
    where.push("d.webhook_id = ?");
    args.push(filter.webhookId.toLowerCase());
  }
  if (filter.status) (where.push("d.status = ?"), args.push(filter.status));
  const clause = where.join(" AND ");
  const total = (await sql.one<{ n: number }>(`SELECT count(*) AS n FROM webhook_deliveries d WHERE ${clause}`, args))!.n;
  const rows = await sql.all<DeliveryRow & { url: string }>(`${DELIVERY_SELECT} WHERE ${clause} ORDER BY d.created_at DESC, d.rowid DESC LIMIT ? OFFSET ?`, [...args, limit, offset]);
  const items: Delivery[] = [];
  for (const row of rows) items.push(await toDelivery(sql, row));
  return { items, total };
}

export async function getDelivery(sql: SqlClient, orgId: string, id: string): Promise<Delivery> {
  const row = await sql.one<DeliveryRow & { url: string }>(`${DELIVERY_SELECT} WHERE d.id = ? AND d.org_id = ?`, [id.toLowerCase(), orgId]);
  if (!row) throw new ApiError("WEBHOOK_DELIVERY_NOT_FOUND", `webhook delivery ${id} not found`);
  return toDelivery(sql, row);
}

/**
 * Sends a failed (dead-lettered) delivery again with a fresh set of attempts: the same event
 * body, signed anew. A delivery still pending or already delivered is 409.
 */
export async function retryDelivery(deps: WebhookDeps, orgId: string, id: string): Promise<Delivery> {
  const now = isoAt(deps.clock.now());
  await deps.sql.transaction(async (tx) => {
    // Locked on PostgreSQL: two retries of one delivery at once queue one job.
    const current = await tx.one<{ id: string; status: string }>(`SELECT id, status FROM webhook_deliveries WHERE id = ? AND org_id = ? ${tx.dialect.forUpdate}`, [id.toLowerCase(), orgId]);
    if (!current) throw new ApiError("WEBHOOK_DELIVERY_NOT_FOUND", `webhook delivery ${id} not found`);
    if (current.status !== "failed") throw new ApiError("WEBHOOK_DELIVERY_NOT_FAILED", `delivery ${current.id} is ${current.status}; only failed deliveries are retried by hand`);
    const job = await deps.jobs.submit({ queue: "webhook.deliver", orgId, payload: { deliveryId: current.id }, maxAttempts: deps.config.webhookMaxAttempts }, tx);
    await tx.run("UPDATE webhook_deliveries SET status = 'pending', max_attempts = attempts + ?, next_attempt_at = ?, job_id = ?, updated_at = ? WHERE id = ?", [
      deps.config.webhookMaxAttempts, now, job.id, now, current.id,
    ]);
  });
  return getDelivery(deps.sql, orgId, id);
}

/** What the delivery job needs: the body, where to send it and the secret to sign it with. */
export interface DeliveryWork {
  id: string;
  orgId: string;
  url: string;
  secret: string;
  eventType: string;
  payload: string;
  attempts: number;
}

/** The pending delivery's work, or why there is none (delivered meanwhile, receiver deleted or disabled). */
export async function deliveryWork(deps: WebhookDeps, id: string): Promise<DeliveryWork | string> {
  const row = await deps.sql.one<DeliveryRow & { url: string; secret: string; enabled: number }>(
    "SELECT d.*, w.url AS url, w.secret AS secret, w.enabled AS enabled FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ?",
    [id],
  );
  if (!row) return "the delivery or its webhook was deleted";
  if (row.status !== "pending") return `the delivery is already ${row.status}`;
  if (!row.enabled) return "the webhook is disabled";
  return { id: row.id, orgId: row.org_id, url: row.url, secret: deps.vault.decrypt(row.secret), eventType: row.event_type, payload: row.payload, attempts: row.attempts };
}

/**
 * Records one attempt and what it means for the delivery: delivered, failed for good (the
 * dead-letter list) when `final`, else pending with the time of the next try.
 */
export async function recordAttempt(
  deps: WebhookDeps,
  id: string,
  outcome: { statusCode: number | null; error: string | null; durationMs: number; delivered: boolean; final: boolean; nextAttemptAt: number | null },
): Promise<void> {
  const now = isoAt(deps.clock.now());
  const error = forTenantsOrNull(outcome.error);
  const status = outcome.delivered ? "delivered" : outcome.final ? "failed" : "pending";
  await deps.sql.transaction(async (tx) => {
    const row = await tx.one<{ attempts: number }>("UPDATE webhook_deliveries SET attempts = attempts + 1 WHERE id = ? RETURNING attempts", [id]);
    if (!row) return;
    await tx.run(
      `INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (delivery_id, attempt) DO UPDATE SET attempted_at = excluded.attempted_at, status_code = excluded.status_code, error = excluded.error, duration_ms = excluded.duration_ms`,
      [id, row.attempts, now, outcome.statusCode, error, outcome.durationMs],
    );
    await tx.run(
      "UPDATE webhook_deliveries SET status = ?, last_status_code = ?, last_error = ?, updated_at = ?, delivered_at = coalesce(?, delivered_at), next_attempt_at = ? WHERE id = ?",
      [status, outcome.statusCode, error, now, status === "delivered" ? now : null, outcome.nextAttemptAt === null || status !== "pending" ? null : isoAt(outcome.nextAttemptAt), id],
    );
  });
}

/** A delivery that will not be sent (its receiver was disabled): failed, with the reason. */
export async function abandonDelivery(deps: WebhookDeps, id: string, why: string): Promise<void> {
  await deps.sql.run("UPDATE webhook_deliveries SET status = 'failed', last_error = ?, next_attempt_at = NULL, updated_at = ? WHERE id = ? AND status = 'pending'", [why, isoAt(deps.clock.now()), id]);
}

/** Re-seals secrets sealed with a previous key (after a key rotation); returns how many. */
export async function resealWebhookSecrets(deps: WebhookDeps): Promise<number> {
  let count = 0;
  for (const row of await deps.sql.all<{ id: string; secret: string }>("SELECT id, secret FROM webhooks")) {
    if (!deps.vault.isStale(row.secret)) continue;
    await deps.sql.run("UPDATE webhooks SET secret = ? WHERE id = ?", [deps.vault.encrypt(deps.vault.decrypt(row.secret)), row.id]);
    count += 1;
  }
  return count;
}
