/**
 * The durable job table's shapes (a row, the API's view, what enqueueing takes) and its pruning.
 * The jobs module (this file, job-store.ts and runner.ts) is the table's only writer. Application
 * code enqueues through `JobRunner.submit`, inside its caller's port transaction or alone, which
 * also wakes the runner.
 */
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
