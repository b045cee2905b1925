/**
 * The worker pool. Claims jobs from the durable table with a lease, keeps the lease alive with
 * heartbeats while the handler runs, and records the outcome only while it still holds the
 * lease (so a worker that lost its lease can never complete a job someone else took over).
 * A process killed mid-job simply stops heartbeating: once the lease expires, any runner picks
 * the job up again. A runner starting on the same host does not wait for that: worker ids name
 * their host and pid, so leases of processes that no longer exist are released at start.
 * Failures retry with exponential backoff up to the job's attempt limit.
 *
 * The table is reached through JobStore (job-store.ts), the same on SQLite and PostgreSQL; on
 * SQLite claims, progress and outcomes commit with the other writes of the same turn
 * (db/group-commit.ts): autocommitted, they were ~14 % of the event loop in a bulk import of notes
 * (two jobs a note, 0.1-0.14 ms a commit against ~0.01 ms a statement inside a shared transaction).
 * Workers in other processes learn of new jobs from the store's notifications (PostgreSQL
 * LISTEN/NOTIFY); the poll remains the safety net.
 */
import { hostname } from "node:os";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import { type EnqueueOptions, type JobRow, type JobView } from "./queue.ts";
import type { JobPayloads, QueueName } from "./catalogue.ts";
import { errorMessage, forTenants } from "../errors.ts";
import type { SqlClient, Subscription } from "../db/sql-client.ts";
import { LeaseLost, type JobStore } from "./job-store.ts";
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
   * Runs `fn` in a transaction that first checks this worker still holds the lease (locked on
   * PostgreSQL), so the handler's writes and a takeover by another worker never interleave: `fn`
   * writes through `tx` and commits whole or not at all; jobs enqueued with `submit(options, tx)`
   * commit with it. Rejects with a lost lease.
   */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>;
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

  /** Running handlers' writes and hand-backs still on their way to the database (stop() waits for them). */
  private readonly pendingWrites = new Set<Promise<unknown>>();
  private subscription: Promise<Subscription | null> | null = null;

  constructor(
    /** The job table (the job resource reads it through here). */
    readonly store: JobStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: RunnerOptions,
  ) {
    this.workerId = options.workerId ?? `worker-${hostname()}-${process.pid}-${crypto.randomUUID().slice(0, 8)}`;
    this.pollMs = options.pollMs ?? 500;
  }

  /** The queues registered, by name. */
  queueNames(): string[] {
    return [...this.queues.keys()];
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
    // The first poll waits until notifications flow, so a job enqueued after it wakes this runner.
    const listening = this.store.onNewJobs((queue) => this.wake(queue)).catch((err) => {
      this.log.warn("not notified of new jobs; they are found by the poll", { err });
      return null;
    });
    this.subscription = listening;
    void listening
      .then(() => this.releaseDeadOwners())
      .catch((err) => this.log.warn("could not release the jobs of dead worker processes", { err }))
      .finally(() => this.wake());
  }

  /**
   * Expires at once the leases of workers that ran on this host in a process that is gone
   * (kill -9, OOM kill, crash), so their jobs resume now rather than after the lease. Leases of
   * other hosts, of live processes, and of this process's pid (another runner in this process,
   * or a reused pid) are left to lapse normally: when in doubt, wait.
   */
  private async releaseDeadOwners(): Promise<void> {
    for (const owner of await this.store.leaseOwners()) {
      const match = /^worker-(.+)-(\d+)-[0-9a-f]{8}$/.exec(owner);
      if (!match || match[1] !== hostname()) continue;
      const pid = Number(match[2]);
      if (pid === process.pid || processExists(pid)) continue;
      const released = await this.store.expireLeasesOf(owner, this.clock.now());
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
    const subscription = this.subscription;
    this.subscription = null;
    for (const id of this.running.keys()) this.stopJob(id, "shutdown");
    for (const { queue, row } of this.ready.splice(0)) {
      this.perQueue.set(queue.name, (this.perQueue.get(queue.name) ?? 1) - 1);
      this.release(row.id);
    }
    // Claims on their way hand their jobs back when they commit (see claimAndLaunch).
    const all = Promise.all([...this.running.values()].map((r) => r.done).concat([...this.claiming.values()].map((c) => c.done)));
    const deadline = Date.now() + graceMs;
    await Promise.race([all, Bun.sleep(graceMs)]);
    // Hand-backs and outcomes on their way, within the same grace.
    await Promise.race([Promise.all([...this.pendingWrites]), Bun.sleep(Math.max(0, deadline - Date.now()))]);
    await (await subscription)?.unlisten().catch(() => {});
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
   * Enqueues a job and wakes idle workers of every process sharing the database; given the
   * caller's port transaction, the job commits with the caller's records (and wakes workers once
   * it has), or not at all.
   */
  async submit<Q extends QueueName>(options: EnqueueOptions<Q>, tx?: SqlClient): Promise<{ id: string; deduplicated: boolean }> {
    const queued = await this.store.enqueue(options, this.clock.now(), tx);
    this.wake(options.queue);
    return queued;
  }

  /** Cancels a job of the organization; one running here stops at once rather than at its next heartbeat. */
  async cancel(orgId: string, id: string): Promise<JobView> {
    const view = await this.store.cancel(orgId, id, this.clock.now());
    this.stopJob(id, "cancelled");
    return view;
  }

  /** A job's fenced write: tracked for stop(); a lost lease stops the job. */
  private fencedWrite<T>(id: string, write: Promise<T>): Promise<T> {
    return this.track(write).catch((err) => {
      if (err instanceof LeaseLost) this.stopJob(id, "lease-lost");
      throw err;
    });
  }

  /** Tracks a write stop() must wait for before the database closes. */
  private track<T>(promise: Promise<T>): Promise<T> {
    this.pendingWrites.add(promise);
    void promise.finally(() => this.pendingWrites.delete(promise)).catch(() => {});
    return promise;
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
        this.store.expireAbandoned(now).catch((err) => this.log.error("expiring abandoned jobs failed", { err }));
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
    const done = this.store.claim(queue.name, this.workerId, this.options.leaseMs, wanted, lapsed, this.clock.now(), [...this.running.keys()]).then(settle, (err) => {
      this.log.error("job claim failed", { queue: queue.name, err });
      settle([]);
    });
    this.claiming.set(queue.name, { done, wokenSince: false });
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
        this.track(this.store.progress(row.id, this.workerId, value, now)).catch((err) => log.warn("job progress not recorded", { err }));
      },
      transaction: (fn) => this.fencedWrite(row.id, this.store.inTransaction(row.id, this.workerId, fn)),
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
    if (err instanceof LeaseLost) {
      log.warn("job lease lost; its outcome was discarded", { error: message });
      return;
    }
    try {
      switch (entry.reason) {
        case "lease-lost":
          log.warn("job lease lost; another worker owns it now");
          return;
        case "shutdown":
          await this.release(row.id);
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
      await this.store.retry(row.id, this.workerId, now + jittered, reason, now);
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
    const held = await this.store.finish(id, this.workerId, status, outcome, this.clock.now());
    if (!held) throw new LeaseLost(`job ${id}: lease lost before its outcome was recorded`);
  }

  /** Gives a job back to the queue at once; the interrupted attempt does not count. */
  private release(id: string): Promise<void> {
    return this.track(this.store.release(id, this.workerId, this.clock.now())).catch((err) => this.log.warn("job not handed back; it runs again once its lease lapses", { job_id: id, err }));
  }

  private heartbeat(id: string): void {
    if (this.abandoned) return;
    this.store
      .heartbeat(id, this.workerId, this.options.leaseMs, this.clock.now())
      .then((row) => {
        if (!row) this.stopJob(id, "lease-lost");
        else if (row.cancel_requested) this.stopJob(id, "cancelled");
      })
      .catch((err) => this.log.warn("job heartbeat failed", { job_id: id, err }));
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
