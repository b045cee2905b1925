/**
 * A media kind: what the appliance does with files of one media type, described once by the
 * kind's own folder (src/<kind>/kind.ts) and registered by the composition root (src/app.ts).
 * Modules that treat every kind alike (the file.process queue, reprocessing, purging) ask the
 * registry for the file's kind instead of branching on `media_type`.
 */
import type { FileRow, MediaType } from "../files/file.ts";
import type { FileJobPayload } from "../jobs/catalogue.ts";
import type { JobContext } from "../jobs/runner.ts";

export interface PipelineReport {
  /** Becomes the job's result (GET /job/{id} results[0]). */
  summary: Record<string, unknown>;
  /** Stages that failed while the file as a whole completed; kept as the file's processing_error. */
  warnings: string | null;
}

/** How a kind's files are processed by the `file.process` queue. */
export interface MediaPipeline {
  /** What the pipeline produces, reported at upload (thumbnail_generation_started, analysis_started). */
  produces: { thumbnails: boolean; analysis: boolean };
  /** Files of this type processed at once (at most the queue's own concurrency). */
  concurrency: number;
  run(job: JobContext<FileJobPayload>, file: FileRow): Promise<PipelineReport>;
}

export interface MediaKind {
  type: MediaType;
  /** Null: files of this kind are stored and never analysed (processing_status `stored`). */
  pipeline: MediaPipeline | null;
  /** Removes what the kind derived from a file outside its row (blobs, vectors) before the row is purged. */
  purge?(fileId: string): Promise<void>;
  /** Runs a file's processing again the kind's own way (a link is crawled again); else a new file.process job. */
  reprocess?(orgId: string, fileId: string): { file: FileRow; jobIds: string[] };
}

/** The kinds this server knows, by media type. */
export class MediaKinds {
  private readonly byType = new Map<MediaType, MediaKind>();

  register(kind: MediaKind): void {
    if (this.byType.has(kind.type)) throw new Error(`media kind "${kind.type}" is registered twice`);
    this.byType.set(kind.type, kind);
  }

  for(type: MediaType): MediaKind | null {
    return this.byType.get(type) ?? null;
  }

  all(): MediaKind[] {
    return [...this.byType.values()];
  }
}
