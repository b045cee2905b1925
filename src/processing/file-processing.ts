/**
 * The `file.process` queue: every stored file gets one job, enqueued in the transaction that
 * creates its record. The job hands the file to the pipeline registered for its media type.
 * Until a media type has a pipeline, the job records the file as `stored` (bytes safe, no
 * analysis ran), which the status endpoints show as such and never as `completed`.
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";
import type { AppContext } from "../context.ts";
import type { MediaType } from "../ingest/detect.ts";
import type { JobContext, QueueDefinition } from "../jobs/runner.ts";
import { errorMessage } from "../errors.ts";

export const FILE_PROCESSING_QUEUE = "file.process";

export interface FileProcessingPayload {
  fileId: string;
}

export interface MediaPipeline {
  mediaType: MediaType;
  /** What the pipeline produces, reported at upload (thumbnail_generation_started, analysis_started). */
  produces: { thumbnails: boolean; analysis: boolean };
  run(ctx: AppContext, job: JobContext<FileProcessingPayload>, fileId: string): Promise<PipelineReport>;
}

export interface PipelineReport {
  /** Becomes the job's result (GET /job/{id} results[0]). */
  summary: Record<string, unknown>;
  /** Stages that failed while the file as a whole completed; kept as the file's processing_error. */
  warnings: string | null;
}

export class PipelineRegistry {
  private readonly byType = new Map<MediaType, MediaPipeline>();

  register(pipeline: MediaPipeline): void {
    this.byType.set(pipeline.mediaType, pipeline);
  }

  for(mediaType: MediaType): MediaPipeline | null {
    return this.byType.get(mediaType) ?? null;
  }
}

function setStatus(db: Database, clock: Clock, fileId: string, status: "processing" | "stored" | "completed" | "failed", error: string | null = null) {
  const now = isoAt(clock.now());
  db.query(
    `UPDATE files SET processing_status = ?, processing_error = ?, updated_at = ?,
       processing_started_at = CASE WHEN ? = 'processing' THEN ? ELSE processing_started_at END,
       processing_completed_at = CASE WHEN ? IN ('stored','completed','failed') THEN ? ELSE processing_completed_at END,
       last_error_at = CASE WHEN ? IS NULL THEN last_error_at ELSE ? END
     WHERE id = ?`,
  ).run(status, error, now, status, now, status, now, error, now, fileId);
}

export function fileProcessingQueue(ctx: AppContext, pipelines: PipelineRegistry): QueueDefinition<FileProcessingPayload> {
  return {
    name: FILE_PROCESSING_QUEUE,
    concurrency: 2,
    timeoutMs: 30 * 60 * 1000,
    async handler(job) {
      const file = ctx.db
        .query<{ media_type: MediaType; deleted_at: string | null }, [string]>("SELECT media_type, deleted_at FROM files WHERE id = ?")
        .get(job.payload.fileId);
      if (!file || file.deleted_at) return [{ file_id: job.payload.fileId, skipped: "file deleted" }];
      if (job.attempt > 1) ctx.db.query("UPDATE files SET retry_count = ? WHERE id = ?").run(job.attempt - 1, job.payload.fileId);
      const pipeline = pipelines.for(file.media_type);
      if (!pipeline) {
        job.transaction(() => setStatus(ctx.db, ctx.clock, job.payload.fileId, "stored"));
        return [{ file_id: job.payload.fileId, processing_status: "stored" }];
      }
      job.transaction(() => setStatus(ctx.db, ctx.clock, job.payload.fileId, "processing"));
      let report: PipelineReport;
      try {
        report = await pipeline.run(ctx, job, job.payload.fileId);
      } catch (err) {
        const message = errorMessage(err);
        const max = ctx.db.query<{ max_attempts: number }, [string]>("SELECT max_attempts FROM jobs WHERE id = ?").get(job.jobId)?.max_attempts ?? 1;
        const final = job.attempt >= max || (err instanceof Error && err.name === "PermanentJobError");
        setStatus(ctx.db, ctx.clock, job.payload.fileId, final ? "failed" : "processing", message);
        throw err;
      }
      job.transaction(() => setStatus(ctx.db, ctx.clock, job.payload.fileId, "completed", report.warnings));
      return [{ ...report.summary, file_id: job.payload.fileId, processing_status: "completed" }];
    },
  };
}
