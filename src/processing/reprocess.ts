/**
 * Running a file's processing again (POST /files/{id}/reprocess, extension): a failed file gets a
 * second chance (a model installed since, a stored original put back, a worker that ran out of
 * memory). The file goes back to `queued` with a new `file.process` job, enqueued in the same
 * transaction, exactly as an upload leaves it; a kind may run it its own way instead (a link is
 * crawled again). Refused (409) while the file is still being worked on.
 */
import type { SqlClient } from "../db/sql-client.ts";
import { ApiError } from "../errors.ts";
import type { FileRepository } from "../files/file-repository.ts";
import type { MediaKinds, Reprocessed } from "../kinds/media-kind.ts";
import type { JobRunner } from "../jobs/runner.ts";

export interface ReprocessDeps {
  sql: SqlClient;
  files: FileRepository;
  jobs: JobRunner;
  kinds: MediaKinds;
}

/** Job states in which the file's processing will still move on by itself. */
const LIVE_JOB = new Set(["pending", "processing"]);

export async function reprocessFile(ctx: ReprocessDeps, orgId: string, ref: string): Promise<Reprocessed> {
  const row = await ctx.files.find(orgId, ref);
  const ownWay = ctx.kinds.for(row.media_type)?.reprocess;
  if (ownWay) return ownWay(orgId, row.id);
  // The kind's busy check is still synchronous on the SQLite handle the transaction holds.
  const jobId = await ctx.sql.transaction(async (tx) => {
    const files = ctx.files.withTx(tx);
    const current = (await files.byId(row.id))!;
    if (!current.blob_key) {
      if (current.processing_status === "failed") throw new ApiError("FILE_NOT_STORED", `file ${row.id} has no stored bytes (${current.processing_error ?? "its import failed"}); import it again`);
      throw new ApiError("FILE_PROCESSING", `file ${row.id} is still being imported; try again when it finishes`);
    }
    const inFlight = (await ctx.kinds.of(current).busy?.(tx, row.id))?.find((work) => work.blocksReprocessing);
    if (inFlight) throw new ApiError("FILE_PROCESSING", `file ${row.id} cannot be processed again while ${inFlight.reason}; try again when that finishes`);
    const previous = current.processing_job_id ? await ctx.jobs.store.get(current.processing_job_id, tx) : null;
    const orphaned = !previous || !LIVE_JOB.has(previous.status);
    const job = await ctx.jobs.submit({ queue: "file.process", orgId, payload: { fileId: row.id } }, tx);
    // Refused: the throw rolls the new job back with the transaction.
    if (!(await files.reprocessQueued(row.id, job.id, orphaned))) {
      throw new ApiError("FILE_PROCESSING", `file ${row.id} is still being processed (processing_status ${current.processing_status}); try again when it finishes`);
    }
    await ctx.kinds.of(current).queued?.(row.id, tx);
    return job.id;
  });
  return { file: (await ctx.files.byId(row.id))!, jobIds: [jobId], message: "processing queued again", crawlStatus: null };
}
