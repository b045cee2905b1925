/**
 * The `file.process` queue: every stored file gets one job, enqueued in the transaction that
 * creates its record. The job hands the file to the pipeline registered for its media type, at
 * most the pipeline's `concurrency` files of that type at once (a photo's decode and models take
 * a core and hundreds of MB; a note takes a few ms, mostly waiting, so notes run more at once).
 * Until a media type has a pipeline, the job records the file as `stored` (bytes safe, no
 * analysis ran), which the status endpoints show as such and never as `completed`.
 */
import type { AppContext } from "../context.ts";
import type { FileRow, MediaType } from "../files/file.ts";
import type { FileJobPayload } from "../jobs/catalogue.ts";
import { PermanentJobError, type JobContext, type QueueDefinition } from "../jobs/runner.ts";
import { fileJob } from "./file-job.ts";
import { KeyedLimiter } from "../keyed-limiter.ts";
import { errorMessage } from "../errors.ts";


export interface MediaPipeline {
  mediaType: MediaType;
  /** What the pipeline produces, reported at upload (thumbnail_generation_started, analysis_started). */
  produces: { thumbnails: boolean; analysis: boolean };
  /** Files of this type processed at once (at most FILE_JOBS_AT_ONCE). */
  concurrency: number;
  run(ctx: AppContext, job: JobContext<FileJobPayload>, file: FileRow): Promise<PipelineReport>;
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

/** file.process jobs running at once, across media types. */
const FILE_JOBS_AT_ONCE = 4;

export function fileProcessingQueue(ctx: AppContext, pipelines: PipelineRegistry): QueueDefinition<"file.process"> {
  const perType = new KeyedLimiter((mediaType) => pipelines.for(mediaType as MediaType)?.concurrency ?? 1);
  return fileJob(ctx, {
    name: "file.process",
    concurrency: FILE_JOBS_AT_ONCE,
    timeoutMs: 30 * 60 * 1000,
    async handle(file, job) {
      const pipeline = pipelines.for(file.media_type);
      if (!pipeline) {
        await job.write(() => ctx.files.processingEnded(file.id, "stored", null));
        return [{ file_id: file.id, processing_status: "stored" }];
      }
      const report = await perType.run(file.media_type, async (): Promise<PipelineReport> => {
        await job.write(() => ctx.files.processingStarted(file.id, job.attempt));
        try {
          return await pipeline.run(ctx, job, file);
        } catch (err) {
          const final = job.attempt >= job.maxAttempts || err instanceof PermanentJobError;
          ctx.db.transaction(() => {
            ctx.files.processingEnded(file.id, final ? "failed" : "processing", errorMessage(err));
            if (final) ctx.libraryEvents.emit("file.processed", { file: ctx.files.byId(file.id)!, outcome: "failed", error: errorMessage(err) });
          })();
          throw err;
        }
      });
      await job.write(() => {
        ctx.files.processingEnded(file.id, "completed", report.warnings);
        ctx.libraryEvents.emit("file.processed", { file: ctx.files.byId(file.id)!, outcome: "completed", error: null });
      });
      return [{ ...report.summary, file_id: file.id, processing_status: "completed" }];
    },
  });
}
