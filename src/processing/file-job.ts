/**
 * The start every job about one file shares: load the file, and when it was deleted in the
 * meantime, complete at once saying so rather than work on a file nobody can see any more.
 */
import type { FileRepository } from "../files/file-repository.ts";
import type { FileRow } from "../files/file.ts";
import type { FileJobPayload, JobPayloads, QueueName } from "../jobs/catalogue.ts";
import type { JobContext, QueueDefinition } from "../jobs/runner.ts";

/** The queues whose jobs are about one file. */
export type FileQueue = { [Q in QueueName]: JobPayloads[Q] extends FileJobPayload ? Q : never }[QueueName];

export type FileJobDefinition<Q extends FileQueue> = Omit<QueueDefinition<Q>, "handler"> & {
  /** Runs with the file's current row; never called for a deleted or missing file. */
  handle(file: FileRow, job: JobContext<FileJobPayload>): Promise<unknown[] | void>;
};

export function fileJob<Q extends FileQueue>(ctx: { files: FileRepository }, { handle, ...definition }: FileJobDefinition<Q>): QueueDefinition<Q> {
  return {
    ...definition,
    async handler(job) {
      const { fileId } = job.payload as FileJobPayload;
      const file = await ctx.files.byId(fileId);
      if (!file || file.deleted_at) return [{ file_id: fileId, skipped: "file deleted" }];
      return handle(file, job as JobContext<FileJobPayload>);
    },
  } as QueueDefinition<Q>;
}
