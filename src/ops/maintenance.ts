/**
 * Periodic housekeeping that needs no durability (it is idempotent and simply runs again):
 * pruning finished jobs and old telemetry, failing expired upload intents and removing their bytes, purging files deleted more than 30 days ago,
 * deleting the objects of batch uploads whose process died before their session was written.
 */
import { pruneFinishedJobs } from "../jobs/queue.ts";
import { pruneTokens } from "../accounts/email-tokens.ts";
import { pruneSessions } from "../accounts/sessions.ts";
import { pruneThrottle } from "../accounts/throttle.ts";
import type { OpsDeps } from "./deps.ts";
import { sweepExpiredIntents } from "../ingest/intents.ts";
import { sweepBatchObjectsInFlight } from "../ingest/batch-objects.ts";
import { purgeDeletedFiles } from "../library/file-edits.ts";
import { pruneUploadEvents } from "../telemetry/upload-events.ts";

export const FINISHED_JOB_RETENTION_DAYS = 14;
const INTERVAL_MS = 60 * 60 * 1000;

export async function runMaintenance(ctx: OpsDeps): Promise<{ jobs: number; uploadEvents: number; accounts: number }> {
  const jobs = await pruneFinishedJobs(ctx.sql, ctx.clock, FINISHED_JOB_RETENTION_DAYS * 86_400_000);
  const uploadEvents = await pruneUploadEvents(ctx.sql, ctx.clock);
  // Ended sessions, used or expired mailed tokens, login counters whose lock is over.
  const accounts = (await pruneSessions(ctx.sql, ctx.clock)) + (await pruneTokens(ctx.sql, ctx.clock)) + (await pruneThrottle(ctx.sql, ctx.clock));
  if (jobs || uploadEvents || accounts) ctx.log.info("maintenance pruned rows", { jobs, upload_events: uploadEvents, account_rows: accounts });
  return { jobs, uploadEvents, accounts };
}

/** Starts the hourly schedule; returns a function that stops it. */
export function startMaintenance(ctx: OpsDeps): () => void {
  const run = () => {
    runMaintenance(ctx).catch((err) => ctx.log.error("maintenance failed", { err }));
    sweepExpiredIntents(ctx).catch((err) => ctx.log.error("upload intent sweep failed", { err }));
    sweepBatchObjectsInFlight(ctx).then(
      (deleted) => deleted && ctx.log.info("deleted objects of batch uploads cut off before their session was written", { objects: deleted }),
      (err) => ctx.log.error("sweep of batch objects in flight failed", { err }),
    );
    purgeDeletedFiles(ctx).catch((err) => ctx.log.error("purge of deleted files failed", { err }));
  };
  const first = setTimeout(run, 5_000);
  const timer = setInterval(run, INTERVAL_MS);
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
