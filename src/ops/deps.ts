/**
 * The services operations use: probes and metrics, and the purges of maintenance (the trash,
 * expired intents, sessions). The composition root (src/app.ts) builds them once and passes its
 * context, which satisfies this interface.
 */
import type { BackgroundWork } from "../jobs/background-work.ts";
import type { IngestDeps } from "../ingest/deps.ts";
import type { LibraryDeps } from "../library/deps.ts";
import type { TextEmbedding } from "../embeddings/text-embedder.ts";
import type { SqlClient } from "../db/sql-client.ts";

export interface OpsDeps extends IngestDeps, LibraryDeps {
  /** Files being analysed, which work that can wait (model preparation, re-embedding) gives way to. */
  background: BackgroundWork;
  /** Sentence-embedding model and its tokenizer for document chunks and search, loaded lazily. */
  embedder: TextEmbedding;
  /** The data-access port: housekeeping of the tables already on it (jobs, upload events). */
  sql: SqlClient;
}
