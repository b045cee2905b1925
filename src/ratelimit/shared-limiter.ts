/**
 * Rate limits that hold across processes sharing one database (docs/scale-out.md): each request
 * counts in the buckets' rows of the current one-minute window (rate_limit_windows) with one
 * upsert, so a key allowed 600 requests a minute gets 600 whichever api processes answer them.
 * Windows are aligned to the minute (all processes agree on them without talking). A request
 * counts even when refused, unlike the in-memory limiter: refused requests cannot extend a block
 * past its window, and it keeps the decision to one statement. The single-box appliance keeps the
 * in-memory limiter (limiter.ts), which writes nothing.
 */
import type { Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { BucketSpec, RateDecision, RateLimits } from "./limiter.ts";

export class SharedRateLimiter implements RateLimits {
  private lastPrune = 0;

  constructor(
    private readonly sql: SqlClient,
    private readonly clock: Clock,
    private readonly windowMs = 60_000,
  ) {}

  async take(buckets: BucketSpec[]): Promise<RateDecision> {
    const now = this.clock.now();
    const windowStart = now - (now % this.windowMs);
    const windowEnd = windowStart + this.windowMs;
    const limits = new Map<string, number>();
    for (const bucket of buckets) {
      if (bucket.limit === null) continue;
      limits.set(bucket.key, Math.min(bucket.limit, limits.get(bucket.key) ?? Infinity));
    }
    const resetAt = Math.ceil(windowEnd / 1000);
    if (limits.size === 0) return { allowed: true, limit: -1, remaining: -1, resetAt, retryAfter: 0 };
    this.prune(windowStart);
    const rows = await this.sql.all<{ bucket: string; count: number }>(
      `INSERT INTO rate_limit_windows (bucket, window_start, count)
       SELECT value, ?, 1 FROM (${this.sql.dialect.jsonValues}) AS buckets WHERE true
       ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_windows.count + 1
       RETURNING bucket, count`,
      [windowStart, JSON.stringify([...limits.keys()])],
    );
    let binding: { limit: number; count: number } | null = null;
    let blocked: { limit: number } | null = null;
    for (const row of rows) {
      const limit = limits.get(row.bucket)!;
      if (row.count > limit && (!blocked || limit < blocked.limit)) blocked = { limit };
      if (!binding || limit - row.count < binding.limit - binding.count) binding = { limit, count: row.count };
    }
    if (blocked) return { allowed: false, limit: blocked.limit, remaining: 0, resetAt, retryAfter: Math.max(1, Math.ceil((windowEnd - now) / 1000)) };
    return { allowed: true, limit: binding!.limit, remaining: Math.max(0, binding!.limit - binding!.count), resetAt, retryAfter: 0 };
  }

  /** Past windows go once a window, by whichever process notices first (a few rows a client). */
  private prune(windowStart: number): void {
    if (windowStart <= this.lastPrune) return;
    this.lastPrune = windowStart;
    this.sql.run("DELETE FROM rate_limit_windows WHERE window_start < ?", [windowStart]).catch(() => {
      this.lastPrune = 0;
    });
  }
}
