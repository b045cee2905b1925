/**
 * Login throttling on top of the spec's per-IP request limits: the only writer of
 * `login_throttle`. Failed sign-ins are counted per account (by the address typed, whether or
 * not it exists, so a lockout reveals nothing) and per client IP. Past the threshold the subject
 * is locked for a while that doubles with each further failure, up to a cap. A success clears the
 * account's counter. Counters are in SQLite, not memory, so a restart does not reset a guesser.
 */
import type { Database } from "bun:sqlite";
import type { Clock } from "../clock.ts";

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
export function lockedFor(db: Database, clock: Clock, subject: string): number {
  const row = db.query<Row, [string]>("SELECT failures, window_start_ms, locked_until_ms FROM login_throttle WHERE subject = ?").get(subject);
  return row ? Math.max(0, row.locked_until_ms - clock.now()) : 0;
}

export function recordFailure(db: Database, clock: Clock, subject: string, rule: ThrottleRule): void {
  const now = clock.now();
  db.transaction(() => {
    const row = db.query<Row, [string]>("SELECT failures, window_start_ms, locked_until_ms FROM login_throttle WHERE subject = ?").get(subject);
    const fresh = !row || now - row.window_start_ms > rule.windowMs && row.locked_until_ms <= now;
    const failures = fresh ? 1 : row.failures + 1;
    const start = fresh ? now : row.window_start_ms;
    const over = failures - rule.failures;
    const locked = over >= 0 ? now + Math.min(rule.maxLockMs, rule.firstLockMs * 2 ** Math.min(over, 20)) : 0;
    db.query(
      `INSERT INTO login_throttle (subject, failures, window_start_ms, locked_until_ms) VALUES (?, ?, ?, ?)
       ON CONFLICT (subject) DO UPDATE SET failures = excluded.failures, window_start_ms = excluded.window_start_ms, locked_until_ms = excluded.locked_until_ms`,
    ).run(subject, failures, start, locked);
  }).immediate();
}

export function clearFailures(db: Database, subject: string): void {
  db.query("DELETE FROM login_throttle WHERE subject = ?").run(subject);
}

/** Drops counters whose window and lock are over (maintenance). */
export function pruneThrottle(db: Database, clock: Clock): number {
  const now = clock.now();
  return db.query("DELETE FROM login_throttle WHERE locked_until_ms < ? AND window_start_ms < ?").run(now, now - 3_600_000).changes;
}
