/**
 * What reading a document found (the states of its text extraction and digitization, its page
 * count and language) and the state of its chunks (their count, their embedding), in the document
 * kind's own table `document_facts` (this module is its only writer). A saved link's article is
 * read, chunked and embedded by the same code, so links have a row too. Each change moves the
 * file's updated_at, as when these were columns of its row.
 */
import type { Database } from "bun:sqlite";
import type { FileRepository } from "../files/file-repository.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { factsRowsOf, setFacts } from "../files/facts-table.ts";

export type ReadingStatus = "pending" | "processing" | "completed" | "failed";

export interface DocumentFacts {
  /** pending at upload, processing, completed or failed; null: the file is read by no pipeline. */
  textExtractionStatus: ReadingStatus | null;
  digitizationStatus: ReadingStatus | null;
  pageCount: number | null;
  language: string | null;
  chunkCount: number;
  embeddingStatus: ReadingStatus | null;
}

export interface DocumentFactsDeps {
  db: Database;
  /** Told of each change (the file's updated_at). */
  files: FileRepository;
}

interface DocumentFactsRow {
  text_extraction_status: ReadingStatus | null;
  digitization_status: ReadingStatus | null;
  page_count: number | null;
  language: string | null;
  chunk_count: number;
  embedding_status: ReadingStatus | null;
}

const NONE: DocumentFacts = { textExtractionStatus: null, digitizationStatus: null, pageCount: null, language: null, chunkCount: 0, embeddingStatus: null };

const DOCUMENT_FACTS_COLUMNS = "text_extraction_status, digitization_status, page_count, language, chunk_count, embedding_status";

function toFacts(row: DocumentFactsRow | null | undefined): DocumentFacts {
  if (!row) return NONE;
  return {
    textExtractionStatus: row.text_extraction_status,
    digitizationStatus: row.digitization_status,
    pageCount: row.page_count,
    language: row.language,
    chunkCount: row.chunk_count,
    embeddingStatus: row.embedding_status,
  };
}

/** A file without a row (an image, a document not recorded yet) has none of these facts. */
export async function documentFactsOf(sql: SqlClient, fileId: string): Promise<DocumentFacts> {
  return toFacts(await sql.one<DocumentFactsRow>(`SELECT ${DOCUMENT_FACTS_COLUMNS} FROM document_facts WHERE file_id = ?`, [fileId]));
}

/** The same read on the SQLite handle, for the rules' conditions, which are evaluated synchronously (a bridge until they are not). */
export function documentFactsOnHandle(db: Database, fileId: string): DocumentFacts {
  return toFacts(db.query<DocumentFactsRow, [string]>(`SELECT ${DOCUMENT_FACTS_COLUMNS} FROM document_facts WHERE file_id = ?`).get(fileId));
}

/** The facts of several files in one read (a listing page's), by file id; every id is in the map. */
export async function documentFactsOfFiles(sql: SqlClient, fileIds: readonly string[]): Promise<Map<string, DocumentFacts>> {
  const rows = await factsRowsOf<DocumentFactsRow>(sql, "document_facts", DOCUMENT_FACTS_COLUMNS, fileIds);
  return new Map(fileIds.map((id) => [id, toFacts(rows.get(id))]));
}

/** Sets some of the file's facts (the row is made by the first write). */
function upsert(db: Database, fileId: string, set: Partial<DocumentFactsRow>): void {
  setFacts(db, "document_facts", fileId, set as Record<string, string | number | null>);
}

function changed(ctx: DocumentFactsDeps, fileId: string, set: Partial<DocumentFactsRow>): void {
  upsert(ctx.db, fileId, set);
  ctx.files.touchedOnHandle(ctx.db, fileId);
}

/** The document is still to be read (at upload, and when its processing is queued again). */
export function textPending(db: Database, fileId: string): void {
  upsert(db, fileId, { text_extraction_status: "pending" });
}

export function textExtractionStarted(ctx: DocumentFactsDeps, fileId: string): void {
  changed(ctx, fileId, { text_extraction_status: "processing", digitization_status: "processing" });
}

/** Extraction failed: for good (`final`), or back to pending for the retry (the reason is the file's processing error). */
export function textExtractionFailed(ctx: DocumentFactsDeps, fileId: string, final: boolean): void {
  const status = final ? "failed" : "pending";
  changed(ctx, fileId, { text_extraction_status: status, digitization_status: status });
}

/** The text is read; written with the text (FileRepository.textExtracted, which moves updated_at) in one transaction. */
export function textRead(db: Database, fileId: string, read: { pageCount: number; language: string | null; digitization: "completed" | "failed" }): void {
  upsert(db, fileId, { text_extraction_status: "completed", page_count: read.pageCount, language: read.language, digitization_status: read.digitization });
}

/** The chunks are stored; they wait for embedding (or there is nothing to embed). */
export function chunksStored(ctx: DocumentFactsDeps, fileId: string, count: number): void {
  changed(ctx, fileId, { chunk_count: count, embedding_status: count ? "pending" : "completed" });
}

/** No text model can embed now (the reason joins the file's processing error). */
export function embeddingWaits(ctx: DocumentFactsDeps, fileId: string): void {
  changed(ctx, fileId, { embedding_status: "pending" });
}

export function embeddingStarted(ctx: DocumentFactsDeps, fileId: string): void {
  changed(ctx, fileId, { embedding_status: "processing" });
}

export function embeddingEnded(ctx: DocumentFactsDeps, fileId: string, status: "completed" | "failed"): void {
  changed(ctx, fileId, { embedding_status: status });
}

/** Live files with chunks embedded by another model than `modelId` go back to pending. */
export function embeddingsOfOtherModelsPending(ctx: DocumentFactsDeps, modelId: string): void {
  const stale = ctx.db
    .query<{ id: string }, [string]>(
      `SELECT f.id FROM files f WHERE f.deleted_at IS NULL AND f.id IN (
         SELECT file_id FROM document_chunks WHERE embedding_status = 'completed' AND embedding_model IS NOT ?)`,
    )
    .all(modelId);
  for (const { id } of stale) changed(ctx, id, { embedding_status: "pending" });
}
