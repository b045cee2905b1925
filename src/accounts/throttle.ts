/**
 * Login throttling on top of the spec's per-IP request limits: the only writer of
 * `login_throttle`. Failed sign-ins are counted per account (by the address typed, whether or
 * not it exists, so a lockout reveals nothing) and per client IP. Past the threshold the subject
 * is locked for a while that doubles with each further failure, up to a cap. A success clears the
 * account's counter. Counters are in the database, not memory, so a restart (or another process)
 * does not reset a guesser. On the data-access port (docs/scale-out.md).
 */
import type { Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";

interface ThrottleRule {
  /** Failures in the window that lock the subject. */
  failures: number;
  windowMs: number;
  firstLockMs: number;
  maxLockMs: number;
}

/** Per account: the 5th failure locks for 1 minute, each further one doubles it, up to 1 hour. */
export const ACCOUNT_RULE: ThrottleRule = { failures: 5, windowMs: 15 * 60_000, firstLockMs: 60_000, maxLockMs: 3_600_000 };
/** Per IP: the 30th failure (an office behind one NAT) locks for 5 minutes, doubling up to 1 hour. */
export const IP_RULE: ThrottleRule = { failures: 30, windowMs: 15 * 60_000, firstLockMs: 5 * 60_000, maxLockMs: 3_600_000 };

interface Row {
  failures: number;
  window_start_ms: number;
  locked_until_ms: number;
}

/** Milliseconds until the subject may try again; 0 when it may try now. */
export async function lockedFor(db: SqlClient, clock: Clock, subject: string): Promise<number> {
  const row = await db.one<Row>("SELECT failures, window_start_ms, locked_until_ms FROM login_throttle WHERE subject = ?", [subject]);
  return row ? Math.max(0, row.locked_until_ms - clock.now()) : 0;
}

export function recordFailure(db: SqlClient, clock: Clock, subject: string, rule: ThrottleRule): Promise<void> {
  const now = clock.now();
  return db.transaction(async (tx) => {
    // Locked, so two processes counting one subject's failures at once both count.
    const row = await tx.one<Row>(`SELECT failures, window_start_ms, locked_until_ms FROM login_throttle WHERE subject = ? ${tx.dialect.forUpdate}`, [subject]);
    const fresh = !row || now - row.window_start_ms > rule.windowMs && row.locked_until_ms <= now;
    const failures = fresh ? 1 : row.failures + 1;
    const start = fresh ? now : row.window_start_ms;
    const over = failures - rule.failures;
    const locked = over >= 0 ? now + Math.min(rule.maxLockMs, rule.firstLockMs * 2 ** Math.min(over, 20)) : 0;
    await tx.run(
      `INSERT INTO login_throttle (subject, failures, window_start_ms, locked_until_ms) VALUES (?, ?, ?, ?)
       ON CONFLICT (subject) DO UPDATE SET failures = excluded.failures, window_start_ms = excluded.window_start_ms, locked_until_ms = excluded.locked_until_ms`,
      [subject, failures, start, locked],
    );
  });
}

export async function clearFailures(db: SqlClient, subject: string): Promise<void> {
  await db.run("DELETE FROM login_throttle WHERE subject = ?", [subject]);
}

/** Drops counters whose window and lock are over (maintenance). */
export async function pruneThrottle(db: SqlClient, clock: Clock): Promise<number> {
  const now = clock.now();
  return (await db.run("DELETE FROM login_throttle WHERE locked_until_ms < ? AND window_start_ms < ?", [now, now - 3_600_000])).changes;
}
