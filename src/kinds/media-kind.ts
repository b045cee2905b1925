/**
 * A media kind: what the appliance does with files of one media type, described once by the
 * kind's own folder (src/<kind>/kind.ts) and registered by the composition root (src/app.ts).
 * Modules that treat every kind alike (detection, the file.process queue, the File resource's
 * views and shapes, exports, reprocessing, purging) ask the registry for the file's kind instead
 * of branching on `media_type`; docs/architecture.md says how to add one.
 */
import type { TProperties } from "@sinclair/typebox";
import type { OwnedMigration } from "../db/owned-migrations.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { DocumentType, FileRow, MediaType } from "../files/file.ts";
import type { FileUrls } from "../files/file-urls.ts";
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

/** What `file-type` recognised in a file's first bytes. */
export interface RecognisedContent {
  /** Its extension for the format: "jpg", "pdf", "mp4", "wav", ... */
  ext: string;
  mime: string;
}

/** A kind's files arrive as uploaded bytes, recognised by their content (ingest/detect.ts). */
export interface UploadedContent {
  type: MediaType;
  /** The kind's reading of recognised content, or null when the content is not of this kind. */
  detect(found: RecognisedContent): { mime: string; format: string; documentType?: DocumentType } | null;
  /** The formats it takes, for the refusal of everything else: "images (jpeg, png, ...)". */
  accepts: string;
  /** Largest file taken through the streaming endpoints (larger files go through upload intents). */
  maxStreamingBytes: number;
  /**
   * What a client's declared content type (parameters dropped, lower case) or file name says of
   * a file of this kind before any byte exists (upload intents, cloud listings): a forecast only,
   * the content decides when the bytes arrive. Absent: files of the kind are never forecast.
   */
  hints?: { contentTypes: RegExp; names: RegExp };
}

/** The kind's part of the File resource (GET /files, GET /files/{id}): its fields beyond the common ones. */
export interface KindView {
  /** Response schema of the fields `summary` gives (listings and the detail). */
  summaryFields: TProperties;
  /** Response schema of the fields only the detail shows (`detail` gives them). */
  detailFields: TProperties;
  /**
   * The summary fields of several of the kind's files (a listing page's), in their order. Reads
   * through `urls.sql` (either database), each of the kind's tables once for the lot, not once a
   * file: a page of 100 files costs a few reads, not a few hundred.
   */
  summaries(rows: FileRow[], urls: FileUrls): Promise<Record<string, unknown>[]>;
  detail(row: FileRow, urls: FileUrls): Promise<Record<string, unknown>>;
}

export type ExportCell = string | number | null;

/** A column of POST /files/export the kind adds, listed under its type by GET /files/export/columns. */
export interface ExportColumn {
  key: string;
  display: string;
}

/** The kind's own export columns and how their cells are read. */
export interface KindExports {
  columns: ExportColumn[];
  /** Reads what the columns show of these files of the kind (each table once for the lot) and answers a file's cell of a column. */
  read(rows: FileRow[]): Promise<(row: FileRow, key: string) => ExportCell>;
}

/** A file's processing queued again (POST /files/{id}/reprocess answers with it). */
export interface Reprocessed {
  file: FileRow;
  jobIds: string[];
  /** "processing queued again", or the kind's own words ("crawl queued again"). */
  message: string;
  /** A link's crawl_status (an extension of the answer); null for other kinds. */
  crawlStatus: string | null;
}

/** What a kind's files offer rule conditions beyond the common fields (rules/conditions.ts names them; a file of another kind has them null). */
export interface KindConditionFacts {
  page_count?: number | null;
  duration_seconds?: number | null;
  /** A saved page's host. */
  domain?: string | null;
}

/** Work on a file going on now, outside or beside what its processing job's state says (a document's chunks being embedded). */
export interface WorkInFlight {
  /** Ends "file X cannot be deleted while …": "its chunks are being embedded". */
  reason: string;
  /** Queueing the file's processing again would replace what the work reads. */
  blocksReprocessing: boolean;
}

export interface MediaKind<Type extends MediaType = MediaType> {
  type: Type;
  /** Null: the kind's files do not arrive as bytes (a link is saved by its URL). */
  content: UploadedContent | null;
  /** Null: files of this kind are stored and never analysed (processing_status `stored`). */
  pipeline: MediaPipeline | null;
  /**
   * The kind's own tables: their schema migrations, in the kind's own numbering (append only),
   * applied after the core migrations before the server listens (Appliance.prepare) and recorded per kind, so a
   * kind brings its tables without a numbered migration in src/db/migrations/. The built-in
   * kinds' tables predate this and are core migrations.
   */
  tables?: OwnedMigration[];
  view: KindView;
  /**
   * Records the kind's own starting states of a file queued for its pipeline (what the pipeline
   * has still to do: variants `pending`, ...), in the transaction that records the file at upload
   * or queues its processing again (`tx`); the kind's tables hold them, not the files row.
   */
  queued?(fileId: string, tx: SqlClient): Promise<void>;
  /**
   * The facts of one of the kind's files that rule conditions test (read when a rule is evaluated),
   * through `sql` (the caller's client or transaction).
   */
  conditionFacts?(sql: SqlClient, fileId: string): Promise<KindConditionFacts>;
  /** What is being done to the file now that deleting it (or reprocessing it) must wait for, read through `sql` (the caller's transaction); none when absent. */
  busy?(sql: SqlClient, fileId: string): Promise<WorkInFlight[]>;
  /** Columns of the kind's own in exports (the built-in kinds' are library/exports.ts's). */
  exports?: KindExports;
  /** Removes what the kind derived from a file outside its row (blobs, vectors) before the row is purged. */
  purge?(fileId: string): Promise<void>;
  /** Runs a file's processing again the kind's own way (a link is crawled again); else a new file.process job. */
  reprocess?(orgId: string, fileId: string): Promise<Reprocessed>;
}

/** The kinds this server knows, by media type. */
export class MediaKinds {
  private readonly byType = new Map<MediaType, MediaKind>();

  register(kind: MediaKind): void {
    if (this.byType.has(kind.type)) throw new Error(`media kind "${kind.type}" is registered twice`);
    if (kind.content && kind.content.type !== kind.type) throw new Error(`media kind "${kind.type}" detects content as "${kind.content.type}"`);
    this.byType.set(kind.type, kind);
  }

  for(type: MediaType): MediaKind | null {
    return this.byType.get(type) ?? null;
  }

  /** The kind of a stored file: a row whose kind is not registered is a broken installation, not a request error. */
  of(row: Pick<FileRow, "id" | "media_type">): MediaKind {
    const kind = this.byType.get(row.media_type);
    if (!kind) throw new Error(`file ${row.id} is of media type "${row.media_type}", which no registered kind handles`);
    return kind;
  }

  all(): MediaKind[] {
    return [...this.byType.values()];
  }

  types(): MediaType[] {
    return [...this.byType.keys()];
  }

  /**
   * The kind a client's declared type, else its file name, suggests (UploadedContent.hints), or
   * null when no kind's does. A forecast: detection decides from the bytes.
   */
  forecast(contentType: string, filename: string): MediaType | null {
    const mime = contentType.split(";")[0]!.trim().toLowerCase();
    const uploaded = this.uploaded();
    return (uploaded.find((c) => c.hints?.contentTypes.test(mime)) ?? uploaded.find((c) => c.hints?.names.test(filename)))?.type ?? null;
  }

  /** The kinds whose files arrive as bytes, in registration order (the order detection asks them in). */
  uploaded(): UploadedContent[] {
    return this.all().flatMap((kind) => (kind.content ? [kind.content] : []));
  }
}
