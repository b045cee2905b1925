/**
 * Rate limits shared by processes (ratelimit/shared-limiter.ts): two limiters over one database,
 * as two api processes, admit a key's limit between them per aligned one-minute window, the next
 * request is refused with the window's end, a new window forgives, and buckets without a limit
 * are not counted. Run on both databases (the appliance uses it on PostgreSQL).
 */
import { describe, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import { SharedRateLimiter } from "../src/ratelimit/shared-limiter.ts";
import { waitFor } from "./support/polling.ts";
import { portEngines } from "./support/port-engines.ts";

const { engines } = portEngines("shared_rate_limit", { connections: 4 });

describe.each(engines)("shared rate limits on $name", ({ name, client }) => {
  test("two processes share a key's limit; refused past it until the window ends; unlimited buckets are not counted", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 0, 1, 12, 0, 30)); // half way through a minute
    const [a, b] = [new SharedRateLimiter(db, clock), new SharedRateLimiter(db, clock)];
    const key = `key:${name}-${crypto.randomUUID()}`;
    const buckets = [{ key, limit: 10 }, { key: `ip:${name}`, limit: null }];
    // Ten requests at once, split over the two processes: all admitted, remaining counting down to 0.
    const first = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).take(buckets)));
    expect(first.every((d) => d.allowed)).toBe(true);
    expect(first.map((d) => d.remaining).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const refused = await a.take(buckets);
    expect(refused).toEqual({ allowed: false, limit: 10, remaining: 0, resetAt: Date.UTC(2031, 0, 1, 12, 1, 0) / 1000, retryAfter: 30 });
    expect((await b.take(buckets)).allowed).toBe(false);
    // The binding bucket is the one with the least room; a bucket with no limit is never written.
    expect(await db.all("SELECT bucket FROM rate_limit_windows WHERE bucket LIKE 'ip:%'")).toEqual([]);
    // The next minute forgives; the past window's row is pruned.
    clock.advance(30_000);
    const next = await b.take([{ key, limit: 10 }, { key: `${key}:uploads`, limit: 3 }]);
    expect(next).toMatchObject({ allowed: true, limit: 3, remaining: 2 });
    const windows = () => db.all<{ window_start: number }>("SELECT DISTINCT window_start FROM rate_limit_windows WHERE bucket LIKE ?", [`${key}%`]);
    await waitFor(async () => (await windows()).length === 1, { what: "the past window pruned", timeoutMs: 10_000 });
    expect(await windows()).toEqual([{ window_start: Date.UTC(2031, 0, 1, 12, 1, 0) }]);
  });
});
