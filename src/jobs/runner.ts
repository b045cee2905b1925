/**
 * The worker pool. Claims jobs from the durable table with a lease, keeps the lease alive with
 * heartbeats while the handler runs, and records the outcome only while it still holds the
 * lease (so a worker that lost its lease can never complete a job someone else took over).
 * A process killed mid-job simply stops heartbeating: once the lease expires, any runner picks
 * the job up again. A runner starting on the same host does not wait for that: worker ids name
 * their host and pid, so leases of processes that no longer exist are released at start.
 * Failures retry with exponential backoff up to the job's attempt limit.
 *
 * Claims, progress and outcomes commit with the other writes of the same turn (db/group-commit.ts):
 * autocommitted, they were ~14 % of the event loop in a bulk import of notes (two jobs a note,
 * 0.1-0.14 ms a commit against ~0.01 ms a statement inside a shared transaction).
 */
import type { Database } from "bun:sqlite";
import { hostname } from "node:os";
import { isoAt, type Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import { cancelJob, enqueueJob, getJobRow, type EnqueueOptions, type JobRow, type JobView } from "./queue.ts";
import type { JobPayloads, QueueName } from "./catalogue.ts";
import { errorMessage, forTenants } from "../errors.ts";
import type { GroupCommit } from "../db/group-commit.ts";
import type { BackgroundWork } from "./background-work.ts";

export interface JobContext<P> {
  jobId: string;
  payload: P;
  orgId: string | null;
  /** 1 on the first run. */
  attempt: number;
  /** When this attempt fails, the job fails for good if attempt >= maxAttempts. */
  maxAttempts: number;
  /** Aborted on cancellation, timeout, shutdown or a lost lease. */
  signal: AbortSignal;
  /** Records progress in percent (0-100); it commits with the next shared write. */
  progress(percent: number): void;
  /**
   * Runs `fn` in a transaction that first checks this worker still holds the lease, so the
   * handler's writes and a takeover by another worker can never interleave. The transaction is
   * shared with other tasks' writes of this turn (db/group-commit.ts); resolves once committed.
   */
  write<T>(fn: () => T): Promise<T>;
  log: Logger;
}

export interface QueueDefinition<Q extends QueueName = QueueName> {
  name: Q;
  /** Jobs of this queue run at most this many at a time in this process. */
  concurrency: number;
  handler: (ctx: JobContext<JobPayloads[Q]>) => Promise<unknown[] | void>;
  /**
   * Work that can wait (re-embedding after a model change): not claimed while files are being
   * analysed (RunnerOptions.background); jobs already running go on.
   */
  background?: boolean;
  /** Wall-clock limit per attempt; exceeded attempts fail and retry. */
  timeoutMs?: number;
  /** First retry delay; doubles with every attempt (capped at maxBackoffMs). */
  backoffMs?: number;
  maxBackoffMs?: number;
}

/** Throw to fail a job at once, without retries (bad input that will never succeed). */
export class PermanentJobError extends Error {
  override name = "PermanentJobError";
}

class LeaseLostError extends Error {
  override name = "LeaseLostError";
}

type StopReason = "cancelled" | "timeout" | "shutdown" | "lease-lost";

interface RunningJob {
  controller: AbortController;
  reason: StopReason | null;
  done: Promise<void>;
}

/** Least time between two progress writes of one job. */
const PROGRESS_WRITE_MS = 250;

/**
 * Most jobs a claim takes, and most jobs started in one turn of the event loop (claimed jobs
 * beyond that start on the next turns). Starting a job runs its handler up to its first await (reading its file, its first writes):
 * sixteen embedding jobs freed at once and started in one tick held the event loop for ~10 ms.
 */
const STARTS_PER_TICK = 4;

export interface RunnerOptions {
  leaseMs: number;
  pollMs?: number;
  workerId?: string;
  /** Holds background queues back while foreground work runs (none: they run like any other). */
  background?: BackgroundWork;
}

export class JobRunner {
  private readonly queues = new Map<string, QueueDefinition<any>>();
  private readonly running = new Map<string, RunningJob>();
  /** Jobs running, claimed and waiting to start, or being claimed, by queue. */
  private readonly perQueue = new Map<string, number>();
  /** Claimed jobs waiting for their turn to start (at most STARTS_PER_TICK start a turn). */
  private readonly ready: { queue: QueueDefinition<any>; row: JobRow }[] = [];
  private startsScheduled = false;
  /** Claims on their way to the database, by queue (a queue's next claim waits for its last). */
  private readonly claiming = new Map<string, { done: Promise<void>; wokenSince: boolean }>();
  private readonly workerId: string;
  private readonly pollMs: number;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private started = false;
  /**
   * Set when stop() gave up waiting: the database is about to close, so the outcomes of handlers
   * still running are not written; their jobs run again once their leases lapse.
   */
  private abandoned = false;
  private ticking = false;
  /**
   * Queues to look at on the next tick. A tick looks at every queue (and expires abandoned
   * leases) only once per poll interval: waking one queue per enqueued or finished job, rather
   * than claiming from all of them, was ~5 ms of SQLite a document in a bulk import of notes.
   */
  private readonly woken = new Set<string>();
  private fullPollDue = true;
  private lastFullPoll = 0;

  constructor(
    private readonly db: Database,
    private readonly writes: GroupCommit,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: RunnerOptions,
  ) {
    this.workerId = options.workerId ?? `worker-${hostname()}-${process.pid}-${crypto.randomUUID().slice(0, 8)}`;
    this.pollMs = options.pollMs ?? 500;
  }

  register<Q extends QueueName>(definition: QueueDefinition<Q>): void {
    if (this.queues.has(definition.name)) throw new Error(`queue ${definition.name} registered twice`);
    this.queues.set(definition.name, definition);
    this.perQueue.set(definition.name, 0);
  }

  get isRunning(): boolean {
    return this.started;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.abandoned = false;
    this.releaseDeadOwners();
    this.wake();
  }

  /**
   * Expires at once the leases of workers that ran on this host in a process that is gone
   * (kill -9, OOM kill, crash), so their jobs resume now rather than after the lease. Leases of
   * other hosts, of live processes, and of this process's pid (another runner in this process,
   * or a reused pid) are left to lapse normally: when in doubt, wait.
   */
  private releaseDeadOwners(): void {
    const owners = this.db
      .query<{ lease_owner: string }, []>("SELECT DISTINCT lease_owner FROM jobs WHERE status = 'processing' AND lease_owner IS NOT NULL")
      .all();
    for (const { lease_owner: owner } of owners) {
      const match = /^worker-(.+)-(\d+)-[0-9a-f]{8}$/.exec(owner);
      if (!match || match[1] !== hostname()) continue;
      const pid = Number(match[2]);
      if (pid === process.pid || processExists(pid)) continue;
      const released = this.db
        .query("UPDATE jobs SET lease_expires_at = ?, updated_at = ? WHERE status = 'processing' AND lease_owner = ?")
        .run(0, isoAt(this.clock.now()), owner).changes;
      this.log.info("released the jobs of a worker process that no longer exists", { owner, jobs: released });
    }
  }

  /**
   * Stops claiming, interrupts running handlers and hands their jobs back without spending an
   * attempt, waiting up to `graceMs` for them; resolves to the number of handlers still running then.
   */
  async stop(graceMs = 10_000): Promise<number> {
    if (!this.started) return 0;
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    for (const id of this.running.keys()) this.stopJob(id, "shutdown");
    for (const { queue, row } of this.ready.splice(0)) {
      this.perQueue.set(queue.name, (this.perQueue.get(queue.name) ?? 1) - 1);
      this.release(row.id);
    }
    // Claims on their way hand their jobs back when they commit (see claimAndLaunch).
    const all = Promise.all([...this.running.values()].map((r) => r.done).concat([...this.claiming.values()].map((c) => c.done)));
    await Promise.race([all, Bun.sleep(graceMs)]);
    if (this.running.size) {
      this.abandoned = true;
      this.log.warn("jobs still running at shutdown are left to their leases (they run again after the lease lapses)", {
        jobs: [...this.running.keys()],
        lease_ms: this.options.leaseMs,
      });
    }
    return this.running.size;
  }

  /**
   * Enqueues a job (inside the caller's transaction, if any) and looks for work on the next tick,
   * after that transaction has committed.
   */
  enqueue<Q extends QueueName>(options: EnqueueOptions<Q>): { id: string; deduplicated: boolean } {
    const queued = enqueueJob(this.db, this.clock, options);
    this.wake(options.queue);
    return queued;
  }

  /** Cancels a job of the organization; one running here stops at once rather than at its next heartbeat. */
  cancel(orgId: string, id: string): JobView {
    const view = cancelJob(this.db, this.clock, orgId, id);
    this.stopJob(id, "cancelled");
    return view;
  }

  /** Look for work now instead of at the next poll: in `queue`, or in every queue. */
  wake(queue?: string): void {
    if (!this.started) return;
    if (queue === undefined) this.fullPollDue = true;
    else this.woken.add(queue);
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), 0);
  }

  private tick(): void {
    if (!this.started || this.ticking) return;
    this.ticking = true;
    try {
      const now = this.clock.now();
      const full = this.fullPollDue || now - this.lastFullPoll >= this.pollMs;
      if (full) {
        this.fullPollDue = false;
        this.lastFullPoll = now;
        this.expireAbandoned();
      }
      const names = full ? [...this.queues.keys()] : [...this.woken];
      this.woken.clear();
      for (const name of names) {
        const queue = this.queues.get(name);
        if (!queue) continue;
        // Looked at again on the next full poll.
        if (queue.background && this.options.background?.busy) continue;
        const inFlight = this.claiming.get(name);
        if (inFlight) {
          // Looked at again when that claim has committed (a job enqueued since may have missed it).
          inFlight.wokenSince = true;
          continue;
        }
        const free = queue.concurrency - (this.perQueue.get(name) ?? 0);
        if (free > 0) this.claimAndLaunch(queue, Math.min(free, STARTS_PER_TICK), full);
      }
    } catch (err) {
      this.log.error("job poll failed", { err });
    } finally {
      this.ticking = false;
      if (this.started) this.timer = setTimeout(() => this.tick(), this.woken.size ? 0 : this.pollMs);
    }
  }

  /**
   * Claims up to `wanted` jobs of the queue in the next shared transaction and starts them once it
   * has committed. Their slots count as taken meanwhile. When it got all it asked for, the queue
   * may hold more, and when the queue was woken meanwhile it may have new jobs: either way it is
   * looked at again on the next tick.
   */
  private claimAndLaunch(queue: QueueDefinition<any>, wanted: number, lapsed: boolean): void {
    this.perQueue.set(queue.name, (this.perQueue.get(queue.name) ?? 0) + wanted);
    const settle = (rows: JobRow[]) => {
      const wokenSince = this.claiming.get(queue.name)?.wokenSince ?? false;
      this.claiming.delete(queue.name);
      // The slots of jobs not found are free again; the claimed ones stay taken until they end.
      this.perQueue.set(queue.name, (this.perQueue.get(queue.name) ?? wanted) - (wanted - rows.length));
      if (!this.started) {
        this.perQueue.set(queue.name, (this.perQueue.get(queue.name) ?? rows.length) - rows.length);
        for (const row of rows) this.release(row.id);
        return;
      }
      for (const row of rows) this.ready.push({ queue, row });
      this.startReady();
      if (rows.length === wanted || wokenSince) this.wake(queue.name);
    };
    const done = this.writes.write(() => this.claim(queue.name, wanted, lapsed)).then(settle, (err) => {
      this.log.error("job claim failed", { queue: queue.name, err });
      settle([]);
    });
    this.claiming.set(queue.name, { done, wokenSince: false });
  }

  /** Jobs whose worker died on their last allowed attempt end as failed (or cancelled if asked). */
  private expireAbandoned(): void {
    const now = this.clock.now();
    this.db
      .query(
        `UPDATE jobs SET
           status = CASE WHEN cancel_requested = 1 THEN 'cancelled' ELSE 'failed' END,
           error = CASE WHEN cancel_requested = 1 THEN 'cancelled by request'
                        ELSE 'worker stopped responding on the final attempt' END,
           lease_owner = NULL, lease_expires_at = NULL, finished_at = ?, updated_at = ?
         WHERE status = 'processing' AND lease_expires_at < ?
           AND (attempts >= max_attempts OR cancel_requested = 1)`,
      )
      .run(isoAt(now), isoAt(now), now);
  }

  /**
   * Takes up to `limit` of the queue's jobs, oldest due first: on a full poll (`lapsed`) those
   * whose lease lapsed (their worker died) first, then pending ones that are due. Lapsed leases
   * are rare and a poll interval late is soon enough for them; looking for them at every claim
   * was ~2 % of the event loop in a bulk import. Each case walks one index in order (one query
   * OR-ing both sorted every due pending job of the queue: with a backlog of 1,400 notes that was
   * a quarter of the event loop's time). Runs inside a write transaction, so no other process
   * can take the same jobs in between.
   */
  private claim(queue: string, limit: number, lapsed: boolean): JobRow[] {
    const now = this.clock.now();
    const take = (candidates: string, args: (string | number)[], n: number) =>
      this.db
        .query<JobRow, (string | number)[]>(
          `UPDATE jobs SET status = 'processing', lease_owner = ?, lease_expires_at = ?,
             attempts = attempts + 1, started_at = coalesce(started_at, ?), updated_at = ?
           WHERE id IN (${candidates} LIMIT ?)
           RETURNING *`,
        )
        .all(this.workerId, now + this.options.leaseMs, isoAt(now), isoAt(now), ...args, n);
    const rows = lapsed
      ? take("SELECT id FROM jobs WHERE status = 'processing' AND lease_expires_at < ? AND queue = ? ORDER BY run_at", [now, queue], limit)
      : [];
    if (rows.length < limit) {
      rows.push(...take("SELECT id FROM jobs WHERE queue = ? AND status = 'pending' AND run_at <= ? ORDER BY run_at", [queue, now], limit - rows.length));
    }
    // RETURNING follows no order; jobs start in the order they were due.
    return rows.sort((a, b) => a.run_at - b.run_at);
  }

  /** Starts up to STARTS_PER_TICK claimed jobs now and leaves the rest to the next turns. */
  private startReady(): void {
    if (this.startsScheduled) return;
    for (let started = 0; started < STARTS_PER_TICK && this.ready.length; started++) {
      const { queue, row } = this.ready.shift()!;
      this.launch(queue, row);
    }
    if (this.ready.length) {
      this.startsScheduled = true;
      setImmediate(() => {
        this.startsScheduled = false;
        if (this.started) this.startReady();
      });
    }
  }

  /** Runs a claimed job; its slot in perQueue was taken when it was claimed. */
  private launch(queue: QueueDefinition<any>, row: JobRow): void {
    const controller = new AbortController();
    const entry: RunningJob = { controller, reason: null, done: Promise.resolve() };
    this.running.set(row.id, entry);
    entry.done = this.execute(queue, row, entry).finally(() => {
      this.running.delete(row.id);
      this.perQueue.set(queue.name, (this.perQueue.get(queue.name) ?? 1) - 1);
      this.wake(queue.name);
    });
  }

  private stopJob(id: string, reason: StopReason): void {
    const entry = this.running.get(id);
    if (!entry || entry.reason) return;
    entry.reason = reason;
    entry.controller.abort(new Error(`job ${reason}`));
  }

  private async execute(queue: QueueDefinition<any>, row: JobRow, entry: RunningJob): Promise<void> {
    const log = this.log.child({ job_id: row.id, queue: queue.name, attempt: row.attempts });
    const heartbeat = setInterval(() => this.heartbeat(row.id), Math.max(50, Math.floor(this.options.leaseMs / 3)));
    const timeout = queue.timeoutMs ? setTimeout(() => this.stopJob(row.id, "timeout"), queue.timeoutMs) : null;
    let lastProgress = 0;
    let lastProgressWrite = Number.NEGATIVE_INFINITY;
    const context: JobContext<unknown> = {
      jobId: row.id,
      payload: JSON.parse(row.payload),
      orgId: row.org_id,
      attempt: row.attempts,
      maxAttempts: row.max_attempts,
      signal: entry.controller.signal,
      log,
      // At most one write every PROGRESS_WRITE_MS (and none for an unchanged figure): a note's
      // stages took ~6 progress writes a document in bulk imports; the job's end writes 100.
      progress: (percent) => {
        const value = Math.max(0, Math.min(100, percent));
        const now = this.clock.now();
        if (value === lastProgress || now - lastProgressWrite < PROGRESS_WRITE_MS) return;
        lastProgress = value;
        lastProgressWrite = now;
        this.writes
          .write(() =>
            this.db
              .query("UPDATE jobs SET progress = ?, updated_at = ? WHERE id = ? AND lease_owner = ? AND status = 'processing'")
              .run(value, isoAt(now), row.id, this.workerId),
          )
          .catch((err) => log.warn("job progress not recorded", { err }));
      },
      write: (fn) =>
        this.writes.write(() => {
          this.assertLease(row.id);
          return fn();
        }),
    };
    try {
      log.debug("job started");
      const results = await queue.handler(context);
      // A stopped runner's jobs all have a reason: their outcome is decided in recordFailure.
      if (entry.reason) throw entry.controller.signal.reason;
      await this.finish(row.id, "completed", { results: results ?? [], error: null });
      log.info("job completed");
    } catch (err) {
      await this.recordFailure(queue, row, entry, err, log);
    } finally {
      clearInterval(heartbeat);
      if (timeout) clearTimeout(timeout);
    }
  }

  private async recordFailure(queue: QueueDefinition<any>, row: JobRow, entry: RunningJob, err: unknown, log: Logger): Promise<void> {
    const message = errorMessage(err);
    if (this.abandoned) {
      log.info("job outcome not recorded: the runner stopped before it ended", { error: message });
      return;
    }
    if (err instanceof LeaseLostError) {
      log.warn("job lease lost; its outcome was discarded", { error: message });
      return;
    }
    try {
      switch (entry.reason) {
        case "lease-lost":
          log.warn("job lease lost; another worker owns it now");
          return;
        case "shutdown":
          this.release(row.id);
          log.info("job handed back at shutdown");
          return;
        case "cancelled":
          await this.finish(row.id, "cancelled", { results: [], error: "cancelled by request" });
          log.info("job cancelled");
          return;
      }
      // The job's error is read by tenants (GET /job/{id}): sanitized; the log keeps the whole message.
      const reason = entry.reason === "timeout" ? `timed out after ${queue.timeoutMs} ms` : forTenants(message);
      if (err instanceof PermanentJobError || row.attempts >= row.max_attempts) {
        await this.finish(row.id, "failed", { results: [], error: reason });
        log.warn("job failed", { error: message });
        return;
      }
      const base = queue.backoffMs ?? 1_000;
      const delay = Math.min(queue.maxBackoffMs ?? 300_000, base * 2 ** (row.attempts - 1));
      const jittered = Math.round(delay * (0.8 + Math.random() * 0.4));
      const now = this.clock.now();
      this.db
        .query(
          `UPDATE jobs SET status = 'pending', run_at = ?, error = ?, lease_owner = NULL, lease_expires_at = NULL,
             updated_at = ? WHERE id = ? AND lease_owner = ? AND status = 'processing'`,
        )
        .run(now + jittered, reason, isoAt(now), row.id, this.workerId);
      log.warn("job attempt failed; will retry", { error: message, retry_in_ms: jittered });
    } catch (recordErr) {
      log.error("could not record job outcome", { err: recordErr });
    }
  }

  /**
   * Marks the job terminal if this worker still owns it (committed with the turn's other writes);
   * otherwise the outcome is dropped.
   */
  private async finish(id: string, status: "completed" | "failed" | "cancelled", outcome: { results: unknown[]; error: string | null }): Promise<void> {
    const now = isoAt(this.clock.now());
    const result = await this.writes.write(() => this.db
      .query(
        `UPDATE jobs SET status = ?, results = ?, error = ?, progress = CASE WHEN ? = 'completed' THEN 100 ELSE progress END,
           lease_owner = NULL, lease_expires_at = NULL, finished_at = ?, updated_at = ?
         WHERE id = ? AND lease_owner = ? AND status = 'processing'`,
      )
      .run(status, JSON.stringify(outcome.results), outcome.error, status, now, now, id, this.workerId));
    if (result.changes === 0) throw new LeaseLostError(`job ${id}: lease lost before its outcome was recorded`);
  }

  /** Gives a job back to the queue at once; the interrupted attempt does not count. */
  private release(id: string): void {
    const now = this.clock.now();
    this.db
      .query(
        `UPDATE jobs SET status = 'pending', attempts = max(0, attempts - 1), run_at = ?, lease_owner = NULL,
           lease_expires_at = NULL, updated_at = ? WHERE id = ? AND lease_owner = ? AND status = 'processing'`,
      )
      .run(now, isoAt(now), id, this.workerId);
  }

  private heartbeat(id: string): void {
    if (this.abandoned) return;
    try {
      const now = this.clock.now();
      const row = this.db
        .query<{ cancel_requested: number }, [number, string, string, string]>(
          `UPDATE jobs SET lease_expires_at = ?, updated_at = ?
           WHERE id = ? AND lease_owner = ? AND status = 'processing' RETURNING cancel_requested`,
        )
        .get(now + this.options.leaseMs, isoAt(now), id, this.workerId);
      if (!row) this.stopJob(id, "lease-lost");
      else if (row.cancel_requested) this.stopJob(id, "cancelled");
    } catch (err) {
      this.log.warn("job heartbeat failed", { job_id: id, err });
    }
  }

  private assertLease(id: string): void {
    const row = getJobRow(this.db, id);
    if (!row || row.status !== "processing" || row.lease_owner !== this.workerId) {
      this.stopJob(id, "lease-lost");
      throw new LeaseLostError(`job ${id}: lease lost`);
    }
  }
}

/** Signal 0 checks existence without signalling; EPERM means it exists under another user. */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === "EPERM";
  }
}
