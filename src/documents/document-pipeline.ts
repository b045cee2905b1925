/**
 * The document pipeline: text extraction and digitization (every page with its elements), then
 * chunking for search, then embeddings as a separate batched job so a slow model never holds up
 * the document's text. A file that cannot be read, or whose reading passed a decode limit or the
 * reader's memory or time budget, fails for good with that message (never retried into the same
 * failure); a page that fails is recorded on its own and the rest of the document still counts.
 */
import { isoAt } from "../clock.ts";
import type { AppContext } from "../context.ts";
import { enqueueJob } from "../jobs/queue.ts";
import { PermanentJobError, type JobContext, type QueueDefinition } from "../jobs/runner.ts";
import { fileById, type FileRow } from "../library/file-rows.ts";
import type { FileProcessingPayload, MediaPipeline, PipelineReport } from "../processing/file-processing.ts";
import { VectorSpace } from "../vectors/vector-index.ts";
import { documentReaderOf } from "./server-reader.ts";
import { detectLanguage } from "./language.ts";
import { DocumentExtractionError, type Chunk, type DocumentType, type ExtractedDocument } from "./types.ts";
import type { ChunkingRequest } from "./reader-protocol.ts";
import { errorMessage } from "../errors.ts";
import { DEFAULT_MAX_TOKENS, EMBED_BATCH } from "./text-embedder.ts";
import { readObject } from "../storage/blob-store.ts";

export const DOCUMENT_EMBED_QUEUE = "document.embed";
/** The library's search index holds this much of a document's text (the chunks hold all of it). */
const SEARCH_TEXT_LIMIT = 200_000;

export { approximateTokens } from "./chunking.ts";

/**
 * How the reader child sizes chunks: with the text model's tokenizer when this server can load it
 * (which runs the models manifest check), else estimated. Chunks leave room for the [CLS] and
 * [SEP] tokens the model adds around every chunk.
 */
async function chunkingRequest(ctx: AppContext): Promise<ChunkingRequest> {
  try {
    const tokenizer = await ctx.embedder.tokenizer();
    return { tokenizer: { modelsDir: ctx.config.modelsDir, model: ctx.embedder.modelId }, maxTokens: Math.max(32, tokenizer.maxTokens - 2) };
  } catch {
    return { tokenizer: null, maxTokens: DEFAULT_MAX_TOKENS - 2 };
  }
}

function storeExtraction(ctx: AppContext, fileId: string, doc: ExtractedDocument): void {
  const { db } = ctx;
  const failedPages = doc.pages.filter((p) => p.status === "failed").length;
  const digitization = doc.pages.length > 0 && failedPages === doc.pages.length ? "failed" : "completed";
  const at = isoAt(ctx.clock.now());
  db.transaction(() => {
    db.query("DELETE FROM document_pages WHERE file_id = ?").run(fileId);
    const insert = db.query("INSERT INTO document_pages (file_id, page_number, status, error_message, ocr, text, elements) VALUES (?, ?, ?, ?, ?, ?, ?)");
    for (const page of doc.pages) {
      insert.run(fileId, page.page_number, page.status, page.error_message, page.ocr ? 1 : 0, page.text, JSON.stringify(page.elements));
    }
    db.query(
      `UPDATE files SET page_count = ?, extracted_text = ?, visible_text = ?, document_language = ?, digitization_status = ?,
         text_extraction_status = 'completed', updated_at = ? WHERE id = ?`,
    ).run(doc.page_count, doc.text, doc.text.slice(0, SEARCH_TEXT_LIMIT) || null, detectLanguage(doc.text), digitization, at, fileId);
  })();
}

/** Longest a chunk-writing transaction holds the event loop before the next one is left for later. */
const WRITE_SLICE_MS = 15;

/**
 * Writes the chunks in transactions of at most ~WRITE_SLICE_MS each, yielding between them: every
 * insert also feeds the full-text index, and a 2,000-page document's 7,000 chunks in one
 * transaction would hold the event loop (and /healthz) for most of a second. The document is
 * still `processing` meanwhile; chunk_count is set with the last slice.
 */
