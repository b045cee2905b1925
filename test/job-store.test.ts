/**
 * The worker pool over the data-access port, on SQLite and on PostgreSQL alike (the runner's
 * finer semantics on SQLite are in jobs.test.ts): jobs complete, retry with backoff and fail for
 * good; two workers sharing the table (on PostgreSQL two connection pools, as two processes have)
 * run each of many jobs exactly once; a worker whose lease was taken over records nothing; a new
 * job wakes an idle worker at once (PostgreSQL LISTEN/NOTIFY across pools) rather than at its next
 * poll; leases of dead processes are released at start; a job abandoned on its final attempt
 * fails. The PostgreSQL half skips, saying why, where no server binary is found.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { join } from "node:path";
import { systemClock } from "../src/clock.ts";
import { openDatabase, type Database } from "../src/db/database.ts";
import { GroupCommit } from "../src/db/group-commit.ts";
import { openPostgres } from "../src/db/postgres-database.ts";
import type { PostgresClient } from "../src/db/postgres-client.ts";
import { JobStore, sqliteJobStore } from "../src/jobs/job-store.ts";
import type { JobRow } from "../src/jobs/queue.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import { JobRunner, PermanentJobError, type QueueDefinition } from "../src/jobs/runner.ts";
import { Logger } from "../src/log.ts";
import { waitFor } from "./support/polling.ts";
import { postgresOrSkip, startPostgres, type TestPostgres } from "./support/postgres.ts";
import { tempDir } from "./support/temp-dir.ts";

const log = new Logger("error");
const binaries = postgresOrSkip();

let sqliteDb: Database;
let pg: TestPostgres | null = null;
let pgUrl = "";
const pools: PostgresClient[] = [];

beforeAll(async () => {
  sqliteDb = openDatabase(join(tempDir("mediabox-job-store-"), "jobs.db"));
  if (binaries) {
    pg = await startPostgres(binaries);
    pgUrl = await pg.createDatabase("jobs");
    pools.push(await openPostgres(pgUrl, { max: 4 }), await openPostgres(pgUrl, { max: 4 }));
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.close()));
  await pg?.stop();
  sqliteDb?.close();
});

interface Engine {
  name: string;
  /** A store as process `n` (0 or 1) sees the table. */
  store: (n: number) => JobStore;
}

const sqliteStore = (() => {
  let store: JobStore | null = null;
  return () => (store ??= sqliteJobStore(sqliteDb, new GroupCommit(sqliteDb)));
})();

const engines: Engine[] = [{ name: "sqlite", store: () => sqliteStore() }];
if (binaries) engines.push({ name: "postgres", store: (n) => new JobStore(pools[n]!) });

