/**
 * The durable job scheduler: runner semantics against a real SQLite file (completion, progress,
 * retries with backoff, permanent failures, concurrency, cancellation, timeouts, dedupe,
 * transactional enqueue, lease fencing between two workers, graceful hand-back) and the job
 * resource over HTTP. The kill -9 case with a real child process is in job-crash.test.ts.
 */
import type { Database } from "bun:sqlite";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { ManualClock, systemClock } from "../src/clock.ts";
import { openDatabase } from "../src/db/database.ts";
import { GroupCommit } from "../src/db/group-commit.ts";
import type { JobRow } from "../src/jobs/queue.ts";
import type { EnqueueOptions } from "../src/jobs/queue.ts";
import { JobRunner, PermanentJobError, type QueueDefinition } from "../src/jobs/runner.ts";
import { JobStore, sqliteJobStore } from "../src/jobs/job-store.ts";
import { SqliteClient } from "../src/db/sqlite-client.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import type { Clock } from "../src/clock.ts";
import { jobRow } from "./support/job-rows.ts";
import { BackgroundWork } from "../src/jobs/background-work.ts";
import { unlessAborted } from "../src/abort.ts";
import { Logger } from "../src/log.ts";
import { waitFor } from "./support/polling.ts";
import { startTestServer, tempDir, type TestServer } from "./support/server.ts";
import { insertTenantRows } from "./support/rows.ts";

const log = new Logger("error");

/** Inserts a job through the job store (committed when it resolves: no group commit here). */
function enqueueJob(sql: SqlClient, clock: Clock, options: EnqueueOptions): Promise<{ id: string; deduplicated: boolean }> {
  return new JobStore(sql).enqueue(options, clock.now());
}

/** Waits for a condition on the local database (cheap to probe, so probed often). */
function until<T>(probe: () => T | Promise<T>, what: string): Promise<NonNullable<T>> {
  return waitFor(probe, { what, intervalMs: 10, maxIntervalMs: 100 });
}

function waitForStatus(sql: SqlClient, id: string, status: JobRow["status"]): Promise<JobRow> {
  return until(async () => {
    const row = await jobRow(sql, id);
    return row?.status === status ? row : null;
  }, `job ${id} to become ${status}`);
}

/** The payload of the no-op jobs `caughtUp` enqueues; the handlers here return at once for them. */
const SENTINEL = { sentinel: true };
const isSentinel = (payload: unknown) => (payload as { sentinel?: boolean } | null)?.sentinel === true;

/**
 * Resolves once a runner has claimed and finished a no-op job of `queue` due `inMs` from now. The
 * runner claims due jobs in run_at order, so every job of the queue that was due before it has had
 * its turn: "it did not run" is then an observation, not a guess about how long to sleep.
 */
async function caughtUp(sql: SqlClient, queue: `t.${string}`, inMs = 0): Promise<void> {
  const { id } = await enqueueJob(sql, systemClock, { queue, payload: SENTINEL, runAt: Date.now() + inMs });
  await waitForStatus(sql, id, "completed");
}

/** Rejects when the signal aborts, so handlers can "work" until told to stop. */
const untilAborted = (signal: AbortSignal): Promise<never> => unlessAborted(new Promise<never>(() => {}), signal);

