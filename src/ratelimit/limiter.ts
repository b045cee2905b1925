/**
 * Fixed one-minute windows counted in memory. On the single-box appliance rate limits protect one
 * process, so they need no persistence: a restart forgives everyone, which is harmless. Processes
 * sharing a PostgreSQL database count in it instead (shared-limiter.ts).
 */
import type { Clock } from "../clock.ts";

export interface BucketSpec {
  /** Identity of the counter, e.g. `key:<id>` or `ip:<address>`. */
  key: string;
  /** Requests allowed per window; null = unlimited (not counted). */
  limit: number | null;
}

export interface RateDecision {
  allowed: boolean;
  /** The binding bucket's limit; -1 when every bucket is unlimited. */
  limit: number;
  remaining: number;
  /** Unix seconds when the binding bucket's window ends. */
  resetAt: number;
  /** Seconds to wait (only when not allowed). */
  retryAfter: number;
}

/** What the request guard asks of a limiter: in memory (one process) or shared through the database (shared-limiter.ts). */
export interface RateLimits {
  /** Admits the request only if every bucket has room, and counts it. */
  take(buckets: BucketSpec[]): RateDecision | Promise<RateDecision>;
}

interface Window {
  start: number;
  count: number;
}

export class RateLimiter implements RateLimits {
  private readonly windows = new Map<string, Window>();
  private lastSweep = 0;

  constructor(
    private readonly clock: Clock,
    private readonly windowMs = 60_000,
  ) {}

  /** Admits the request only if every bucket has room, then counts it in all of them. */
  take(buckets: BucketSpec[]): RateDecision {
    const now = this.clock.now();
    this.sweep(now);
    let binding: { window: Window; limit: number } | null = null;
    let blocked: { window: Window; limit: number } | null = null;
    const counted: Window[] = [];
    for (const bucket of buckets) {
      if (bucket.limit === null) continue;
      const window = this.current(bucket.key, now);
      counted.push(window);
      const state = { window, limit: bucket.limit };
      if (window.count >= bucket.limit) {
        if (!blocked || window.start + this.windowMs > blocked.window.start + this.windowMs) blocked = state;
      }
      if (!binding || bucket.limit - window.count < binding.limit - binding.window.count) binding = state;
    }
    if (blocked) {
      const resetMs = blocked.window.start + this.windowMs;
      return {
        allowed: false,
        limit: blocked.limit,
        remaining: 0,
        resetAt: Math.ceil(resetMs / 1000),
        retryAfter: Math.max(1, Math.ceil((resetMs - now) / 1000)),
      };
    }
    for (const window of counted) window.count += 1;
    if (!binding) {
      return { allowed: true, limit: -1, remaining: -1, resetAt: Math.ceil((now + this.windowMs) / 1000), retryAfter: 0 };
    }
    return {
      allowed: true,
      limit: binding.limit,
      remaining: Math.max(0, binding.limit - binding.window.count),
      resetAt: Math.ceil((binding.window.start + this.windowMs) / 1000),
      retryAfter: 0,
    };
  }

  private current(key: string, now: number): Window {
    let window = this.windows.get(key);
    if (!window || now >= window.start + this.windowMs) {
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    return window;
  }

  /** Drops expired windows so memory stays bounded by the clients seen in the last minute. */
  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [key, window] of this.windows) {
      if (now >= window.start + this.windowMs) this.windows.delete(key);
    }
  }
}
