/**
 * The `file.process` queue: every stored file gets one job, enqueued in the transaction that
 * creates its record. The job hands the file to the pipeline of its media kind, at
 * most the pipeline's `concurrency` files of that type at once (a photo's decode and models take
 * a core and hundreds of MB; a note takes a few ms, mostly waiting, so notes run more at once).
 * When a kind has no pipeline, the job records the file as `stored` (bytes safe, no
 * analysis ran), which the status endpoints show as such and never as `completed`.
 */
import type { SqlClient } from "../db/sql-client.ts";
import type { LibraryEvents } from "../events/library-events.ts";
import type { FileRepository } from "../files/file-repository.ts";
import type { MediaType } from "../files/file.ts";
import type { MediaKinds, PipelineReport } from "../kinds/media-kind.ts";
import { PermanentJobError, type QueueDefinition } from "../jobs/runner.ts";
import { fileJob } from "./file-job.ts";
import { KeyedLimiter } from "../keyed-limiter.ts";
import { errorMessage } from "../errors.ts";
import type { BackgroundWork } from "../jobs/background-work.ts";

export interface FileProcessingDeps {
  sql: SqlClient;
  files: FileRepository;
  libraryEvents: LibraryEvents;
  /** Told while a file is analysed: work that can wait gives way meanwhile. */
  background: BackgroundWork;
}

/** file.process jobs running at once, across media types. */
const FILE_JOBS_AT_ONCE = 4;

export function fileProcessingQueue(ctx: FileProcessingDeps, kinds: MediaKinds): QueueDefinition<"file.process"> {
  const perType = new KeyedLimiter((mediaType) => kinds.for(mediaType as MediaType)?.pipeline?.concurrency ?? 1);
  return fileJob(ctx, {
    name: "file.process",
    concurrency: FILE_JOBS_AT_ONCE,
    timeoutMs: 30 * 60 * 1000,
    async handle(file, job) {
      const pipeline = kinds.for(file.media_type)?.pipeline;
      if (!pipeline) {
        await job.transaction((tx) => ctx.files.withTx(tx).processingEnded(file.id, "stored", null));
        return [{ file_id: file.id, processing_status: "stored" }];
      }
      const report = await perType.run(file.media_type, async (): Promise<PipelineReport> => {
        await job.transaction((tx) => ctx.files.withTx(tx).processingStarted(file.id, job.attempt));
        const analysing = ctx.background.foreground();
        try {
          return await pipeline.run(job, file);
        } catch (err) {
          const final = job.attempt >= job.maxAttempts || err instanceof PermanentJobError;
          // The listeners of file.processed record what they start (a job) in this transaction.
          await ctx.sql.transaction(async (tx) => {
            const files = ctx.files.withTx(tx);
            await files.processingEnded(file.id, final ? "failed" : "processing", errorMessage(err));
            if (final) await ctx.libraryEvents.emit("file.processed", tx, { file: (await files.byId(file.id))!, outcome: "failed", error: errorMessage(err) });
          });
          throw err;
        } finally {
          analysing();
        }
      });
      await job.transaction(async (tx) => {
        const files = ctx.files.withTx(tx);
        await files.processingEnded(file.id, "completed", report.warnings);
        await ctx.libraryEvents.emit("file.processed", tx, { file: (await files.byId(file.id))!, outcome: "completed", error: null });
      });
      return [{ ...report.summary, file_id: file.id, processing_status: "completed" }];
    },
  });
}