async function storeChunks(ctx: AppContext, file: FileRow, chunks: Chunk[]): Promise<void> {
  const { db } = ctx;
  const insert = db.query(
    `INSERT INTO document_chunks (id, file_id, org_id, chunk_index, content, page_numbers, heading_hierarchy, token_count, chunk_type, embedding_status)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')`,
  );
  let next = 0;
  do {
    if (next > 0) await new Promise((resolve) => setImmediate(resolve));
    db.transaction(() => {
      const started = performance.now();
      if (next === 0) db.query("DELETE FROM document_chunks WHERE file_id = ?").run(file.id);
      for (; next < chunks.length && performance.now() - started < WRITE_SLICE_MS; next++) {
        const c = chunks[next]!;
        insert.run(`${file.id}:${c.chunk_index}`, file.id, file.org_id, c.chunk_index, c.content, JSON.stringify(c.page_numbers), JSON.stringify(c.heading_hierarchy), c.token_count, c.chunk_type);
      }
      if (next === chunks.length) {
        db.query("UPDATE files SET chunk_count = ?, embedding_status = ?, updated_at = ? WHERE id = ?").run(
          chunks.length, chunks.length ? "pending" : "completed", isoAt(ctx.clock.now()), file.id,
        );
      }
    })();
  } while (next < chunks.length);
}

/** Queues embedding of a document's pending chunks (once per document at a time). */
export function enqueueEmbedding(ctx: AppContext, file: Pick<FileRow, "id" | "org_id">): string {
  return enqueueJob(ctx.db, ctx.clock, { queue: DOCUMENT_EMBED_QUEUE, orgId: file.org_id, payload: { fileId: file.id }, dedupeKey: `embed:${file.id}`, maxAttempts: 3 }).id;
}

export async function runDocumentPipeline(ctx: AppContext, job: JobContext<FileProcessingPayload>, fileId: string): Promise<PipelineReport> {
  const file = fileById(ctx.db, fileId);
  if (!file) return { summary: { file_id: fileId, skipped: "file deleted" }, warnings: null };
  const at = () => isoAt(ctx.clock.now());
  ctx.db.query("UPDATE files SET text_extraction_status = 'processing', digitization_status = 'processing', updated_at = ? WHERE id = ?").run(at(), fileId);
  const bytes = file.blob_key ? await readObject(ctx.blobs, file.blob_key) : null;
  if (!bytes) throw new PermanentJobError(`the original of document ${fileId} is missing from the store`);

  let doc: ExtractedDocument;
  let chunked: Chunk[];
  let exactTokens: boolean;
  const chunking = await chunkingRequest(ctx);
  try {
    // Read in the reader child process: a hostile file costs that process (killed past its memory
    // or time budget), never the server's event loop or memory.
    const read = await documentReaderOf(ctx).read(bytes, file.document_type as DocumentType, {
      signal: job.signal,
      onPage: (done, total) => job.progress(Math.round((done / Math.max(1, total)) * 80)),
      chunking,
    });
    doc = read.document;
    chunked = read.chunks ?? [];
    exactTokens = read.exactTokens;
  } catch (err) {
    const final = err instanceof DocumentExtractionError;
    const why = final ? err.message : `text extraction failed: ${errorMessage(err)}`;
    ctx.db
      .query("UPDATE files SET text_extraction_status = ?, digitization_status = ?, processing_error = ?, updated_at = ? WHERE id = ?")
      .run(final ? "failed" : "pending", final ? "failed" : "pending", why, at(), fileId);
    if (final) throw new PermanentJobError(why);
    throw err;
  }
  storeExtraction(ctx, fileId, doc);
  await storeChunks(ctx, file, chunked);
  const chunks = chunked.length;
  job.progress(95);
  const embedJob = chunks > 0 ? enqueueEmbedding(ctx, file) : null;
  const failedPages = doc.pages.filter((p) => p.status === "failed");
  return {
    summary: {
      document_id: fileId,
      document_type: file.document_type,
      text_extraction_status: "completed",
      page_count: doc.page_count,
      chunk_count: chunks,
      failed_pages: failedPages.map((p) => p.page_number),
      token_counts: exactTokens ? "tokenizer" : "estimated",
      embedding_job_id: embedJob,
    },
    warnings: failedPages.length ? failedPages.map((p) => `page ${p.page_number}: ${p.error_message}`).join("; ") : null,
  };
}

export const documentPipeline: MediaPipeline = {
  mediaType: "document",
  produces: { thumbnails: false, analysis: true },
  run: runDocumentPipeline,
};

/**
 * Embeds a document's pending chunks in batches. Without the model installed the chunks stay
 * `pending` (keyword search still finds them) and the document's embedding_status says why;
 * installing the model and restarting embeds them (see resumePendingEmbeddings).
 */
