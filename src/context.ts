/**
 * Everything a request handler or job handler may need, built once by the server and passed
 * down explicitly (no module-level singletons, so tests can run several servers side by side).
 */
import type { Database } from "bun:sqlite";
import type { Accounts } from "./accounts/accounts.ts";
import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { JobRunner } from "./jobs/runner.ts";
import type { BackgroundWork } from "./jobs/background-work.ts";
import type { Logger } from "./log.ts";
import type { Metrics } from "./metrics.ts";
import type { EventHub } from "./events/hub.ts";
import type { LibraryEvents } from "./events/library-events.ts";
import type { FileRepository } from "./files/file-repository.ts";
import type { UploadSlots } from "./ingest/upload-slots.ts";
import type { TextEmbedding } from "./embeddings/text-embedder.ts";
import type { DocumentReader } from "./documents/document-reader.ts";
import type { ImageAnalyzers } from "./images/analyzers.ts";
import type { OcrRouter } from "./ocr/ocr-router.ts";
import type { ModelVerifier } from "./models/model-verifier.ts";
import type { MediaKinds } from "./kinds/media-kind.ts";
import type { BlobStore } from "./storage/blob-store.ts";
import type { DataDir } from "./storage/data-dir.ts";
import type { RateLimiter } from "./ratelimit/limiter.ts";
import type { VectorIndex } from "./vectors/vector-index.ts";
import type { GroupCommit } from "./db/group-commit.ts";
import type { VideoEngine } from "./video/video-engine.ts";
import type { LinkFetcher } from "./links/link-fetcher.ts";
import type { CloudConnections } from "./cloud/connections.ts";

export interface AppContext {
  config: Config;
  /** Where everything under --data-dir lives; the only builder of paths there. */
  dataDir: DataDir;
  db: Database;
  /** Shared transactions for the writes of tasks running side by side (bulk imports). */
  writes: GroupCommit;
  /** The only writer of the `files` table. */
  files: FileRepository;
  clock: Clock;
  log: Logger;
  /** Prometheus metrics observed where things happen (GET /metrics). */
  metrics: Metrics;
  limiter: RateLimiter;
  jobs: JobRunner;
  /** Files being analysed, which work that can wait (model preparation, re-embedding) gives way to. */
  background: BackgroundWork;
  blobs: BlobStore;
  uploadSlots: UploadSlots;
  /** The media kinds (images, documents, videos, links) and what each does with its files. */
  kinds: MediaKinds;
  /** Checks model folders against the models directory's manifest before they load. */
  models: ModelVerifier;
  /** Image models (detectors, embeddings, captioning), loaded lazily. */
  images: ImageAnalyzers;
  /** Text recognition for images, scanned pages and video frames (PP-OCR or tesseract by kind), loaded lazily. */
  ocr: OcrRouter;
  /** Sentence-embedding model and its tokenizer for document chunks and search, loaded lazily. */
  embedder: TextEmbedding;
  /** Reads documents in a killable child process (started on first use). */
  documentReader: DocumentReader;
  /** Vector spaces in sqlite-vec and their in-memory scans. */
  vectors: VectorIndex;
  /** ffmpeg and ffprobe for videos, found on first use. */
  video: VideoEngine;
  events: EventHub;
  /** What happens in the library (a file processed, a batch finished), for rules and webhooks to react to. */
  libraryEvents: LibraryEvents;
  /** The link crawler's fetch policy and per-domain politeness. */
  links: LinkFetcher;
  /** Cloud drive providers, OAuth flows and connections (their tokens, refreshes, picker). */
  cloud: CloudConnections;
  /** Users, sessions, sign-in flows, their mailer and the site's identity provider. */
  accounts: Accounts;
}
