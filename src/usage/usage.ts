/**
 * Monthly usage counters per organization (calendar month, UTC), read by the quota check and
 * written where the counted thing happens, on the data-access port: inside the caller's
 * transaction when given its `tx`. "ai_descriptions" counts files queued for an AI description (a
 * reservation taken at upload, in the transaction that records the file).
 */
import type { SqlClient } from "../db/sql-client.ts";

export type UsageKind = "ai_descriptions" | "chat_messages";

export function period(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 7);
}

export async function recordUsage(db: SqlClient, orgId: string, kind: UsageKind, count: number, nowMs: number): Promise<void> {
  if (count <= 0) return;
  await db.run(
    `INSERT INTO usage_counters (org_id, period, kind, count) VALUES (?, ?, ?, ?)
     ON CONFLICT (org_id, period, kind) DO UPDATE SET count = usage_counters.count + excluded.count`,
    [orgId, period(nowMs), kind, count],
  );
}

/**
 * Takes `count` of this month's `limit` (none: no limit) when that many are left; false, taking
 * nothing, otherwise. One conditional upsert: on PostgreSQL the counter's row is locked by the
 * first of two reservations at once and the second's condition is checked against what the first
 * committed (a new month's row is inserted by one, the other then takes the update path), so two
 * uploads never both take the last credit; SQLite has one writer at a time.
 */
export async function reserveUsage(db: SqlClient, orgId: string, kind: UsageKind, count: number, limit: number | null, nowMs: number): Promise<boolean> {
  if (limit === null) return (await recordUsage(db, orgId, kind, count, nowMs), true);
  if (count <= 0) return true;
  if (count > limit) return false;
  const taken = await db.one<{ count: number }>(
    `INSERT INTO usage_counters (org_id, period, kind, count) VALUES (?, ?, ?, ?)
     ON CONFLICT (org_id, period, kind) DO UPDATE SET count = usage_counters.count + excluded.count
     WHERE usage_counters.count + excluded.count <= ?
     RETURNING count`,
    [orgId, period(nowMs), kind, count, limit],
  );
  return taken !== null;
}

export async function usageThisMonth(db: SqlClient, orgId: string, kind: UsageKind, nowMs: number): Promise<number> {
  const row = await db.one<{ count: number }>("SELECT count FROM usage_counters WHERE org_id = ? AND period = ? AND kind = ?", [orgId, period(nowMs), kind]);
  return row?.count ?? 0;
}

/** Gives back `count` reserved in the month of `reservedAtMs` (a reservation that was not used); never below zero. */
export async function releaseUsage(db: SqlClient, orgId: string, kind: UsageKind, count: number, reservedAtMs: number): Promise<void> {
  if (count <= 0) return;
  await db.run(
    "UPDATE usage_counters SET count = CASE WHEN count > ? THEN count - ? ELSE 0 END WHERE org_id = ? AND period = ? AND kind = ?",
    [count, count, orgId, period(reservedAtMs), kind],
  );
}
