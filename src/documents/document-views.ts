/**
 * What the document endpoints show: chunks (with their embeddings on request), the digitization
 * (document level and per page) and the processing status of any file.
 */
import { ApiError } from "../errors.ts";
import { listExtractions } from "../extractions/extractions.ts";
import { type FileRow, tagsOf } from "../files/file.ts";
import type { FileUrls } from "../files/file-urls.ts";
import { openSuggestions } from "../files/tag-suggestions.ts";
import { imageFactsOf } from "../images/image-facts.ts";
import { documentFactsOf, documentFactsOfFiles, type DocumentFacts } from "./document-facts.ts";
import type { VectorSpaces } from "../vectors/vector-spaces.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { ChunkRow } from "./search.ts";
import type { DocElement } from "./types.ts";

export function chunkView(row: ChunkRow, similarity: number | null = null) {
  return {
    chunk_id: row.id,
    document_id: row.file_id,
    document_filename: row.filename,
    chunk_index: row.chunk_index,
    content: row.content,
    page_numbers: JSON.parse(row.page_numbers) as number[],
    heading_hierarchy: JSON.parse(row.heading_hierarchy) as string[],
    similarity_score: similarity,
    metadata: { token_count: row.token_count, chunk_type: row.chunk_type, embedding_status: row.embedding_status },
  };
}

/** A document's chunks, with their vectors on request (through the port and the vector spaces: either database). */
export async function documentChunks(deps: { sql: SqlClient; spaces: VectorSpaces }, file: FileRow, includeEmbeddings: boolean) {
  const rows = await deps.sql.all<ChunkRow & { embedding_model: string | null }>(
    "SELECT c.*, f.filename FROM document_chunks c JOIN files f ON f.id = c.file_id WHERE c.file_id = ? ORDER BY c.chunk_index",
    [file.id],
  );
  // The chunks' vectors, one read a model (a document re-embedded halfway has two).
  const vectors = new Map<string, Float32Array>();
  if (includeEmbeddings) {
    for (const model of new Set(rows.flatMap((row) => (row.embedding_model ? [row.embedding_model] : [])))) {
      const space = await deps.spaces.find("text", model);
      const ids = rows.filter((row) => row.embedding_model === model).map((row) => row.id);
      if (space) for (const [id, vector] of await space.vectorsOf(ids)) vectors.set(id, vector);
    }
  }
  const chunks = rows.map((row) => {
    const view = chunkView(row);
    if (!includeEmbeddings) return view;
    const vector = vectors.get(row.id);
    return { ...view, embedding: vector ? Array.from(vector) : null, embedding_model: row.embedding_model };
  });
  const base = { document_id: file.id, chunks, total_chunks: chunks.length };
  if (!includeEmbeddings) return base;
  const counts = { completed: 0, pending: 0, failed: 0 };
  for (const row of rows) counts[row.embedding_status as keyof typeof counts] += 1;
  return { ...base, status_counts: counts };
}

interface PageRow {
  page_number: number;
  status: "pending" | "processing" | "completed" | "failed";
  error_message: string | null;
  ocr: number;
  elements: string;
}

function pageView(row: PageRow) {
  const elements = JSON.parse(row.elements) as DocElement[];
  return { page_number: row.page_number, status: row.status, element_count: elements.length, elements, error_message: row.error_message, ocr: row.ocr === 1 };
}

const pageRows = (sql: SqlClient, fileId: string) =>
  sql.all<PageRow>("SELECT page_number, status, error_message, ocr, elements FROM document_pages WHERE file_id = ? ORDER BY page_number", [fileId]);

function digitizationStatus(facts: DocumentFacts) {
  return facts.digitizationStatus ?? "pending";
}

export async function digitization(sql: SqlClient, file: FileRow) {
  const pages = (await pageRows(sql, file.id)).map(pageView);
  const facts = await documentFactsOf(sql, file.id);
  return {
    document_id: file.id,
    status: digitizationStatus(facts),
    total_pages: facts.pageCount ?? pages.length,
    completed_pages: pages.filter((p) => p.status === "completed").length,
    failed_pages: pages.filter((p) => p.status === "failed").length,
    pages,
  };
}

