/**
 * Monthly usage counters per organization (calendar month, UTC), read by the quota check and
 * written where the counted thing happens. "ai_descriptions" counts files queued for an AI
 * description (a reservation taken at upload).
 */
import type { Database } from "bun:sqlite";

export type UsageKind = "ai_descriptions" | "chat_messages";

export function period(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 7);
}

export function recordUsage(db: Database, orgId: string, kind: UsageKind, count: number, nowMs: number): void {
  if (count <= 0) return;
  db.query(
    `INSERT INTO usage_counters (org_id, period, kind, count) VALUES (?, ?, ?, ?)
     ON CONFLICT (org_id, period, kind) DO UPDATE SET count = count + excluded.count`,
  ).run(orgId, period(nowMs), kind, count);
}

export function usageThisMonth(db: Database, orgId: string, kind: UsageKind, nowMs: number): number {
  return (
    db.query<{ count: number }, [string, string, string]>("SELECT count FROM usage_counters WHERE org_id = ? AND period = ? AND kind = ?")
      .get(orgId, period(nowMs), kind)?.count ?? 0
  );
}

/** Gives back `count` reserved in the month of `reservedAtMs` (a reservation that was not used); never below zero. */
export function releaseUsage(db: Database, orgId: string, kind: UsageKind, count: number, reservedAtMs: number): void {
  if (count <= 0) return;
  db.query("UPDATE usage_counters SET count = max(0, count - ?) WHERE org_id = ? AND period = ? AND kind = ?").run(count, orgId, period(reservedAtMs), kind);
}
