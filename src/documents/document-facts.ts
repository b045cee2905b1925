/**
 * What reading a document found (the states of its text extraction and digitization, its page
 * count and language) and the state of its chunks (their count, their embedding), in the document
 * kind's own table `document_facts` (this module is its only writer). A saved link's article is
 * read, chunked and embedded by the same code, so links have a row too. Each change moves the
 * file's updated_at, as when these were columns of its row. Writers take a `SqlClient`: the
 * caller's port transaction (`tx`) or the group-commit client; a change and its updated_at commit
 * together either way.
 */
import { atomically, type SqlClient } from "../db/sql-client.ts";
import type { FileRepository } from "../files/file-repository.ts";
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


/** The facts of several files in one read (a listing page's), by file id; every id is in the map. */
export async function documentFactsOfFiles(sql: SqlClient, fileIds: readonly string[]): Promise<Map<string, DocumentFacts>> {
  const rows = await factsRowsOf<DocumentFactsRow>(sql, "document_facts", DOCUMENT_FACTS_COLUMNS, fileIds);
  return new Map(fileIds.map((id) => [id, toFacts(rows.get(id))]));
}

/** Sets some of the file's facts (the row is made by the first write). */
function upsert(sql: SqlClient, fileId: string, set: Partial<DocumentFactsRow>): Promise<void> {
  return setFacts(sql, "document_facts", fileId, set as Record<string, string | number | null>);
}

/** A change with the file's updated_at (`files` tells it), in the caller's transaction or one of its own. */
function changed(sql: SqlClient, files: FileRepository, fileId: string, set: Partial<DocumentFactsRow>): Promise<void> {
  return atomically(sql, async (tx) => {
    await upsert(tx, fileId, set);
    await files.withTx(tx).touched(fileId);
  });
}

/** The document is still to be read (at upload, and when its processing is queued again), in the caller's transaction. */
export function textPending(sql: SqlClient, fileId: string): Promise<void> {
  return upsert(sql, fileId, { text_extraction_status: "pending" });
}

export function textExtractionStarted(sql: SqlClient, files: FileRepository, fileId: string): Promise<void> {
  return changed(sql, files, fileId, { text_extraction_status: "processing", digitization_status: "processing" });
}

/** Extraction failed: for good (`final`), or back to pending for the retry (the reason is the file's processing error). */
export function textExtractionFailed(sql: SqlClient, files: FileRepository, fileId: string, final: boolean): Promise<void> {
  const status = final ? "failed" : "pending";
  return changed(sql, files, fileId, { text_extraction_status: status, digitization_status: status });
}

/** The text is read; written with the text (FileRepository.textExtracted, which moves updated_at) in one transaction. */
export function textRead(sql: SqlClient, fileId: string, read: { pageCount: number; language: string | null; digitization: "completed" | "failed" }): Promise<void> {
  return upsert(sql, fileId, { text_extraction_status: "completed", page_count: read.pageCount, language: read.language, digitization_status: read.digitization });
}

/** The chunks are stored; they wait for embedding (or there is nothing to embed). */
export function chunksStored(sql: SqlClient, files: FileRepository, fileId: string, count: number): Promise<void> {
  return changed(sql, files, fileId, { chunk_count: count, embedding_status: count ? "pending" : "completed" });
}

/** No text model can embed now (the reason joins the file's processing error). */
export function embeddingWaits(sql: SqlClient, files: FileRepository, fileId: string): Promise<void> {
  return changed(sql, files, fileId, { embedding_status: "pending" });
}

export function embeddingStarted(sql: SqlClient, files: FileRepository, fileId: string): Promise<void> {
  return changed(sql, files, fileId, { embedding_status: "processing" });
}

export function embeddingEnded(sql: SqlClient, files: FileRepository, fileId: string, status: "completed" | "failed"): Promise<void> {
  return changed(sql, files, fileId, { embedding_status: status });
}

/** Live files with chunks embedded by another model than `modelId` go back to pending. */
export function embeddingsOfOtherModelsPending(sql: SqlClient, files: FileRepository, modelId: string): Promise<void> {
  return atomically(sql, async (tx) => {
    const stale = await tx.all<{ id: string }>(
      `SELECT f.id FROM files f WHERE f.deleted_at IS NULL AND f.id IN (
         SELECT file_id FROM document_chunks WHERE embedding_status = 'completed' AND (embedding_model IS NULL OR embedding_model <> ?))`,
      [modelId],
    );
    for (const { id } of stale) await changed(tx, files, id, { embedding_status: "pending" });
  });
}