describe("job runner", () => {
  let dir: string;
  let db: Database;
  /** The port over the same handle, for the job store and the row fixtures. */
  let sql: SqlClient;
  const runners: JobRunner[] = [];
  /** Cancels through the job table as the job resource does (no runner of this process involved). */
  const cancelJob = (orgId: string, id: string) => sqliteJobStore(db, new GroupCommit(db)).cancel(orgId, id, Date.now());

  function runner(queues: QueueDefinition<any>[], options: { leaseMs?: number; workerId?: string } = {}): JobRunner {
    const r = new JobRunner(sqliteJobStore(db, new GroupCommit(db)), systemClock, log, { leaseMs: options.leaseMs ?? 2_000, pollMs: 20, ...(options.workerId ? { workerId: options.workerId } : {}) });
    for (const q of queues) r.register(q);
    runners.push(r);
    return r;
  }

  beforeAll(() => {
    dir = tempDir("mediabox-jobs-");
    db = openDatabase(join(dir, "jobs.db"));
    sql = new SqliteClient(db);
  });
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.stop(1_000)));
    db.run("DELETE FROM jobs");
  });
  afterAll(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("progress is written at most every 250 ms of the clock, with the turn's shared commit (the end writes 100)", async () => {
    const clock = new ManualClock();
    const seen: number[] = [];
    const r = new JobRunner(sqliteJobStore(db, new GroupCommit(db)), clock, log, { leaseMs: 60_000, pollMs: 20 });
    runners.push(r);
    r.register({
      name: "t.progress",
      concurrency: 1,
      handler: async (ctx) => {
        // Shared writes commit in the order they were queued: once this one has, so has the progress before it.
        const committed = async () => (await ctx.transaction(async () => null), (await jobRow(sql, ctx.jobId))!.progress);
        ctx.progress(10);
        ctx.progress(20);
        seen.push(await committed());
        clock.advance(250);
        ctx.progress(10); // the figure last written: nothing to write
        ctx.progress(30);
        seen.push(await committed());
        ctx.progress(40);
        seen.push(await committed());
      },
    });
    r.start();
    const { id } = await enqueueJob(sql, clock, { queue: "t.progress", payload: {} });
    expect((await waitForStatus(sql, id, "completed")).progress).toBe(100);
    expect(seen).toEqual([10, 30, 30]);
  });

  test("a failing job retries with growing backoff and fails after max_attempts", async () => {
    const attemptsAt: number[] = [];
    const r = runner([
      {
        name: "t.flaky",
        concurrency: 1,
        backoffMs: 60,
        handler: async (ctx) => {
          attemptsAt.push(Date.now());
          throw new Error(`boom on attempt ${ctx.attempt}`);
        },
      },
    ]);
    r.start();
    const { id } = await enqueueJob(sql, systemClock, { queue: "t.flaky", maxAttempts: 3 });
    const row = await waitForStatus(sql, id, "failed");
    expect(row.attempts).toBe(3);
    expect(row.error).toBe("boom on attempt 3");
    expect(attemptsAt).toHaveLength(3);
    // Backoff doubles: ~60 ms then ~120 ms (±20% jitter).
    expect(attemptsAt[1]! - attemptsAt[0]!).toBeGreaterThanOrEqual(45);
    expect(attemptsAt[2]! - attemptsAt[1]!).toBeGreaterThanOrEqual(90);
  });

  test("a job that fails once and then succeeds ends completed on attempt 2", async () => {
    const r = runner([
      {
        name: "t.recovers",
        concurrency: 1,
        backoffMs: 10,
        handler: async (ctx) => {
          if (ctx.attempt === 1) throw new Error("transient");
          return [{ attempt: ctx.attempt }];
        },
      },
    ]);
    r.start();
    const { id } = await enqueueJob(sql, systemClock, { queue: "t.recovers" });
    const row = await waitForStatus(sql, id, "completed");
    expect(row.attempts).toBe(2);
    expect(JSON.parse(row.results!)).toEqual([{ attempt: 2 }]);
  });

  test("PermanentJobError fails the job without retrying", async () => {
    let calls = 0;
    const r = runner([
      {
        name: "t.permanent",
        concurrency: 1,
        backoffMs: 10,
        handler: async (ctx) => {
          if (isSentinel(ctx.payload)) return [];
          calls += 1;
          throw new PermanentJobError("input can never work");
        },
      },
    ]);
    r.start();
    const { id } = await enqueueJob(sql, systemClock, { queue: "t.permanent", maxAttempts: 5 });
    const row = await waitForStatus(sql, id, "failed");
    // A retry would be due ~10 ms later (backoffMs): the runner has passed that point.
    await caughtUp(sql, "t.permanent", 100);
    expect(calls).toBe(1);
    expect(row.attempts).toBe(1);
    expect(row.error).toBe("input can never work");
  });

  test("never runs more jobs of a queue at once than its concurrency", async () => {
    let active = 0;
    let peak = 0;
    const r = runner([
      {
        name: "t.concurrent",
        concurrency: 2,
        handler: async () => {
          active += 1;
          peak = Math.max(peak, active);
          await Bun.sleep(40);
          active -= 1;
        },
      },
    ]);
    const ids = await Promise.all(Array.from({ length: 6 }, async () => (await enqueueJob(sql, systemClock, { queue: "t.concurrent" })).id));
    r.start();
    for (const id of ids) await waitForStatus(sql, id, "completed");
    expect(peak).toBe(2);
  });

  test("one turn of the event loop starts at most four jobs; the queue's other slots fill on the next turns", async () => {
    // Jobs started in the same turn see the same value of `turn` (bumped by a macrotask).
    let turn = 0;
    const ticker = setInterval(() => (turn += 1), 0);
    const startedIn: number[] = [];
    const release = Promise.withResolvers<void>();
    const r = runner([
      {
        name: "t.burst",
        concurrency: 10,
        handler: async () => {
          startedIn.push(turn);
          await release.promise;
        },
      },
    ]);
    await Promise.all(Array.from({ length: 10 }, () => enqueueJob(sql, systemClock, { queue: "t.burst" })));
    r.start();
    await until(() => startedIn.length === 10 || null, "all ten jobs to run side by side");
    release.resolve();
    clearInterval(ticker);
    const perTurn = [...new Set(startedIn)].map((t) => startedIn.filter((s) => s === t).length);
    expect(Math.max(...perTurn)).toBe(4);
    expect(perTurn.length).toBeGreaterThanOrEqual(3);
  });

  test("a job is not started before its run_at", async () => {
    let startedAt = 0;
    const r = runner([{ name: "t.delayed", concurrency: 1, handler: async () => void (startedAt = Date.now()) }]);
    r.start();
    const runAt = Date.now() + 250;
    const { id } = await enqueueJob(sql, systemClock, { queue: "t.delayed", runAt });
    await waitForStatus(sql, id, "completed");
    expect(startedAt).toBeGreaterThanOrEqual(runAt);
  });

  test("a background queue's jobs wait while foreground work runs; other queues' do not", async () => {
    const background = new BackgroundWork();
    const ran: string[] = [];
    const r = new JobRunner(sqliteJobStore(db, new GroupCommit(db)), systemClock, log, { leaseMs: 2_000, pollMs: 20, background });
    r.register({ name: "t.reembed", concurrency: 1, background: true, handler: async () => void ran.push("reembed") });
    r.register({ name: "t.upload", concurrency: 1, handler: async () => void ran.push("upload") });
    runners.push(r);
    r.start();
    const analysing = background.foreground();
    const later = await enqueueJob(sql, systemClock, { queue: "t.reembed" });
    r.wake("t.reembed");
    const now = await enqueueJob(sql, systemClock, { queue: "t.upload" });
    await waitForStatus(sql, now.id, "completed");
    await Bun.sleep(200); // ten polls
    expect((await jobRow(sql, later.id))!.status).toBe("pending");
    analysing();
    await waitForStatus(sql, later.id, "completed");
    expect(ran).toEqual(["upload", "reembed"]);
  });

  test("cancelling a pending job cancels it at once; it never runs", async () => {
    const org = await insertOrg(sql);
    let ran = false;
    const { id } = await enqueueJob(sql, systemClock, { queue: "t.cancel-pending", orgId: org, runAt: Date.now() + 60_000 });
    const view = await cancelJob(org, id);
    expect(view.status).toBe("cancelled");
    const r = runner([{ name: "t.cancel-pending", concurrency: 1, handler: async (ctx) => void (ran ||= !isSentinel(ctx.payload)) }]);
    r.start();
    await caughtUp(sql, "t.cancel-pending");
    expect(ran).toBe(false);
    expect((await jobRow(sql, id))!.status).toBe("cancelled");
    await expect(cancelJob(org, id)).rejects.toThrow(/already cancelled/);
  });

  test("cancelling a running job aborts its handler and ends it cancelled without retry", async () => {
    const org = await insertOrg(sql);
    let aborted = false;
    const r = runner([
      {
        name: "t.cancel-running",
        concurrency: 1,
        handler: async (ctx) => {
          ctx.progress(10);
          await untilAborted(ctx.signal).catch((err) => {
            aborted = true;
            throw err;
          });
        },
      },
    ]);
    r.start();
    const { id } = await enqueueJob(sql, systemClock, { queue: "t.cancel-running", orgId: org });
    await until(async () => (await jobRow(sql, id))!.progress === 10, "job to start");
    const view = await cancelJob(org, id);
    expect(view.status).toBe("processing");
    const row = await waitForStatus(sql, id, "cancelled");
    expect(aborted).toBe(true);
    expect(row.attempts).toBe(1);
    expect(row.error).toBe("cancelled by request");
  });

  test("cancel is refused for another org's job and for finished jobs", async () => {
    const org = await insertOrg(sql);
    const other = await insertOrg(sql);
    const r = runner([{ name: "t.finished", concurrency: 1, handler: async () => [] }]);
    r.start();
    const { id } = await enqueueJob(sql, systemClock, { queue: "t.finished", orgId: org });
    await waitForStatus(sql, id, "completed");
    await expect(cancelJob(other, id)).rejects.toThrow(/not found/);
    await expect(cancelJob(org, id)).rejects.toThrow(/already completed/);
  });

  test("an attempt that exceeds timeoutMs is aborted and retried, then fails", async () => {
    let attempts = 0;
    const r = runner([
      {
        name: "t.timeout",
        concurrency: 1,
        timeoutMs: 50,
        backoffMs: 10,
        handler: async (ctx) => {
          attempts += 1;
          await untilAborted(ctx.signal);
        },
      },
    ]);
    r.start();
    const { id } = await enqueueJob(sql, systemClock, { queue: "t.timeout", maxAttempts: 2 });
    const row = await waitForStatus(sql, id, "failed");
    expect(attempts).toBe(2);
    expect(row.error).toBe("timed out after 50 ms");
  });

  test("dedupe_key returns the active job; a finished job frees the key", async () => {
    const first = await enqueueJob(sql, systemClock, { queue: "t.dedupe", dedupeKey: "file:1", runAt: Date.now() + 60_000 });
    const again = await enqueueJob(sql, systemClock, { queue: "t.dedupe", dedupeKey: "file:1" });
    expect(again).toEqual({ id: first.id, deduplicated: true });
    expect(db.query("SELECT count(*) AS n FROM jobs WHERE dedupe_key = 'file:1'").get()).toEqual({ n: 1 });
    db.run("UPDATE jobs SET status = 'completed' WHERE id = ?", [first.id]);
    const fresh = await enqueueJob(sql, systemClock, { queue: "t.dedupe", dedupeKey: "file:1" });
    expect(fresh.deduplicated).toBe(false);
    expect(fresh.id).not.toBe(first.id);
  });

  test("a job enqueued inside a rolled-back transaction never exists and never runs", async () => {
    let ran = false;
    const r = runner([{ name: "t.rollback", concurrency: 1, handler: async (ctx) => void (ran ||= !isSentinel(ctx.payload)) }]);
    r.start();
    let id = "";
    const rejected = new SqliteClient(db, new GroupCommit(db)).transaction(async (tx) => {
      id = (await r.submit({ queue: "t.rollback" }, tx)).id;
      throw new Error("the record this job belongs to failed validation");
    });
    await expect(rejected).rejects.toThrow(/failed validation/);
    await caughtUp(sql, "t.rollback");
    expect(await jobRow(sql, id)).toBeNull();
    expect(ran).toBe(false);
  });

  test("a worker whose lease was taken over cannot record its outcome; the new owner's result stands", async () => {
    const releaseFirst = Promise.withResolvers<void>();
    const executions: string[] = [];
    const queue = (worker: string): QueueDefinition => ({
      name: "t.fenced",
      concurrency: 1,
      handler: async (ctx) => {
        if (isSentinel(ctx.payload)) return [];
        executions.push(worker);
        if (worker === "a") {
          await releaseFirst.promise;
          // The stale worker tries to write through the fenced transaction: refused.
          await ctx.transaction((tx) => tx.run("UPDATE jobs SET error = 'stale write' WHERE id = ?", [ctx.jobId]));
        }
        return [{ worker }];
      },
    });
    // A long lease means worker a's next heartbeat is far away: it looks stalled once its lease lapses.
    const a = runner([queue("a")], { leaseMs: 60_000, workerId: "a" });
    a.start();
    const { id } = await enqueueJob(sql, systemClock, { queue: "t.fenced" });
    await until(() => executions.includes("a"), "worker a to start");
    db.run("UPDATE jobs SET lease_expires_at = ? WHERE id = ?", [Date.now() - 1, id]);
    const b = runner([queue("b")], { leaseMs: 2_000, workerId: "b" });
    b.start();
    const done = await waitForStatus(sql, id, "completed");
    // Only worker a runs now; once its stale attempt has ended (refused), its slot frees and it
    // takes the next job of the queue.
    await b.stop(1_000);
    releaseFirst.resolve();
    await caughtUp(sql, "t.fenced");
    const row = (await jobRow(sql, id))!;
    expect(done.lease_owner).toBeNull();
    expect(JSON.parse(row.results!)).toEqual([{ worker: "b" }]);
    expect(row.error).toBeNull();
    expect(executions).toEqual(["a", "b"]);
  });

  test("a job whose lease lapsed while it still runs here is not taken back by the same runner", async () => {
    const release = Promise.withResolvers<void>();
    const executions: string[] = [];
    const r = runner([{
      name: "t.own-lapse",
      concurrency: 2,
      handler: async (ctx) => {
        if (isSentinel(ctx.payload)) return [];
        executions.push(ctx.jobId);
        if (executions.length === 1) await release.promise;
        return [];
      },
    }], { leaseMs: 60_000 });
    r.start();
    const first = await enqueueJob(sql, systemClock, { queue: "t.own-lapse" });
    await until(() => executions.includes(first.id), "the first job to start");
    // As after a stall longer than the lease: the runner's next poll sees the lease lapsed.
    db.run("UPDATE jobs SET lease_expires_at = ? WHERE id = ?", [Date.now() - 1, first.id]);
    const second = await enqueueJob(sql, systemClock, { queue: "t.own-lapse" });
    // The free slot goes to the second job, not to a second execution of the first.
    await until(() => executions.includes(second.id), "the second job to start");
    expect(executions.filter((id) => id === first.id)).toHaveLength(1);
    release.resolve();
    await waitForStatus(sql, first.id, "completed");
    expect(executions.filter((id) => id === first.id)).toHaveLength(1);
    await r.stop(1_000);
  });

  test("at start, leases of dead worker processes on this host are released at once; other hosts' and live ones' are not", async () => {
    const exited = Bun.spawn(["true"]);
    await exited.exited;
    const host = hostname();
    const owners = {
      dead: `worker-${host}-${exited.pid}-0123abcd`,
      live: `worker-${host}-${process.ppid}-0123abcd`,
      elsewhere: `worker-${host}x-${exited.pid}-0123abcd`,
    };
    const ids: Record<string, string> = {};
    for (const [name, owner] of Object.entries(owners)) {
      ids[name] = (await enqueueJob(sql, systemClock, { queue: "t.orphans", payload: { name } })).id;
      db.run("UPDATE jobs SET status = 'processing', attempts = 1, lease_owner = ?, lease_expires_at = ? WHERE id = ?", [owner, Date.now() + 600_000, ids[name]!]);
    }
    const ran: string[] = [];
    runner([{ name: "t.orphans", concurrency: 3, handler: async (ctx) => void (isSentinel(ctx.payload) || ran.push((ctx.payload as { name: string }).name)) }]).start();
    const done = await waitForStatus(sql, ids.dead!, "completed");
    expect(done.attempts).toBe(2);
    await caughtUp(sql, "t.orphans");
    expect(ran).toEqual(["dead"]);
    expect(await jobRow(sql, ids.live!)).toMatchObject({ status: "processing", lease_owner: owners.live });
    expect(await jobRow(sql, ids.elsewhere!)).toMatchObject({ status: "processing", lease_owner: owners.elsewhere });
  });

  test("a job whose worker died is taken over on a full poll, however many queues are looked at before its own", async () => {
    const host = hostname();
    const exited = Bun.spawn(["true"]);
    await exited.exited;
    const { id } = await enqueueJob(sql, systemClock, { queue: "t.late" });
    db.run("UPDATE jobs SET status = 'processing', attempts = 1, lease_owner = ?, lease_expires_at = ? WHERE id = ?", [
      `worker-${host}-${exited.pid}-0123abcd`, Date.now() + 600_000, id,
    ]);
    // Empty queues with room for jobs, registered (and so polled) first.
    const idle = Array.from({ length: 6 }, (_, i): QueueDefinition => ({ name: `t.idle${i}` as `t.${string}`, concurrency: 4, handler: async () => [] }));
    runner([...idle, { name: "t.late", concurrency: 1, handler: async () => [{ resumed: true }] }]).start();
    const row = await waitForStatus(sql, id, "completed");
    expect(row.attempts).toBe(2);
    expect(JSON.parse(row.results!)).toEqual([{ resumed: true }]);
  });

  test("stopping the runner hands a running job back without spending an attempt", async () => {
    let starts = 0;
    const hang: QueueDefinition = {
      name: "t.shutdown",
      concurrency: 1,
      handler: async (ctx) => {
        starts += 1;
        await untilAborted(ctx.signal);
      },
    };
    const first = runner([hang]);
    first.start();
    const { id } = await enqueueJob(sql, systemClock, { queue: "t.shutdown", maxAttempts: 1 });
    await until(() => starts === 1, "first start");
    await first.stop(1_000);
    const released = (await jobRow(sql, id))!;
    expect(released.status).toBe("pending");
    expect(released.attempts).toBe(0);
    expect(released.lease_owner).toBeNull();
    // With max_attempts 1 it can still run: the interrupted attempt did not count.
    const second = runner([{ ...hang, handler: async () => [{ resumed: true }] }]);
    second.start();
    const row = await waitForStatus(sql, id, "completed");
    expect(row.attempts).toBe(1);
  });

  test("a handler waiting on work it cannot cancel lets go at once when stopped (unlessAborted)", async () => {
    let starts = 0;
    const never = new Promise<never>(() => {});
    const first = runner([{ name: "t.uncancellable", concurrency: 1, handler: async (ctx) => { starts += 1; await unlessAborted(never, ctx.signal); } }]);
    first.start();
    const { id } = await enqueueJob(sql, systemClock, { queue: "t.uncancellable" });
    await until(() => starts === 1, "the job to start");
    expect(await first.stop(10_000)).toBe(0);
    expect(await jobRow(sql, id)).toMatchObject({ status: "pending", attempts: 0, lease_owner: null });
  });

  test("a handler still running after the stop's grace writes no outcome; the job is taken over once its lease lapses", async () => {
    const release = Promise.withResolvers<void>();
    let returned = false;
    const first = runner(
      [{ name: "t.stubborn", concurrency: 1, handler: async () => { await release.promise; returned = true; return [{ by: "first" }]; } }],
      { leaseMs: 300, workerId: "first-worker" },
    );
    first.start();
    const { id } = await enqueueJob(sql, systemClock, { queue: "t.stubborn" });
    await until(async () => (await jobRow(sql, id))?.status === "processing", "the job to start");
    // The database closes after stop() in a server: this runner must not write to it any more.
    expect(await first.stop(50)).toBe(1);
    release.resolve();
    await until(() => returned, "the stubborn handler to return");
    const second = runner([{ name: "t.stubborn", concurrency: 1, handler: async () => [{ by: "second" }] }], { leaseMs: 300, workerId: "second-worker" });
    second.start();
    const row = await waitForStatus(sql, id, "completed");
    expect(JSON.parse(row.results!)).toEqual([{ by: "second" }]);
    expect(row.attempts).toBe(2);
  });

  test("a job abandoned on its final attempt ends failed instead of hanging", async () => {
    const { id } = await enqueueJob(sql, systemClock, { queue: "t.abandoned", maxAttempts: 1 });
    // Simulate a worker that claimed the job and died.
    db.run(
      "UPDATE jobs SET status = 'processing', attempts = 1, lease_owner = 'dead', lease_expires_at = ? WHERE id = ?",
      [Date.now() - 1, id],
    );
    const r = runner([{ name: "t.abandoned", concurrency: 1, handler: async () => [] }]);
    r.start();
    const row = await waitForStatus(sql, id, "failed");
    expect(row.error).toMatch(/final attempt/);
  });
});

