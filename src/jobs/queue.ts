/**
 * The durable job table's operations that do not need a running worker: insert (callable inside
 * the caller's transaction, so a record and the job that processes it commit together), read,
 * request cancellation, prune. The jobs module (this file and runner.ts) is the table's only
 * writer. Application code enqueues through `JobRunner.enqueue`, which also wakes the runner.
 */
import type { Database } from "bun:sqlite";
import type { SqlClient } from "../db/sql-client.ts";
import { isoAt, type Clock } from "../clock.ts";
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

/** A job in the organization's list: the job plus the file it works on, when it works on one. */
export interface ListedJob extends JobView {
  file_id: string | null;
}

export interface JobListFilter {
  status?: JobStatus;
  queue?: string;
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

/** Deletes jobs that finished more than `retentionMs` ago; returns how many. */
export async function pruneFinishedJobs(db: SqlClient, clock: Clock, retentionMs: number): Promise<number> {
  return (await db.run("DELETE FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ?", [isoAt(clock.now() - retentionMs)])).changes;
}
