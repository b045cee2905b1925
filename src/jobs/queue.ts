/**
 * The durable job table's operations that do not need a running worker: insert (callable inside
 * the caller's transaction, so a record and the job that processes it commit together), read,
 * request cancellation, prune. The jobs module (this file and runner.ts) is the table's only
 * writer. Application code enqueues through `JobRunner.enqueue`, which also wakes the runner.
 */
import type { Database } from "bun:sqlite";
import type { SqlClient } from "../db/sql-client.ts";
import { isoAt, type Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import type { JobPayloads, QueueName } from "./catalogue.ts";

export const JOB_STATUSES = ["pending", "processing", "completed", "failed", "cancelled"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const TERMINAL_STATUSES: ReadonlySet<JobStatus> = new Set(["completed", "failed", "cancelled"]);

export interface JobRow {
  id: string;
  org_id: string | null;
  queue: string;
  payload: string;
  status: JobStatus;
  progress: number;
  results: string | null;
  error: string | null;
  attempts: number;
  max_attempts: number;
  run_at: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  cancel_requested: number;
  dedupe_key: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}

/** The job as the API shows it (`GET /job/{job_id}`). */
export interface JobView {
  job_id: string;
  type: string;
  status: JobStatus;
  /** Percent, 0-100. */
  progress: number;
  results: unknown[];
  error: string | null;
  attempts: number;
  max_attempts: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}

/** A job for queue Q; its payload is required unless the queue's payload type allows none. */
export type EnqueueOptions<Q extends QueueName = QueueName> = {
  queue: Q;
  orgId?: string | null;
  maxAttempts?: number;
  /** Earliest start, ms since epoch (defaults to now). */
  runAt?: number;
  /** While a job with this key is pending or processing, enqueueing again returns that job. */
  dedupeKey?: string;
} & (undefined extends JobPayloads[Q] ? { payload?: JobPayloads[Q] } : { payload: JobPayloads[Q] });

export const DEFAULT_MAX_ATTEMPTS = 5;

/** Inserts a job. Runners pick it up at their next poll; `JobRunner.enqueue` wakes its runner at once. */
export function enqueueJob<Q extends QueueName>(db: Database, clock: Clock, options: EnqueueOptions<Q>): { id: string; deduplicated: boolean } {
  const now = clock.now();
  const id = crypto.randomUUID();
  const inserted = db
    .query<{ id: string }, [string, string | null, string, string, number, number, string | null, string, string]>(
      `INSERT INTO jobs (id, org_id, queue, payload, status, max_attempts, run_at, dedupe_key, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING
       RETURNING id`,
    )
    .get(
      id,
      options.orgId ?? null,
      options.queue,
      JSON.stringify(options.payload ?? {}),
      options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      options.runAt ?? now,
      options.dedupeKey ?? null,
      isoAt(now),
      isoAt(now),
    );
  if (inserted) return { id: inserted.id, deduplicated: false };
  const existing = db
    .query<{ id: string }, [string]>(
      "SELECT id FROM jobs WHERE dedupe_key = ? AND status IN ('pending','processing')",
    )
    .get(options.dedupeKey ?? "");
  if (!existing) throw new Error(`could not enqueue job on queue ${options.queue}`);
  return { id: existing.id, deduplicated: true };
}

/**
 * Waits until a job reaches a terminal status or the time is up, and returns its row then.
 * Polls the table, so it sees jobs finished by any worker (another process included).
 */
export async function waitForJob(db: Database, id: string, timeoutMs: number, signal?: AbortSignal): Promise<JobRow | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = getJobRow(db, id);
    if (!row || TERMINAL_STATUSES.has(row.status) || Date.now() >= deadline || signal?.aborted) return row;
    await Bun.sleep(Math.min(100, Math.max(1, deadline - Date.now())));
  }
}

export function getJobRow(db: Database, id: string): JobRow | null {
  return db.query<JobRow, [string]>("SELECT * FROM jobs WHERE id = ?").get(id);
}

/** A job of the organization, or 404: another tenant's job is indistinguishable from a missing one. */
export function getJobForOrg(db: Database, orgId: string, id: string): JobView {
  const row = db.query<JobRow, [string, string]>("SELECT * FROM jobs WHERE id = ? AND org_id = ?").get(id, orgId);
  if (!row) throw new ApiError("JOB_NOT_FOUND", `job ${id} not found`);
  return toJobView(row);
}

/** A job in the organization's list: the job plus the file it works on, when it works on one. */
export interface ListedJob extends JobView {
  file_id: string | null;
}

export interface JobListFilter {
  status?: JobStatus;
  queue?: string;
}

/** The organization's jobs, newest first (finished jobs stay 14 days; see ops/maintenance.ts). */
export function listJobsForOrg(db: Database, orgId: string, filter: JobListFilter, limit: number, offset: number): { rows: ListedJob[]; total: number } {
  const where = ["org_id = ?"];
  const args: (string | number)[] = [orgId];
  if (filter.status) (where.push("status = ?"), args.push(filter.status));
  if (filter.queue) (where.push("queue = ?"), args.push(filter.queue));
  const clause = where.join(" AND ");
  const total = db.query<{ n: number }, (string | number)[]>(`SELECT count(*) AS n FROM jobs WHERE ${clause}`).get(...args)!.n;
  const rows = db
    .query<JobRow & { file_id: string | null }, (string | number)[]>(
      `SELECT *, json_extract(payload, '$.fileId') AS file_id FROM jobs WHERE ${clause} ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`,
    )
    .all(...args, limit, offset);
  return { rows: rows.map((row) => ({ ...toJobView(row), file_id: row.file_id ?? null })), total };
}

export function toJobView(row: JobRow): JobView {
  return {
    job_id: row.id,
    type: row.queue,
    status: row.status,
    progress: row.progress,
    results: row.results ? (JSON.parse(row.results) as unknown[]) : [],
    error: row.error,
    attempts: row.attempts,
    max_attempts: row.max_attempts,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    updated_at: row.updated_at,
  };
}

/**
 * Cancels a job: a pending job is cancelled at once; a running job is asked to stop and becomes
 * `cancelled` when its handler yields (runners poll the flag with every heartbeat;
 * `JobRunner.cancel` also stops it at once when it runs in this process).
 */
export function cancelJob(db: Database, clock: Clock, orgId: string, id: string): JobView {
  const now = isoAt(clock.now());
  return db.transaction(() => {
    const row = db.query<JobRow, [string, string]>("SELECT * FROM jobs WHERE id = ? AND org_id = ?").get(id, orgId);
    if (!row) throw new ApiError("JOB_NOT_FOUND", `job ${id} not found`);
    if (TERMINAL_STATUSES.has(row.status)) {
      throw new ApiError("JOB_FINISHED", `job ${id} is already ${row.status}`);
    }
    if (row.status === "pending") {
      db.query(
        `UPDATE jobs SET status = 'cancelled', finished_at = ?, updated_at = ?, error = 'cancelled by request'
         WHERE id = ?`,
      ).run(now, now, id);
    } else {
      db.query("UPDATE jobs SET cancel_requested = 1, updated_at = ? WHERE id = ?").run(now, id);
    }
    return toJobView(getJobRow(db, id)!);
  }).immediate();
}

/** Deletes jobs that finished more than `retentionMs` ago; returns how many. */
export async function pruneFinishedJobs(db: SqlClient, clock: Clock, retentionMs: number): Promise<number> {
  return (await db.run("DELETE FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ?", [isoAt(clock.now() - retentionMs)])).changes;
}