describe.each(engines)("jobs on $name", ({ store }) => {
  const runners: JobRunner[] = [];

  function runner(queues: QueueDefinition<any>[], options: { n?: number; leaseMs?: number; pollMs?: number; workerId?: string } = {}): JobRunner {
    const r = new JobRunner(store(options.n ?? 0), systemClock, log, {
      leaseMs: options.leaseMs ?? 2_000,
      pollMs: options.pollMs ?? 20,
      ...(options.workerId ? { workerId: options.workerId } : {}),
    });
    for (const q of queues) r.register(q);
    runners.push(r);
    return r;
  }

  const status = (id: string, wanted: JobRow["status"]) =>
    waitFor(async () => {
      const row = await store(0).get(id);
      return row?.status === wanted ? row : null;
    }, { what: `job ${id} to become ${wanted}`, intervalMs: 10, maxIntervalMs: 100, timeoutMs: 30_000 });

  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.stop(1_000)));
    await store(0).client.run("DELETE FROM jobs");
  });

  test("organizations take turns: one with nothing running goes before another's older backlog; alone, an organization uses every slot", async () => {
    const jobs = store(0);
    const now = Date.now();
    for (const org of ["org-busy", "org-newcomer"]) {
      await jobs.client.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, 'CUSTOM', 'x') ON CONFLICT DO NOTHING", [org, org, org]);
    }
    const enqueue = (orgId: string, at: number) => jobs.enqueue({ queue: "t.turns", orgId, payload: {} }, now - 10_000 + at);
    const backlog: string[] = [];
    for (let i = 0; i < 5; i++) backlog.push((await enqueue("org-busy", i)).id);
    const newcomer = (await enqueue("org-newcomer", 100)).id;
    const claim = async (n: number) => (await jobs.claim("t.turns", "worker-turns", 60_000, n, false, now)).map((row) => row.id);
    expect(await claim(1)).toEqual([backlog[0]!]);
    // org-busy has a job running: the newcomer's later job goes before the backlog's next.
    expect(await claim(1)).toEqual([newcomer]);
    // Nobody else waits: the backlog takes every free slot, oldest first.
    expect(await claim(3)).toEqual(backlog.slice(1, 4));
  });

  test("a job completes with its results and progress 100; a failing one retries with backoff, then fails; a permanent failure does not retry", async () => {
    const attempts: number[] = [];
    const r = runner([
      { name: "t.ok", concurrency: 2, handler: async (ctx) => (ctx.progress(40), [{ doubled: (ctx.payload as { n: number }).n * 2 }]) },
      { name: "t.flaky", concurrency: 1, backoffMs: 40, handler: async (ctx) => { attempts.push(Date.now()); throw new Error(`boom ${ctx.attempt}`); } },
      { name: "t.bad", concurrency: 1, handler: async () => { throw new PermanentJobError("never"); } },
    ]);
    r.start();
    const ok = await r.submit({ queue: "t.ok", payload: { n: 21 } });
    const flaky = await r.submit({ queue: "t.flaky", payload: {}, maxAttempts: 3 });
    const bad = await r.submit({ queue: "t.bad", payload: {} });
    const done = await status(ok.id, "completed");
    expect(JSON.parse(done.results!)).toEqual([{ doubled: 42 }]);
    expect(done.progress).toBe(100);
    const failed = await status(flaky.id, "failed");
    expect(failed.attempts).toBe(3);
    expect(failed.error).toBe("boom 3");
    // Backoff doubles: 40 ms then 80 ms, each ±20 %.
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(31);
    expect(attempts[2]! - attempts[1]!).toBeGreaterThanOrEqual(63);
    const refused = await status(bad.id, "failed");
    expect(refused.attempts).toBe(1);
    // A dedupe key returns the active job.
    const first = await r.submit({ queue: "t.ok", payload: { n: 1 }, dedupeKey: "k", runAt: Date.now() + 60_000 });
    expect(await r.submit({ queue: "t.ok", payload: { n: 1 }, dedupeKey: "k" })).toEqual({ id: first.id, deduplicated: true });
  });

  test("two workers sharing the table run each of 60 jobs exactly once, both taking part", async () => {
    const ranBy = new Map<string, string[]>();
    const queue = (worker: string): QueueDefinition => ({
      name: "t.shared",
      concurrency: 4,
      handler: async (ctx) => {
        const id = (ctx.payload as { i: number }).i.toString();
        ranBy.set(id, [...(ranBy.get(id) ?? []), worker]);
        await Bun.sleep(5);
        return [];
      },
    });
    const a = runner([queue("a")], { n: 0 });
    const b = runner([queue("b")], { n: 1 });
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push((await store(0).enqueue({ queue: "t.shared", payload: { i } }, Date.now())).id);
    a.start();
    b.start();
    for (const id of ids) await status(id, "completed");
    expect(ranBy.size).toBe(60);
    expect([...ranBy.values()].every((workers) => workers.length === 1)).toBe(true);
    const byWorker = [...ranBy.values()].flat();
    expect(byWorker.filter((w) => w === "a").length).toBeGreaterThan(0);
    expect(byWorker.filter((w) => w === "b").length).toBeGreaterThan(0);
  });

  test("a new job wakes an idle worker at once, not at its next poll (another process enqueues it)", async () => {
    const r = runner(
      [
        { name: "t.warm", concurrency: 1, handler: async () => [] },
        { name: "t.wake", concurrency: 1, handler: async () => [{ woke: true }] },
      ],
      { n: 0, pollMs: 600_000 },
    );
    // Once a job of another queue has run, the worker's first poll (at start) is behind it: the
    // next looks at t.wake in ten minutes, unless something wakes it.
    const warm = await store(0).enqueue({ queue: "t.warm", payload: {} }, Date.now());
    r.start();
    await status(warm.id, "completed");
    const { id } = await store(1).enqueue({ queue: "t.wake", payload: {} }, Date.now());
    const row = await status(id, "completed");
    expect(JSON.parse(row.results!)).toEqual([{ woke: true }]);
  });

  test("a worker whose lease was taken over records nothing: its fenced writes and outcome are refused; the new owner's result stands", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const refusals: string[] = [];
    const slow = runner(
      [{
        name: "t.fence",
        concurrency: 1,
        handler: async (ctx) => {
          await held;
          await ctx.transaction(async () => null).catch((err: Error) => refusals.push(err.name));
          return [{ worker: "slow" }];
        },
      }],
      { n: 0, workerId: "worker-test-slow" },
    );
    slow.start();
    const { id } = await store(0).enqueue({ queue: "t.fence", payload: {} }, Date.now());
    await status(id, "processing");
    // Its lease lapses (as if it had stopped heartbeating) and another process takes the job over.
    await store(1).client.run("UPDATE jobs SET lease_expires_at = 0 WHERE id = ?", [id]);
    const fast = runner([{ name: "t.fence", concurrency: 1, handler: async () => [{ worker: "fast" }] }], { n: 1, workerId: "worker-test-fast" });
    fast.start();
    const done = await status(id, "completed");
    release();
    await waitFor(() => refusals.length > 0, { what: "the old owner's write to be refused" });
    expect(refusals).toEqual(["LeaseLostError"]);
    expect(JSON.parse(done.results!)).toEqual([{ worker: "fast" }]);
    expect((await store(0).get(id))!.attempts).toBe(2);
  });

  test("a handler's port transaction commits its writes and the job it enqueues together, only while it holds the lease", async () => {
    const db = store(0).client;
    await db.run("DELETE FROM upload_events");
    const insert = (tx: SqlClient, message: string) =>
      tx.run("INSERT INTO upload_events (event_type, message, source_ip, received_at) VALUES ('t', ?, '127.0.0.1', 'x')", [message]);
    let failOnce = true;
    const r: JobRunner = runner([
      {
        name: "t.parent",
        concurrency: 1,
        backoffMs: 10,
        handler: async (ctx) => {
          await ctx.transaction(async (tx) => {
            await insert(tx, `parent attempt ${ctx.attempt}`);
            await r.submit({ queue: "t.child", payload: { attempt: ctx.attempt } }, tx);
            // A failure after the writes takes them, and the child job, back.
            if (failOnce) throw new Error((failOnce = false, "after the writes"));
          });
          return [];
        },
      },
      { name: "t.child", concurrency: 1, handler: async (ctx) => [ctx.payload] },
    ]);
    r.start();
    const parent = await r.submit({ queue: "t.parent", payload: {} });
    await status(parent.id, "completed");
    const child = await waitFor(async () => (await db.one<JobRow>("SELECT * FROM jobs WHERE queue = 't.child' AND status = 'completed'")), { what: "the child job to run" });
    expect(JSON.parse(child.results!)).toEqual([{ attempt: 2 }]);
    expect((await db.one<{ n: number }>("SELECT count(*) AS n FROM jobs WHERE queue = 't.child'"))?.n).toBe(1);
    expect((await db.all<{ message: string }>("SELECT message FROM upload_events")).map((e) => e.message)).toEqual(["parent attempt 2"]);

    // A worker that lost its lease writes nothing.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const refused: string[] = [];
    const slow = runner([{
      name: "t.late",
      concurrency: 1,
      handler: async (ctx) => {
        await held;
        await ctx.transaction((tx) => insert(tx, "late")).catch((err: Error) => refused.push(err.name));
      },
    }], { workerId: "worker-test-late" });
    slow.start();
    const late = await slow.submit({ queue: "t.late", payload: {} });
    await status(late.id, "processing");
    await db.run("UPDATE jobs SET lease_owner = 'worker-someone-else', lease_expires_at = ? WHERE id = ?", [Date.now() + 60_000, late.id]);
    release();
    await waitFor(() => refused.length > 0, { what: "the late write to be refused" });
    expect(refused).toEqual(["LeaseLostError"]);
    expect(await db.one("SELECT 1 FROM upload_events WHERE message = 'late'")).toBeNull();
  });

  test("the job resource: an organization's jobs newest first (same-millisecond ties in insertion order), filtered, with their file; cancel; other organizations see nothing", async () => {
    const db = store(0);
    const at = Date.now() + 3_600_000; // not due: nothing runs them
    for (const org of ["org-1", "org-2"]) {
      await db.client.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, 'STARTER', 'x') ON CONFLICT DO NOTHING", [org, org, org]);
    }
    const ids: string[] = [];
    for (const [i, queue] of (["t.a", "t.b", "t.a", "t.a"] as const).entries()) {
      ids.push((await db.enqueue({ queue, orgId: "org-1", payload: { fileId: `file-${i}` }, runAt: at }, at)).id);
    }
    await db.enqueue({ queue: "t.a", orgId: "org-2", payload: {}, runAt: at }, at);
    const all = await db.listForOrg("org-1", {}, 10, 0);
    expect(all.total).toBe(4);
    expect(all.rows.map((r) => [r.job_id, r.file_id])).toEqual([...ids.map((id, i) => [id, `file-${i}`])].reverse());
    const paged = await db.listForOrg("org-1", { queue: "t.a" }, 2, 1);
    expect([paged.total, paged.rows.map((r) => r.job_id)]).toEqual([3, [ids[2]!, ids[0]!]]);
    expect((await db.viewForOrg("org-1", ids[1]!)).type).toBe("t.b");
    await expect(db.viewForOrg("org-2", ids[1]!)).rejects.toThrow(/not found/);
    // A pending job is cancelled at once; again, or from another organization, is refused.
    expect((await db.cancel("org-1", ids[0]!, Date.now())).status).toBe("cancelled");
    await expect(db.cancel("org-1", ids[0]!, Date.now())).rejects.toThrow(/already cancelled/);
    await expect(db.cancel("org-2", ids[1]!, Date.now())).rejects.toThrow(/not found/);
    expect((await db.listForOrg("org-1", { status: "cancelled" }, 10, 0)).rows.map((r) => r.job_id)).toEqual([ids[0]!]);
  });

  test("at start the leases of dead processes on this host are released; a job abandoned on its final attempt fails", async () => {
    const exited = Bun.spawn(["true"]);
    await exited.exited;
    const dead = `worker-${hostname()}-${exited.pid}-0123abcd`;
    const db = store(0);
    const resumed = (await db.enqueue({ queue: "t.orphan", payload: {} }, Date.now())).id;
    const final = (await db.enqueue({ queue: "t.orphan", payload: {}, maxAttempts: 1 }, Date.now())).id;
    await db.client.run("UPDATE jobs SET status = 'processing', attempts = 1, lease_owner = ?, lease_expires_at = ? WHERE id = ?", [dead, Date.now() + 600_000, resumed]);
    await db.client.run("UPDATE jobs SET status = 'processing', attempts = 1, lease_owner = ?, lease_expires_at = ? WHERE id = ?", ["worker-elsewhere-1-0123abcd", 1, final]);
    runner([{ name: "t.orphan", concurrency: 2, handler: async () => [] }]).start();
    expect((await status(resumed, "completed")).attempts).toBe(2);
    expect((await status(final, "failed")).error).toBe("worker stopped responding on the final attempt");
  });
});