async function insertOrg(sql: SqlClient): Promise<string> {
  return (await insertTenantRows(sql, systemClock, { name: `org-${crypto.randomUUID().slice(0, 8)}`, tier: "PROFESSIONAL" })).orgId;
}

describe("job resource over HTTP", () => {
  let server: TestServer;
  const gate = Promise.withResolvers<void>();

  beforeAll(async () => {
    server = await startTestServer({
      queues: [
        {
          name: "t.http",
          concurrency: 2,
          handler: async (ctx) => {
            if ((ctx.payload as { wait?: boolean }).wait) {
              ctx.progress(25);
              await Promise.race([gate.promise, untilAborted(ctx.signal)]);
            }
            return [{ ok: true }];
          },
        },
      ],
    });
  });
  afterAll(async () => {
    gate.resolve();
    await server.close();
  });

  async function enqueue(orgId: string, payload: unknown = {}): Promise<string> {
    return (await server.ctx.jobs.submit({ queue: "t.http", orgId, payload })).id;
  }

  test("GET /job/{id} shows the owner's job with the spec's fields; other orgs get 404", async () => {
    const owner = await server.tenant();
    const stranger = await server.tenant();
    const id = await enqueue(owner.orgId);
    await waitForStatus(server.ctx.sql, id, "completed");
    const res = await owner.api.get(`/job/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ job_id: id, type: "t.http", status: "completed", progress: 100, results: [{ ok: true }], error: null, attempts: 1 });
    expect(typeof res.body.created_at).toBe("string");
    const hidden = await stranger.api.get(`/job/${id}`);
    expect(hidden.status).toBe(404);
    expect(hidden.body.detail).toContain(id);
  });

  test("GET /job rejects a malformed id with 400, a missing key with 401, an unknown id with 404", async () => {
    const owner = await server.tenant();
    const bad = await owner.api.get("/job/not-a-uuid");
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain("job_id");
    expect((await server.anonymous().get(`/job/${crypto.randomUUID()}`)).status).toBe(401);
    const missing = await owner.api.get(`/job/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("JOB_NOT_FOUND");
  });

  test("GET /jobs lists the organization's jobs newest first, filtered by status and type, paged", async () => {
    const owner = await server.tenant();
    const stranger = await server.tenant();
    const fileId = crypto.randomUUID();
    const first = await enqueue(owner.orgId, { fileId });
    await waitForStatus(server.ctx.sql, first, "completed");
    const second = await enqueue(owner.orgId);
    await waitForStatus(server.ctx.sql, second, "completed");
    await enqueue(stranger.orgId);
    const all = await owner.api.get("/jobs");
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total_count: 2, limit: 20, offset: 0, has_more: false });
    expect(all.body.items.map((j: { job_id: string }) => j.job_id)).toEqual([second, first]);
    expect(all.body.items[1]).toMatchObject({ job_id: first, type: "t.http", status: "completed", file_id: fileId, results: [{ ok: true }] });
    expect(all.body.items[0].file_id).toBeNull();
    const paged = await owner.api.get("/jobs?limit=1&offset=1");
    expect(paged.body).toMatchObject({ total_count: 2, has_more: false });
    expect(paged.body.items.map((j: { job_id: string }) => j.job_id)).toEqual([first]);
    expect((await owner.api.get("/jobs?status=failed")).body.total_count).toBe(0);
    expect((await owner.api.get("/jobs?status=completed&type=t.http")).body.total_count).toBe(2);
    expect((await owner.api.get("/jobs?type=file.process")).body.total_count).toBe(0);
    const bad = await owner.api.get("/jobs?status=done");
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain("status");
    expect((await owner.api.get("/jobs?limit=0")).status).toBe(400);
    expect((await server.anonymous().get("/jobs")).status).toBe(401);
  });

  test("POST /job/{id}/cancel needs EDIT, stops a running job and then answers 409 JOB_FINISHED", async () => {
    const owner = await server.tenant();
    const id = await enqueue(owner.orgId, { wait: true });
    await until(async () => (await jobRow(server.ctx.sql, id))!.progress === 25, "job to start");
    const viewer = await owner.keyWith(["view"]);
    expect((await viewer.get(`/job/${id}`)).body.status).toBe("processing");
    const forbidden = await viewer.post(`/job/${id}/cancel`);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.detail).toBeTruthy();
    const cancelled = await owner.api.post(`/job/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.job_id).toBe(id);
    await waitForStatus(server.ctx.sql, id, "cancelled");
    expect((await owner.api.get(`/job/${id}`)).body.status).toBe("cancelled");
    const again = await owner.api.post(`/job/${id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("JOB_FINISHED");
  });
});
