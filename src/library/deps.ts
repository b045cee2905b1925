/**
 * The services the library feature uses. The composition root (src/app.ts) builds them once and
 * passes its context, which satisfies this interface: the feature names what it needs and no more.
 */
import type { Clock } from "../clock.ts";
import type { CloudConnections } from "../cloud/connections.ts";
import type { Config } from "../config.ts";
import type { FileRepository } from "../files/file-repository.ts";
import type { JobRunner } from "../jobs/runner.ts";
import type { MediaKinds } from "../kinds/media-kind.ts";
import type { Logger } from "../log.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { BlobStore } from "../storage/blob-store.ts";
import type { VectorSpaces } from "../vectors/vector-spaces.ts";

export interface LibraryDeps {
  config: Config;
  /** The data-access port over the same database (docs/scale-out.md): the modules converted to it read and write through this. */
  sql: SqlClient;
  /** The only writer of the `files` table. */
  files: FileRepository;
  clock: Clock;
  log: Logger;
  jobs: JobRunner;
  blobs: BlobStore;
  /** The vector spaces ("similar images", removing a purged file's vectors). */
  spaces: VectorSpaces;
  /** The media kinds (images, documents, videos, links) and what each does with its files. */
  kinds: MediaKinds;
  /** Cloud drive providers, OAuth flows and connections (their tokens, refreshes, picker). */
  cloud: CloudConnections;
}
