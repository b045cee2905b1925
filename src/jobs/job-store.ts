/**
 * The durable job table as the worker pool uses it, written once over the data-access port
 * (db/sql-client.ts), so the same runner leases jobs from SQLite (one process) or PostgreSQL
 * (several processes sharing the table):
 * - a claim is one `UPDATE ... WHERE id IN (SELECT ... ORDER BY run_at LIMIT n <skipLocked>)
 *   RETURNING *`: SQLite has one writer at a time; on PostgreSQL `FOR UPDATE SKIP LOCKED` makes
 *   concurrent claimers pass over each other's rows, so a job goes to one worker and none waits;
 *   organizations with nothing running in the queue are served first (fair turns);
 * - every outcome (progress, heartbeat, finish, retry, hand-back) names the lease owner, so a
 *   worker that lost its lease changes nothing;
 * - a new job notifies NEW_JOBS_CHANNEL with its queue: idle workers in other processes wake at
 *   once rather than at their next poll (PostgreSQL NOTIFY, delivered at commit).
 * On SQLite the statements that write commit with the other writes of the same turn
 * (db/group-commit.ts), as they did before the port.
 */
import type { Database } from "bun:sqlite";
import { isoAt } from "../clock.ts";
import type { GroupCommit } from "../db/group-commit.ts";
import type { SqlClient, Subscription } from "../db/sql-client.ts";
import { SqliteClient } from "../db/sqlite-client.ts";
import type { QueueName } from "./catalogue.ts";
import { ApiError } from "../errors.ts";
import { DEFAULT_MAX_ATTEMPTS, TERMINAL_STATUSES, toJobView, type EnqueueOptions, type JobListFilter, type JobRow, type JobView, type ListedJob } from "./queue.ts";

export const NEW_JOBS_CHANNEL = "mediabox_jobs";

type Terminal = "completed" | "failed" | "cancelled";

export class JobStore {
  constructor(readonly client: SqlClient) {}

  /**
   * Inserts a job (deduplicated by its key while one is active) and notifies idle workers; through
   * `via`, a transaction of the caller's, the job commits (and wakes workers) with its records.
   */
  async enqueue<Q extends QueueName>(options: EnqueueOptions<Q>, now: number, via: SqlClient = this.client): Promise<{ id: string; deduplicated: boolean }> {
    const id = crypto.randomUUID();
    const inserted = await via.one<{ id: string }>(
      `INSERT INTO jobs (id, org_id, queue, payload, status, max_attempts, run_at, dedupe_key, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING
       RETURNING id`,
      [id, options.orgId ?? null, options.queue, JSON.stringify(options.payload ?? {}), options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, options.runAt ?? now, options.dedupeKey ?? null, isoAt(now), isoAt(now)],
    );
    if (inserted) {
      await via.notify(NEW_JOBS_CHANNEL, options.queue);
      return { id: inserted.id, deduplicated: false };
    }
    const existing = await via.one<{ id: string }>("SELECT id FROM jobs WHERE dedupe_key = ? AND status IN ('pending','processing')", [options.dedupeKey ?? ""]);
    if (!existing) throw new Error(`could not enqueue job on queue ${options.queue}`);
    return { id: existing.id, deduplicated: true };
  }

  /** A job's row; through `via`, a transaction of the caller's, as that transaction sees it. */
  get(id: string, via: SqlClient = this.client): Promise<JobRow | null> {
    return via.one<JobRow>("SELECT * FROM jobs WHERE id = ?", [id]);
  }

