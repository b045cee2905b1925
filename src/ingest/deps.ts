/**
 * The services the ingest feature uses. The composition root (src/app.ts) builds them once and
 * passes its context, which satisfies this interface: the feature names what it needs and no more.
 */
import type { Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { EventHub } from "../events/hub.ts";
import type { LibraryEvents } from "../events/library-events.ts";
import type { FileRepository } from "../files/file-repository.ts";
import type { UploadSlots } from "./upload-slots.ts";
import type { JobRunner } from "../jobs/runner.ts";
import type { MediaKinds } from "../kinds/media-kind.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import type { ProgressBoard } from "../processing/progress-board.ts";
import type { BlobStore } from "../storage/blob-store.ts";
import type { DataDir } from "../storage/data-dir.ts";

export interface IngestDeps {
  config: Config;
  /** Where everything under --data-dir lives; the only builder of paths there. */
  dataDir: DataDir;
  /** The data-access port over the same database (docs/scale-out.md). */
  sql: SqlClient;
  /** The only writer of the `files` table. */
  files: FileRepository;
  clock: Clock;
  log: Logger;
  /** Prometheus metrics observed where things happen (GET /metrics). */
  metrics: Metrics;
  jobs: JobRunner;
  blobs: BlobStore;
  uploadSlots: UploadSlots;
  /** The media kinds (images, documents, videos, links) and what each does with its files. */
  kinds: MediaKinds;
  events: EventHub;
  /** What happens in the library (a file processed, a batch finished), for rules and webhooks to react to. */
  libraryEvents: LibraryEvents;
  /** The live progress of the files being analysed, wherever they run (GET /files/uploads-status/{id}). */
  progress: ProgressBoard;
}
