/** The document routes' request and response schemas (TypeBox): chunks, digitization, analyze. */
import { t } from "elysia";
import { Enum, Nullable } from "../http/shapes.ts";
import { ELEMENT_TYPES } from "./types.ts";

export const Status = Enum(["pending", "processing", "completed", "failed"]);
const Box = t.Object({ x: t.Number(), y: t.Number(), w: t.Number(), h: t.Number() }, { description: "Normalized 0-1, origin top-left" });
const Element = t.Object({ type: Enum(ELEMENT_TYPES), content: t.String(), bounding_box: Box, metadata: t.Optional(t.Record(t.String(), t.Unknown())) });
export const Page = t.Object(
  { page_number: t.Integer(), status: Status, element_count: t.Integer(), elements: t.Array(Element), error_message: Nullable(t.String()), ocr: t.Boolean() },
  { title: "DigitizationPage" },
);
export const Chunk = t.Object(
  {
    chunk_id: t.String(),
    document_id: t.String({ format: "uuid" }),
    document_filename: t.String(),
    chunk_index: t.Integer(),
    content: t.String(),
    page_numbers: t.Array(t.Integer()),
    heading_hierarchy: t.Array(t.String()),
    similarity_score: Nullable(t.Number()),
    metadata: t.Object({ token_count: t.Integer(), chunk_type: t.String(), embedding_status: t.String() }),
    embedding: t.Optional(Nullable(t.Array(t.Number()))),
    embedding_model: t.Optional(Nullable(t.String())),
    match: t.Optional(
      t.Object(
        {
          keyword_score: Nullable(t.Number({ description: "BM25 of the chunk for this query (higher is better); null when no query word occurs in it" })),
          keyword_rank: Nullable(t.Integer()),
          vector_rank: Nullable(t.Integer()),
          vector_similarity: Nullable(t.Number({ description: "Cosine similarity of the query's and the chunk's vectors (-1..1)" })),
        },
        { description: "Each retrieval signal's own score for the chunk, and where it ranked the chunk" },
      ),
    ),
  },
  { title: "DocumentChunk" },
);

export const AnalyzeResult = t.Object(
  {
    document_id: t.String({ format: "uuid" }),
    status: Enum(["completed", "processing", "failed", "skipped"]),
    filename: t.String(),
    size_bytes: t.Integer(),
    processing_time_ms: t.Number(),
    document_type: Nullable(t.String()),
    text_extraction_status: Nullable(t.String()),
    page_count: Nullable(t.Integer()),
    chunk_count: t.Integer(),
    extracted_text: Nullable(t.String()),
    job_id: Nullable(t.String({ format: "uuid" })),
    poll_url: Nullable(t.String()),
    error_message: Nullable(t.String()),
    skipped_existing_document_id: Nullable(t.String({ format: "uuid" })),
  },
  {
    title: "DocumentAnalyzeResult",
    description:
      "completed: extraction and chunking done (embeddings follow in the background); processing: the timeout passed, poll poll_url; failed: error_message says why; skipped: a document with the same content exists (skip_duplicates) and its state is shown",
  },
);

/** Pages are numbered from 1; no document has more than MAX_PAGE_NUMBER. */
const MAX_PAGE_NUMBER = 1_000_000;
export const PageNumber = t.Integer({ minimum: 1, maximum: MAX_PAGE_NUMBER, error: `page_number: must be an integer from 1 to ${MAX_PAGE_NUMBER}` });
