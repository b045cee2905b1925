/**
 * Limits counted in the database through slot leases (db/slot-leases.ts), as processes sharing
 * one count them: concurrent uploads per organization (ingest/shared-upload-slots.ts) and the
 * crawler's fetches per organization and host (db/leased-limiter.ts). Two pools over one database
 * stand for two processes. Runs on the run's engine (SQLite, PostgreSQL).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import { ApiError } from "../src/errors.ts";
import { SlotLeases } from "../src/db/slot-leases.ts";
import { SharedUploadSlots } from "../src/ingest/shared-upload-slots.ts";
import { LeasedLimiter } from "../src/db/leased-limiter.ts";
import { waitFor } from "./support/polling.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** An upload that runs until `finish()` is called. */
function pendingUpload() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { work: () => done, finish };
}

async function refusal(promise: Promise<unknown>): Promise<ApiError | null> {
  return promise.then(() => null, (err: unknown) => (err instanceof ApiError ? err : Promise.reject(err)));
}

const leases = async (orgId: string) => Number((await server.ctx.sql.one<{ n: number | string }>("SELECT count(*) AS n FROM slot_leases WHERE scope = ?", [`upload ${orgId}`]))!.n);

test("two processes share the tier's limit: the 11th FREE upload is refused by either, and a finished one frees a slot", async () => {
  const { orgId } = await server.tenant();
  const clock = new ManualClock(Date.now());
  const [a, b] = [new SharedUploadSlots(new SlotLeases(server.ctx.sql, clock)), new SharedUploadSlots(new SlotLeases(server.ctx.sql, clock))];
  const owner = { orgId, tier: "FREE" as const };
  const uploads = Array.from({ length: 10 }, pendingUpload);
  // Taken at once, five through each process: the transaction lock lets exactly ten in.
  const held = uploads.map((u, i) => (i % 2 ? a : b).hold(owner, u.work));
  await waitFor(async () => (await leases(orgId)) === 10, { what: "the ten uploads' leases" });
  for (const pool of [a, b]) {
    const refused = await refusal(pool.hold(owner, async () => "never"));
    expect(refused?.code).toBe("UPLOAD_BACKPRESSURE");
    expect(refused?.message).toBe("10 uploads are already in progress for this organization (the FREE limit is 10); retry shortly");
    expect(refused?.headers).toEqual({ "retry-after": "2" });
  }
  // Another organization is not held back.
  expect(await b.hold({ orgId: (await server.tenant()).orgId, tier: "FREE" }, async () => "other")).toBe("other");
  uploads[3]!.finish();
  await held[3];
  expect(await leases(orgId)).toBe(9);
  expect(await a.hold(owner, async () => "after")).toBe("after");
  for (const u of uploads) u.finish();
  await Promise.all(held);
  expect(await leases(orgId)).toBe(0);
});

test("a process that dies mid-upload frees its slots once their leases lapse; a live holder keeps its lease fresh", async () => {
  const { orgId } = await server.tenant();
  const clock = new ManualClock(Date.now());
  const times = { leaseMs: 60_000, refreshEveryMs: 20 };
  const survivor = new SharedUploadSlots(new SlotLeases(server.ctx.sql, clock, times));
  const owner = { orgId, tier: "FREE" as const };
  // Nine leases a dead process left behind, and one live upload of the survivor's.
  for (let i = 0; i < 9; i++) await server.ctx.sql.run("INSERT INTO slot_leases (id, scope, expires_at) VALUES (?, ?, ?)", [crypto.randomUUID(), `upload ${orgId}`, clock.now() + times.leaseMs]);
  const live = pendingUpload();
  const holding = survivor.hold(owner, live.work);
  await waitFor(async () => (await leases(orgId)) === 10, { what: "the live upload's lease" });
  expect((await refusal(survivor.hold(owner, async () => 0)))?.code).toBe("UPLOAD_BACKPRESSURE");
  // Past the dead leases' lapse; the live one is refreshed from the moved clock.
  clock.advance(times.leaseMs + 1);
  const fresh = () => new SlotLeases(server.ctx.sql, clock).inUse(`upload ${orgId}`);
  await waitFor(async () => (await fresh()) === 1, { what: "the live upload's lease refreshed past the moved clock" });
  expect(await survivor.hold(owner, async () => "taken")).toBe("taken");
  // The dead process's rows went with that take; the live upload's stays until it ends.
  expect(await leases(orgId)).toBe(1);
  live.finish();
  await holding;
  expect(await leases(orgId)).toBe(0);
});

test("an unlimited tier takes no slot", async () => {
  const { orgId } = await server.tenant();
  const pool = new SharedUploadSlots(new SlotLeases(server.ctx.sql, new ManualClock(Date.now())));
  expect(await pool.hold({ orgId, tier: "CUSTOM" }, async () => leases(orgId))).toBe(0);
});

test("the crawler's politeness across processes: two limiters over one database run at most N fetches of a host at once, and queue the rest", async () => {
  const clock = new ManualClock(Date.now());
  const [a, b] = [new LeasedLimiter(new SlotLeases(server.ctx.sql, clock), 2, (k) => `link ${k}`), new LeasedLimiter(new SlotLeases(server.ctx.sql, clock), 2, (k) => `link ${k}`)];
  const key = `${crypto.randomUUID()} example.org`;
  let running = 0;
  let most = 0;
  const fetches = Array.from({ length: 4 }, pendingUpload);
  const started: number[] = [];
  const runs = fetches.map((f, i) =>
    (i % 2 ? a : b).run(key, async () => {
      running++;
      most = Math.max(most, running);
      started.push(i);
      await f.work();
      running--;
      return i;
    }),
  );
  await waitFor(() => started.length === 2, { what: "two fetches to start" });
  // Two run (one per process or both in one); the others wait for a slot, not refused.
  expect(running).toBe(2);
  const first = started.slice();
  for (const i of first) fetches[i]!.finish();
  await waitFor(() => started.length === 4, { what: "the waiting fetches to start once slots are free" });
  for (const f of fetches) f.finish();
  expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
  expect(most).toBe(2);
  // Every slot is freed once the fetches end.
  expect(await new SlotLeases(server.ctx.sql, clock).inUse(`link ${key}`)).toBe(0);
});
