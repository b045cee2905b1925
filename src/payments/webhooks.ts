/**
 * The payment provider's webhook: the only writer of `payment_events`. A delivery is believed
 * only with a valid signature: `Webhook-Signature: t=<unix seconds>,v1=<hex>` where v1 is
 * HMAC-SHA256 of `<t>.<raw body>` under the configured secret (Stripe's scheme, so its
 * `Stripe-Signature` header is read too). The timestamp must be within the tolerance window (a
 * captured delivery cannot be replayed later) and the comparison is constant-time. Events are
 * idempotent by (provider, event id): a redelivery is acknowledged and changes nothing.
 * A subscription event moves the organization it names to its tier.
 */
import type { SqlClient } from "../db/sql-client.ts";
import { createHmac, timingSafeEqual } from "node:crypto";
import { isoAt, type Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { setOrganizationTier } from "../tenancy/organizations.ts";
import { TIERS, type Tier } from "../tenancy/tiers.ts";

export interface WebhookEvent {
  id: string;
  type: string;
  /** Unix seconds the provider created the event (orders subscription changes). */
  created: number;
  data: { organization_id?: string; tier?: string; status?: string };
}

export type WebhookOutcome = "tier_changed" | "ignored" | "unknown_organization" | "stale" | "duplicate";

function invalidSignature(why: string): ApiError {
  return new ApiError("WEBHOOK_SIGNATURE_INVALID", `webhook signature refused: ${why}`);
}

export function signPayload(secret: string, timestamp: number, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

/** Throws WEBHOOK_SIGNATURE_INVALID unless `header` signs `body` under `secret` within the tolerance. */
export function verifySignature(header: string | null, body: string, secret: string, nowMs: number, toleranceSeconds: number): void {
  if (!header) throw invalidSignature("the Webhook-Signature header is missing");
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const [k, v] = part.trim().split("=", 2);
    if (k === "t" && v && /^\d{1,12}$/.test(v)) timestamp = Number(v);
    else if (k === "v1" && v && /^[0-9a-f]{64}$/i.test(v)) signatures.push(v.toLowerCase());
  }
  if (timestamp === null || signatures.length === 0) throw invalidSignature("expected t=<unix seconds>,v1=<hex HMAC-SHA256>");
  if (Math.abs(nowMs / 1000 - timestamp) > toleranceSeconds) throw invalidSignature(`the timestamp is more than ${toleranceSeconds} s away from now`);
  const expected = Buffer.from(signPayload(secret, timestamp, body), "hex");
  // Every candidate is compared (several v1 values exist while a provider rotates its secret).
  let matched = false;
  for (const signature of signatures) matched = timingSafeEqual(expected, Buffer.from(signature, "hex")) || matched;
  if (!matched) throw invalidSignature("no v1 signature matches the body");
}

export function parseEvent(body: string): WebhookEvent {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new ApiError("VALIDATION_ERROR", "invalid body: not JSON");
  }
  const event = value as Partial<WebhookEvent> | null;
  if (!event || typeof event !== "object") throw new ApiError("VALIDATION_ERROR", "invalid body: expected an object");
  if (typeof event.id !== "string" || !event.id || event.id.length > 200) throw new ApiError("VALIDATION_ERROR", "invalid body: id: is required (a string of at most 200 characters)");
  if (typeof event.type !== "string" || !event.type) throw new ApiError("VALIDATION_ERROR", "invalid body: type: is required");
  if (typeof event.created !== "number") throw new ApiError("VALIDATION_ERROR", "invalid body: created: is required (unix seconds)");
  const data = event.data && typeof event.data === "object" ? event.data : {};
  return { id: event.id, type: event.type, created: event.created, data };
}

/** The tier a subscription event asks for, or null when the event is not about the subscription. */
function requestedTier(event: WebhookEvent): Tier | null {
  if (event.type === "subscription.deleted") return "FREE";
  if (event.type !== "subscription.created" && event.type !== "subscription.updated") return null;
  // A subscription that lapsed (canceled, unpaid) falls back to FREE.
  if (event.data.status && !["active", "trialing", "past_due"].includes(event.data.status)) return "FREE";
  const tier = String(event.data.tier ?? "").toUpperCase();
  if (!(TIERS as readonly string[]).includes(tier)) throw new ApiError("VALIDATION_ERROR", `invalid body: data.tier: must be one of ${TIERS.join(", ")}`);
  return tier as Tier;
}

/** Records the event once and applies it; a redelivery answers "duplicate" and does nothing. */
export function applyEvent(db: SqlClient, clock: Clock, provider: string, event: WebhookEvent, payload: string): Promise<WebhookOutcome> {
  const tier = requestedTier(event);
  return db.transaction(async (tx): Promise<WebhookOutcome> => {
    // Concurrent deliveries of one organization's events (several processes) apply one at a time.
    const orgId = event.data.organization_id ?? null;
    const org = orgId ? await tx.one<{ name: string }>(`SELECT name FROM organizations WHERE id = ? ${tx.dialect.forUpdate}`, [orgId]) : null;
    const seen = (await tx.one<{ n: number }>("SELECT count(*) AS n FROM payment_events WHERE provider = ? AND event_id = ?", [provider, event.id]))!.n;
    if (seen) return "duplicate";
    let outcome: WebhookOutcome;
    if (tier === null) outcome = "ignored";
    else if (!org) outcome = "unknown_organization";
    else {
      // Providers do not promise order: an older subscription event never undoes a newer one.
      const newer = (await tx.one<{ n: number }>(
        `SELECT count(*) AS n FROM payment_events WHERE provider = ? AND org_id = ? AND outcome = 'tier_changed'
         AND ${tx.dialect.jsonNumber("payload", "created")} > ?`,
        [provider, orgId!, event.created],
      ))!.n;
      if (newer) outcome = "stale";
      else {
        await setOrganizationTier(tx, org.name, tier);
        outcome = "tier_changed";
      }
    }
    await tx.run("INSERT INTO payment_events (provider, event_id, type, org_id, payload, outcome, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)", [
      provider, event.id, event.type, orgId, payload, outcome, isoAt(clock.now()),
    ]);
    return outcome;
  });
}