export async function digitizationPage(sql: SqlClient, file: FileRow, pageNumber: number) {
  const row = await sql.one<PageRow>("SELECT page_number, status, error_message, ocr, elements FROM document_pages WHERE file_id = ? AND page_number = ?", [file.id, pageNumber]);
  if (!row) {
    const facts = await documentFactsOf(sql, file.id);
    throw new ApiError(
      "NOT_FOUND",
      facts.pageCount ? `document ${file.id} has ${facts.pageCount} pages; page ${pageNumber} has no digitization` : `document ${file.id} has no digitization yet (status ${digitizationStatus(facts)})`,
    );
  }
  return pageView(row);
}

export async function digitizationStatusView(sql: SqlClient, file: FileRow) {
  const statuses = await sql.all<{ page_number: number; status: string }>("SELECT page_number, status FROM document_pages WHERE file_id = ? ORDER BY page_number", [file.id]);
  const facts = await documentFactsOf(sql, file.id);
  return {
    document_id: file.id,
    status: digitizationStatus(facts),
    total_pages: facts.pageCount ?? statuses.length,
    page_statuses: Object.fromEntries(statuses.map((s) => [String(s.page_number), s.status])),
  };
}

interface StageRunRow {
  stage: string;
  status: string;
  duration_ms: number;
  error: string | null;
  finished_at: string;
}

/**
 * The file's pipeline stages as last run (file_stage_runs, written by the stage runner): each
 * stage's outcome, time taken and error, in the order they finished. For a document: extraction
 * (reading and digitization in the reader), chunks, summary, embeddings.
 */
async function stageRuns(sql: SqlClient, fileId: string) {
  const rows = await sql.all<StageRunRow>("SELECT stage, status, duration_ms, error, finished_at FROM file_stage_runs WHERE file_id = ? ORDER BY finished_at, stage", [fileId]);
  return rows.map((r) => ({ stage: r.stage, status: r.status, duration_ms: Math.round(r.duration_ms * 10) / 10, error: r.error, finished_at: r.finished_at }));
}

/** GET /files/{id}/processing-status, for images, documents and videos. */
export async function processingStatus(sql: SqlClient, file: FileRow) {
  const [facts, image, stages] = await Promise.all([documentFactsOf(sql, file.id), imageFactsOf(sql, file.id), stageRuns(sql, file.id)]);
  return {
    document_id: file.id,
    filename: file.filename,
    media_type: file.media_type,
    document_type: file.document_type,
    processing_status: file.processing_status,
    text_extraction_status: facts.textExtractionStatus,
    digitization_status: facts.digitizationStatus,
    embedding_status: facts.embeddingStatus,
    variant_status: image.variantStatus,
    description_status: file.description_status,
    page_count: facts.pageCount,
    chunk_count: facts.chunkCount,
    created_at: file.created_at,
    processing_started_at: file.processing_started_at,
    completed_at: file.processing_completed_at,
    error_message: file.processing_error,
    stages,
  };
}

/** Documents' fields of the File resource (the kind's view), their facts read once for a page. */
export async function documentSummaries(rows: FileRow[], urls: FileUrls) {
  const facts = await documentFactsOfFiles(urls.sql, rows.map((row) => row.id));
  return Promise.all(
    rows.map(async (row) => {
      const { pageCount, chunkCount, textExtractionStatus } = facts.get(row.id)!;
      return { document_type: row.document_type, page_count: pageCount, chunk_count: chunkCount, text_extraction_status: textExtractionStatus, document_url: await urls.original(row) };
    }),
  );
}

/** What only a document's detail shows: its whole text, the keyphrases offered as tags, and its extractions (a custom schema a rule ran on it). */
export async function documentDetailFields(row: FileRow, urls: FileUrls) {
  const [text, suggested, extractions] = await Promise.all([urls.extractedText(row.id), openSuggestions(urls.sql, row.id, tagsOf(row)), listExtractions(urls.sql, row.id)]);
  return { extracted_text: text, suggested_tags: suggested, extractions };
}