  /**
   * Waits until a job reaches a terminal status or the time is up, and returns its row then.
   * Polls the table, so it sees jobs finished by any worker (another process included).
   */
  async waitFor(id: string, timeoutMs: number, signal?: AbortSignal): Promise<JobRow | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const row = await this.get(id);
      if (!row || TERMINAL_STATUSES.has(row.status) || Date.now() >= deadline || signal?.aborted) return row;
      await Bun.sleep(Math.min(100, Math.max(1, deadline - Date.now())));
    }
  }

  /** A job of the organization, or 404: another tenant's job is indistinguishable from a missing one. */
  async viewForOrg(orgId: string, id: string): Promise<JobView> {
    const row = await this.client.one<JobRow>("SELECT * FROM jobs WHERE id = ? AND org_id = ?", [id, orgId]);
    if (!row) throw new ApiError("JOB_NOT_FOUND", `job ${id} not found`);
    return toJobView(row);
  }

  /** The organization's jobs, newest first (finished jobs stay 14 days; see ops/maintenance.ts). */
  async listForOrg(orgId: string, filter: JobListFilter, limit: number, offset: number): Promise<{ rows: ListedJob[]; total: number }> {
    const where = ["org_id = ?"];
    const args: (string | number)[] = [orgId];
    if (filter.status) (where.push("status = ?"), args.push(filter.status));
    if (filter.queue) (where.push("queue = ?"), args.push(filter.queue));
    const clause = where.join(" AND ");
    const total = (await this.client.one<{ n: number }>(`SELECT count(*) AS n FROM jobs WHERE ${clause}`, args))!.n;
    const rows = await this.client.all<JobRow & { file_id: string | null }>(
      `SELECT *, ${this.client.dialect.jsonText("payload", "fileId")} AS file_id FROM jobs WHERE ${clause}
       ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`,
      [...args, limit, offset],
    );
    return { rows: rows.map((row) => ({ ...toJobView(row), file_id: row.file_id ?? null })), total };
  }

  /**
   * Cancels a job: a pending job is cancelled at once; a running job is asked to stop and becomes
   * `cancelled` when its handler yields (runners poll the flag with every heartbeat;
   * `JobRunner.cancel` also stops it at once when it runs in this process).
   */
  cancel(orgId: string, id: string, now: number): Promise<JobView> {
    const at = isoAt(now);
    return this.client.transaction(async (tx) => {
      const row = await tx.one<JobRow>(`SELECT * FROM jobs WHERE id = ? AND org_id = ? ${tx.dialect.forUpdate}`, [id, orgId]);
      if (!row) throw new ApiError("JOB_NOT_FOUND", `job ${id} not found`);
      if (TERMINAL_STATUSES.has(row.status)) throw new ApiError("JOB_FINISHED", `job ${id} is already ${row.status}`);
      const updated = row.status === "pending"
        ? await tx.one<JobRow>("UPDATE jobs SET status = 'cancelled', finished_at = ?, updated_at = ?, error = 'cancelled by request' WHERE id = ? RETURNING *", [at, at, id])
        : await tx.one<JobRow>("UPDATE jobs SET cancel_requested = 1, updated_at = ? WHERE id = ? RETURNING *", [at, id]);
      return toJobView(updated!);
    });
  }

  /** Calls `onQueue` with the queue of every job enqueued from now on, by any process. */
  onNewJobs(onQueue: (queue: string) => void): Promise<Subscription> {
    return this.client.listen(NEW_JOBS_CHANNEL, onQueue);
  }

  /**
   * Takes up to `limit` of the queue's jobs, oldest due first: with `lapsed` (a full poll) those
   * whose lease lapsed (their worker died) first, then pending ones that are due. Each case walks
   * one index in order (one query OR-ing both sorted every due pending job of the queue: with a
   * backlog of 1,400 notes that was a quarter of the event loop's time).
   */
  /**
   * `runningHere`: jobs the claiming runner is still running. Their leases may have lapsed (a
   * stalled event loop, heartbeats that failed, a clock moved on), but taking them back would
   * start a second execution beside the first in the same process.
   */
  async claim(queue: string, owner: string, leaseMs: number, limit: number, lapsed: boolean, now: number, runningHere: readonly string[] = []): Promise<JobRow[]> {
    const take = (candidates: string, args: (string | number)[], n: number) =>
      this.client.all<JobRow>(
        `UPDATE jobs SET status = 'processing', lease_owner = ?, lease_expires_at = ?,
           attempts = attempts + 1, started_at = coalesce(started_at, ?), updated_at = ?
         WHERE id IN (${candidates} LIMIT ? ${this.client.dialect.skipLocked})
         RETURNING *`,
        [owner, now + leaseMs, isoAt(now), isoAt(now), ...args, n],
      );
    const rows = lapsed
      ? await take(
          // A lapsed job on its final attempt (or asked to stop) is for expireAbandoned to end, not to run again.
          `SELECT id FROM jobs WHERE status = 'processing' AND lease_expires_at < ? AND queue = ? AND attempts < max_attempts AND cancel_requested = 0
             AND id NOT IN (${this.client.dialect.jsonValues}) ORDER BY run_at`,
          [now, queue, JSON.stringify(runningHere)],
          limit,
        )
      : [];
    if (rows.length < limit) {
      // Organizations take turns: due jobs of organizations with none running in this queue go
      // first, so one organization's backlog (a 5,000-file batch) does not hold everyone else's
      // work behind it; then the oldest due, whoever's.
      const running = await this.client.all<{ org: string }>("SELECT DISTINCT coalesce(org_id, '') AS org FROM jobs WHERE queue = ? AND status = 'processing'", [queue]);
      if (running.length) {
        rows.push(
          ...(await take(
            `SELECT id FROM jobs WHERE queue = ? AND status = 'pending' AND run_at <= ? AND coalesce(org_id, '') NOT IN (${this.client.dialect.jsonValues}) ORDER BY run_at`,
            [queue, now, JSON.stringify(running.map((r) => r.org))],
            limit - rows.length,
          )),
        );
      }
    }
    if (rows.length < limit) {
      rows.push(...(await take("SELECT id FROM jobs WHERE queue = ? AND status = 'pending' AND run_at <= ? ORDER BY run_at", [queue, now], limit - rows.length)));
    }
    // RETURNING follows no order; jobs start in the order they were due.
    return rows.sort((a, b) => a.run_at - b.run_at);
  }

  async progress(id: string, owner: string, percent: number, now: number): Promise<void> {
    await this.client.run("UPDATE jobs SET progress = ?, updated_at = ? WHERE id = ? AND lease_owner = ? AND status = 'processing'", [percent, isoAt(now), id, owner]);
  }

  /** Extends the lease; null when this owner lost it. */
  heartbeat(id: string, owner: string, leaseMs: number, now: number): Promise<{ cancel_requested: number } | null> {
    return this.client.one<{ cancel_requested: number }>(
      `UPDATE jobs SET lease_expires_at = ?, updated_at = ?
       WHERE id = ? AND lease_owner = ? AND status = 'processing' RETURNING cancel_requested`,
      [now + leaseMs, isoAt(now), id, owner],
    );
  }

  /** Ends the job if this owner still holds it; false when the lease was lost. */
  async finish(id: string, owner: string, status: Terminal, outcome: { results: unknown[]; error: string | null }, now: number): Promise<boolean> {
    const { changes } = await this.client.run(
      `UPDATE jobs SET status = ?, results = ?, error = ?, progress = CASE WHEN ? = 'completed' THEN 100 ELSE progress END,
         lease_owner = NULL, lease_expires_at = NULL, finished_at = ?, updated_at = ?
       WHERE id = ? AND lease_owner = ? AND status = 'processing'`,
      [status, JSON.stringify(outcome.results), outcome.error, status, isoAt(now), isoAt(now), id, owner],
    );
    return changes > 0;
  }

  async retry(id: string, owner: string, runAt: number, error: string, now: number): Promise<void> {
    await this.client.run(
      `UPDATE jobs SET status = 'pending', run_at = ?, error = ?, lease_owner = NULL, lease_expires_at = NULL,
         updated_at = ? WHERE id = ? AND lease_owner = ? AND status = 'processing'`,
      [runAt, error, isoAt(now), id, owner],
    );
  }

  /** Gives a job back to the queue at once; the interrupted attempt does not count. */
  async release(id: string, owner: string, now: number): Promise<void> {
    await this.client.run(
      `UPDATE jobs SET status = 'pending', attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, run_at = ?, lease_owner = NULL,
         lease_expires_at = NULL, updated_at = ? WHERE id = ? AND lease_owner = ? AND status = 'processing'`,
      [now, isoAt(now), id, owner],
    );
  }

  /** Jobs whose worker died on their last allowed attempt end as failed (or cancelled if asked). */
  async expireAbandoned(now: number): Promise<void> {
    await this.client.run(
      `UPDATE jobs SET
         status = CASE WHEN cancel_requested = 1 THEN 'cancelled' ELSE 'failed' END,
         error = CASE WHEN cancel_requested = 1 THEN 'cancelled by request'
                      ELSE 'worker stopped responding on the final attempt' END,
         lease_owner = NULL, lease_expires_at = NULL, finished_at = ?, updated_at = ?
       WHERE status = 'processing' AND lease_expires_at < ?
         AND (attempts >= max_attempts OR cancel_requested = 1)`,
      [isoAt(now), isoAt(now), now],
    );
  }

  async leaseOwners(): Promise<string[]> {
    const rows = await this.client.all<{ lease_owner: string }>("SELECT DISTINCT lease_owner FROM jobs WHERE status = 'processing' AND lease_owner IS NOT NULL");
    return rows.map((row) => row.lease_owner);
  }

  /** Lets the owner's leases lapse now; returns how many. */
  async expireLeasesOf(owner: string, now: number): Promise<number> {
    return (await this.client.run("UPDATE jobs SET lease_expires_at = ?, updated_at = ? WHERE status = 'processing' AND lease_owner = ?", [0, isoAt(now), owner])).changes;
  }

  /**
   * Runs `fn` in a port transaction that first checks (and on PostgreSQL locks) the job's lease:
   * the writes of modules on the port, and jobs they enqueue through `tx`, commit only while
   * `owner` holds the job, and a takeover waits for them. Throws LeaseLost otherwise.
   */
  inTransaction<T>(id: string, owner: string, fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    return this.client.transaction(async (tx) => {
      const held = await tx.one(`SELECT id FROM jobs WHERE id = ? AND lease_owner = ? AND status = 'processing' ${tx.dialect.forUpdate}`, [id, owner]);
      if (!held) throw new LeaseLost(`job ${id}: lease lost`);
      return fn(tx);
    });
  }
}

/** The single-process store: the appliance's SQLite handle, writes in the turn's shared transaction. */
export function sqliteJobStore(db: Database, writes: GroupCommit): JobStore {
  return new JobStore(new SqliteClient(db, writes));
}

export class LeaseLost extends Error {
  override name = "LeaseLostError";
}