export function documentEmbedQueue(ctx: AppContext): QueueDefinition<FileProcessingPayload> {
  return {
    name: DOCUMENT_EMBED_QUEUE,
    concurrency: 1,
    timeoutMs: 60 * 60 * 1000,
    async handler(job) {
      const fileId = job.payload.fileId;
      const file = fileById(ctx.db, fileId);
      if (!file || file.deleted_at) return [{ document_id: fileId, skipped: "file deleted" }];
      const at = () => isoAt(ctx.clock.now());
      const why = await ctx.embedder.unavailableReason();
      if (why) {
        ctx.db.query("UPDATE files SET embedding_status = 'pending', processing_error = coalesce(processing_error, ?), updated_at = ? WHERE id = ?").run(
          `embeddings pending: ${why}`, at(), fileId,
        );
        ctx.db.query("UPDATE document_chunks SET embedding_error = ? WHERE file_id = ? AND embedding_status = 'pending'").run(why, fileId);
        return [{ document_id: fileId, embedding_status: "pending", reason: why }];
      }
      ctx.db.query("UPDATE files SET embedding_status = 'processing', updated_at = ? WHERE id = ?").run(at(), fileId);
      const pending = ctx.db
        .query<{ id: string; content: string; heading_hierarchy: string }, [string]>(
          "SELECT id, content, heading_hierarchy FROM document_chunks WHERE file_id = ? AND embedding_status = 'pending' ORDER BY chunk_index",
        )
        .all(fileId);
      let done = 0;
      let failed = 0;
      try {
        const dimension = await ctx.embedder.dimension();
        const space = VectorSpace.open(ctx.db, ctx.clock, "text", ctx.embedder.modelId, dimension);
        for (let i = 0; i < pending.length; i += EMBED_BATCH) {
          if (job.signal.aborted) throw new Error("embedding interrupted");
          const batch = pending.slice(i, i + EMBED_BATCH);
          const vectors = await ctx.embedder.embed(batch.map((c) => c.content));
          ctx.db.transaction(() => {
            batch.forEach((chunk, k) => {
              space.upsert(chunk.id, file.org_id, vectors[k]!);
              ctx.db.query("UPDATE document_chunks SET embedding_status = 'completed', embedding_error = NULL, embedding_model = ? WHERE id = ?").run(ctx.embedder.modelId, chunk.id);
            });
          })();
          done += batch.length;
          job.progress(Math.round((done / pending.length) * 100));
        }
      } catch (err) {
        if (job.signal.aborted) throw err;
        failed = pending.length - done;
        ctx.db.query("UPDATE document_chunks SET embedding_status = 'failed', embedding_error = ? WHERE file_id = ? AND embedding_status = 'pending'").run(errorMessage(err), fileId);
      }
      ctx.db.query("UPDATE files SET embedding_status = ?, updated_at = ? WHERE id = ?").run(failed ? "failed" : "completed", at(), fileId);
      return [{ document_id: fileId, embedded: done, failed }];
    },
  };
}

/**
 * At start, when the text model is usable: chunks embedded by another model (the setting
 * changed; vectors of different models are not comparable) go back to `pending`, and every
 * document with pending chunks (those too, and those that waited for a model) gets its job.
 */
export async function resumePendingEmbeddings(ctx: AppContext): Promise<number> {
  if (await ctx.embedder.unavailableReason()) return 0;
  const at = isoAt(ctx.clock.now());
  ctx.db.transaction(() => {
    ctx.db
      .query(
        `UPDATE files SET embedding_status = 'pending', updated_at = ? WHERE deleted_at IS NULL AND id IN (
           SELECT file_id FROM document_chunks WHERE embedding_status = 'completed' AND embedding_model IS NOT ?)`,
      )
      .run(at, ctx.embedder.modelId);
    ctx.db
      .query("UPDATE document_chunks SET embedding_status = 'pending', embedding_error = NULL WHERE embedding_status = 'completed' AND embedding_model IS NOT ?")
      .run(ctx.embedder.modelId);
  })();
  const files = ctx.db
    .query<{ id: string; org_id: string }, []>(
      `SELECT DISTINCT f.id, f.org_id FROM document_chunks c JOIN files f ON f.id = c.file_id
       WHERE c.embedding_status = 'pending' AND f.deleted_at IS NULL`,
    )
    .all();
  for (const file of files) enqueueEmbedding(ctx, file);
  return files.length;
}
