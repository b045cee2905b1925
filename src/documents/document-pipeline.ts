/**
 * The document pipeline, as a list of stages over one DocumentWork (run by
 * processing/stage-runner.ts): text extraction and digitization (every page with its elements,
 * chunked in the same reader process), then its summary, then storing the pages, text, summary and
 * chunks for search (one transaction for a note), then queuing
 * embeddings as a separate batched job so a slow model never holds up the document's text. A file that cannot be read, or whose reading passed a decode limit or the
 * reader's memory or time budget, fails for good with that message (never retried into the same
 * failure); a page that fails is recorded on its own and the rest of the document still counts.
 */
import type { Config } from "../config.ts";
import type { DocumentDeps } from "./deps.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { replaceDescriptionsOf } from "../processing/descriptions.ts";
import { PermanentJobError, type JobContext, type QueueDefinition } from "../jobs/runner.ts";
import { unlessAborted } from "../abort.ts";
import type { FileRow } from "../files/file.ts";
import { replaceSuggestions } from "../files/tag-suggestions.ts";
import type { PipelineReport } from "../kinds/media-kind.ts";
import { fileJob } from "../processing/file-job.ts";
import type { FileJobPayload } from "../jobs/catalogue.ts";
import { runStages, stageBudgetsOf, StageTimeoutError, type FileWork, type PipelineOptions, type Stage } from "../processing/stage-runner.ts";
import { detectLanguage } from "./language.ts";
import { DocumentReadError, type Chunk, type DocPage, type DocumentContent } from "./types.ts";
import type { Summary, SummaryDraft } from "../text/summary.ts";
import type { DocumentType } from "../files/file.ts";
import type { ChunkingRequest, LayoutRequest } from "./reader-protocol.ts";
import { LAYOUT_MODELS } from "./layout-model/layout-models.ts";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { errorMessage, forTenants, forTenantsOrNull } from "../errors.ts";
import { DEFAULT_MAX_TOKENS, EMBED_BATCH } from "../embeddings/text-embedder.ts";
import { readObject } from "../storage/blob-store.ts";
import type { WritableSpace } from "../vectors/vector-spaces.ts";
import { chunksStored, embeddingEnded, embeddingStarted, embeddingsOfOtherModelsPending, embeddingWaits, textExtractionFailed, textExtractionStarted, textRead } from "./document-facts.ts";

/** The library's search index holds this much of a document's text (the chunks hold all of it). */
const SEARCH_TEXT_LIMIT = 200_000;

export { approximateTokens } from "./chunking.ts";

/** What the document pipeline takes from the settings, read once when the kind is built. */
export interface DocumentPipelineOptions extends PipelineOptions {
  /** MEDIABOX_MODELS_DIR: the text model's tokenizer and the layout model are read from it. */
  modelsDir: string;
  /** MEDIABOX_LAYOUT_MODEL: the layout model's folder, or "none". */
  layoutModel: string;
}

export function documentPipelineOptions(config: Pick<Config, "modelsDir" | "layoutModel" | "stageBudgets">): DocumentPipelineOptions {
  return { modelsDir: config.modelsDir, layoutModel: config.layoutModel, stageBudgets: stageBudgetsOf(config, "document") };
}

/**
 * How the reader child sizes chunks: with the text model's tokenizer when its files are there
 * and pass the models manifest check (the child loads it; this process never does), else
 * estimated. Chunks leave room for the [CLS] and [SEP] tokens the model adds around every chunk;
 * the child takes the model's document prompt off too.
 */
async function chunkingRequest(ctx: Pick<DocumentDeps, "embedder">, options: DocumentPipelineOptions): Promise<ChunkingRequest> {
  try {
    const window = await ctx.embedder.chunkWindow();
    return { tokenizer: { modelsDir: options.modelsDir, model: ctx.embedder.tokenizerFolder }, maxTokens: Math.max(32, window - 2) };
  } catch {
    return { tokenizer: null, maxTokens: DEFAULT_MAX_TOKENS - 2 };
  }
}

/**
 * The layout model the reader finds PDF pages' regions with: the configured folder when it is
 * installed and passes the models manifest check, else none (the rules lay pages out alone).
 */
async function layoutRequest(ctx: Pick<DocumentDeps, "models">, options: DocumentPipelineOptions): Promise<LayoutRequest | null> {
  const { layoutModel: model, modelsDir } = options;
  if (model === "none" || !LAYOUT_MODELS[model] || !existsSync(join(modelsDir, model, LAYOUT_MODELS[model].file))) return null;
  try {
    await ctx.models.require(model);
    return { modelsDir, model };
  } catch {
    return null;
  }
}

/** Machine-made description and tag suggestions from the text alone: its most central sentences and keyphrases. */
const SUMMARY_MODEL = "mediabox extractive summary (no language model)";

/** Longest a chunk-writing transaction holds the event loop before the next one is left for later. */
const WRITE_SLICE_MS = 15;
/**
 * A document with more text than this has its pages and its whole text written in transactions of
 * their own before the chunks: each copy of a 10 MB text costs the event loop ~100 ms to write.
 */
const LARGE_TEXT_CHARS = 1_000_000;

/** What storing a read document (its pages, text and chunks) uses: a link's article is stored the same way. */
type StoreDeps = Pick<DocumentDeps, "sql" | "clock" | "files">;

/**
 * Stores a read document: its pages, its text (and summary) on the file's row, and its chunks.
 * The text goes in the transaction of the first chunks, so the file's search entry is written
 * once and the whole of a note's writes commit once, with other documents' (db/group-commit.ts;
 * three transactions and three re-indexings of the text were ~3 ms of a note's ~10 ms of event
 * loop in bulk imports). The chunks are written in slices of at most ~WRITE_SLICE_MS each, a port
 * transaction a slice, yielding between them: every insert
 * also feeds the full-text index, and a 2,000-page document's 7,000 chunks in one transaction
 * would hold the event loop (and /healthz) for most of a second. The document is still
 * `processing` meanwhile; chunk_count is set with the last slice.
 */
export async function storeDocument(ctx: StoreDeps, file: FileRow, doc: DocumentContent, chunks: Chunk[], summary: Summary | null = null): Promise<void> {
  let next = 0;
  let textStored = false;
  if (doc.text.length > LARGE_TEXT_CHARS) {
    let page = 0;
    do {
      await ctx.sql.transaction(async (tx) => {
        const started = performance.now();
        if (page === 0) await tx.run("DELETE FROM document_pages WHERE file_id = ?", [file.id]);
        for (let taken = 0; page < doc.pages.length && (taken === 0 || performance.now() - started < WRITE_SLICE_MS); page++, taken++) await storePage(tx, file.id, doc.pages[page]!);
      });
    } while (page < doc.pages.length);
    await ctx.sql.transaction((tx) => storeText(ctx, tx, file.id, doc, summary, false));
    textStored = true;
  }
  // At least one chunk a slice: when the text alone took longer than a slice (a 10 MB
  // one-line file), "nothing stored yet" once meant storing the text again, forever.
  const slice = async (tx: SqlClient, started: number) => {
    for (let taken = 0; next < chunks.length && (taken === 0 || performance.now() - started < WRITE_SLICE_MS); next++, taken++) {
      const c = chunks[next]!;
      await tx.run(
        `INSERT INTO document_chunks (id, file_id, org_id, chunk_index, content, page_numbers, heading_hierarchy, token_count, chunk_type, embedding_status)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')`,
        [chunkId(file.id, c.chunk_index), file.id, file.org_id, c.chunk_index, c.content, JSON.stringify(c.page_numbers), JSON.stringify(c.heading_hierarchy), c.token_count, c.chunk_type],
      );
    }
    if (next === chunks.length) await chunksStored(tx, ctx.files, file.id, chunks.length);
  };
  do {
    // The first slice commits with the text (one port transaction); each later one is its own.
    await ctx.sql.transaction(async (tx) => {
      const started = performance.now();
      if (!textStored) {
        await storeText(ctx, tx, file.id, doc, summary);
        await tx.run("DELETE FROM document_chunks WHERE file_id = ?", [file.id]);
      }
      await slice(tx, started);
    });
    textStored = true;
  } while (next < chunks.length);
}

/** One page, in the caller's transaction. */
async function storePage(tx: SqlClient, fileId: string, page: DocPage): Promise<void> {
  await tx.run(
    "INSERT INTO document_pages (file_id, page_number, status, error_message, ocr, text, elements) VALUES (?, ?, ?, ?, ?, ?, ?)",
    [fileId, page.page_number, page.status, forTenantsOrNull(page.error_message), page.ocr ? 1 : 0, page.text, JSON.stringify(page.elements)],
  );
}

/** The pages (unless already stored), the file's text, summary, facts and tag suggestions, in the caller's transaction `tx`. */
async function storeText(ctx: StoreDeps, tx: SqlClient, fileId: string, doc: DocumentContent, draft: Summary | null, withPages = true): Promise<void> {
  const failedPages = doc.pages.filter((p) => p.status === "failed").length;
  const digitization = doc.pages.length > 0 && failedPages === doc.pages.length ? "failed" : "completed";
  if (withPages) {
    await tx.run("DELETE FROM document_pages WHERE file_id = ?", [fileId]);
    for (const page of doc.pages) await storePage(tx, fileId, page);
  }
  if (draft?.text) await replaceDescriptionsOf(tx, ctx.clock, fileId, [{ model: SUMMARY_MODEL, kind: "summary", text: draft.text }]);
  await ctx.files.withTx(tx).textExtracted(fileId, { text: doc.text, searchText: doc.text.slice(0, SEARCH_TEXT_LIMIT) || null }, draft ? { text: draft.text } : null);
  await textRead(tx, fileId, { pageCount: doc.page_count, language: detectLanguage(doc.text), digitization });
  // Keyphrases are offered to the user, never written into the tags (files/tag-suggestions.ts).
  if (draft) await replaceSuggestions(tx, fileId, draft.keyphrases);
}

/** Queues embedding of a document's pending chunks (once per document at a time). */
export async function enqueueEmbedding(ctx: Pick<DocumentDeps, "jobs">, file: Pick<FileRow, "id" | "org_id">, tx?: SqlClient): Promise<string> {
  return (await ctx.jobs.submit({ queue: "document.embed", orgId: file.org_id, payload: { fileId: file.id }, dedupeKey: `embed:${file.id}`, maxAttempts: 3 }, tx)).id;
}

/** One document on its way through the stages. */
/** What the document pipeline's stages use of the services (the compiler checks each stage against it). */
type DocumentStageDeps = Pick<
  DocumentDeps,
  "sql" | "clock" | "metrics" | "progress" | "files" | "blobs" | "jobs" | "documentReader" | "embedder" | "models" | "spaces"
>;

interface DocumentWork extends FileWork<DocumentStageDeps> {
  options: DocumentPipelineOptions;
  document: DocumentContent | null;
  chunks: Chunk[];
  exactTokens: boolean;
  /** Drafted by the reader with the text when the summary stage applies (null otherwise). */
  drafted: SummaryDraft | null;
  /** Taken by the summary stage (null when it was skipped or failed), stored by the chunks stage. */
  summary: Summary | null;
  embeddingJobId: string | null;
}

const extractionStage: Stage<DocumentWork> = {
  name: "extraction",
  required: true,
  weight: 16,
  // The reader's own watchdog stops a read past its CPU time (10 minutes); OCR of a long scan
  // waits for the OCR workers besides. The file.process job itself ends at 30 minutes.
  budgetMs: 25 * 60_000,
  async run(work, progress) {
    const { ctx, file } = work;
    await textExtractionStarted(ctx.sql, ctx.files, file.id);
    const bytes = file.blob_key ? await readObject(ctx.blobs, file.blob_key) : null;
    if (!bytes) throw new PermanentJobError(`the original of document ${file.id} is missing from the store`);
    try {
      // Read in the reader child process: a hostile file costs that process (killed past its memory
      // or time budget), never the server's event loop or memory.
      const read = await ctx.documentReader.read(bytes, file.document_type as DocumentType, {
        signal: work.signal,
        onPage: (done, total) => progress(done / Math.max(1, total), { done, total, unit: "page" }),
        chunking: await chunkingRequest(ctx, work.options),
        summarize: file.auto_describe === 1,
        layout: file.document_type === "pdf" ? await layoutRequest(ctx, work.options) : null,
      });
      work.document = read.document;
      work.drafted = read.summary;
      work.chunks = read.chunks ?? [];
      work.exactTokens = read.exactTokens;
    } catch (err) {
      // Unreadable, or past a decode limit or the reader's budget or the stage's: that never changes, so no retry.
      const overBudget = work.signal.reason instanceof StageTimeoutError ? work.signal.reason : null;
      const final = err instanceof DocumentReadError || overBudget !== null;
      const why = overBudget ? overBudget.message : err instanceof DocumentReadError ? err.message : `text extraction failed: ${errorMessage(err)}`;
      await ctx.sql.transaction(async (tx) => {
        await ctx.files.withTx(tx).textNotExtracted(file.id, why);
        await textExtractionFailed(tx, ctx.files, file.id, final);
      });
      throw final ? new PermanentJobError(why) : err;
    }
  },
};

/**
 * Runs before `chunks`, which stores the summary with the text (one write of the file's row). The
 * reader drafts it with the text (off the event loop: ~0.25 ms a note, ~4 % of the loop in bulk
 * imports, and 25-40 ms for a long document, which held /healthz); this stage takes the draft.
 */
const summaryStage: Stage<DocumentWork> = {
  name: "summary",
  appliesTo: ({ file, document }) => (file.auto_describe !== 1 ? "auto_describe is false" : document?.text.trim() ? true : "no text to summarize"),
  async run(work) {
    const draft = work.drafted;
    if (!draft) throw new Error("the document reader drafted no summary");
    if ("error" in draft) throw new Error(draft.error);
    work.summary = draft;
  },
};

const chunksStage: Stage<DocumentWork> = {
  name: "chunks",
  required: true,
  weight: 3,
  async run(work) {
    await storeDocument(work.ctx, work.file, work.document!, work.chunks, work.summary);
  },
};

/**
 * A small document whose words the text model knows is embedded here, as it is stored; any other
 * gets an embedding job (batched, retried, waiting for the model when it is not there).
 */
const embeddingsStage: Stage<DocumentWork> = {
  name: "embeddings",
  appliesTo: (work) => work.chunks.length > 0 || "no text to embed",
  async run(work) {
    const { ctx, file, chunks } = work;
    if (chunks.length <= EMBED_BATCH && !(await ctx.embedder.unavailableReason())) {
      const vectors = ctx.embedder.embedNow?.(chunks.map((c) => c.content));
      if (vectors) {
        const space = await ctx.spaces.open("text", ctx.embedder.modelId, await ctx.embedder.dimension());
        const ids = chunks.map((c) => chunkId(file.id, c.chunk_index));
        await storeVectors(ctx, file, space, ids, vectors, true);
        return;
      }
    }
    work.embeddingJobId = await enqueueEmbedding(ctx, file);
  },
};

function chunkId(fileId: string, index: number): string {
  return `${fileId}:${index}`;
}

/**
 * Stores vectors of a document's chunks and marks the chunks embedded, in one port transaction;
 * the document's embedding completes with its `last` ones. A chunk marked embedded always has its
 * vector, and a vector search never finds a chunk still marked pending.
 */
export async function storeVectors(
  ctx: Pick<DocumentDeps, "sql" | "files" | "embedder">,
  file: Pick<FileRow, "id" | "org_id">,
  space: WritableSpace,
  chunkIds: string[],
  vectors: Float32Array[],
  last: boolean,
): Promise<void> {
  await ctx.sql.transaction(async (tx) => {
    await space.upsertMany(file.org_id, chunkIds.map((id, k) => [id, vectors[k]!] as const), tx);
    for (const id of chunkIds) {
      await tx.run("UPDATE document_chunks SET embedding_status = 'completed', embedding_error = NULL, embedding_model = ? WHERE id = ?", [ctx.embedder.modelId, id]);
    }
    if (last) await embeddingEnded(tx, ctx.files, file.id, "completed");
  });
}

/** Every document goes through these, in this order. */
export const DOCUMENT_STAGES: Stage<DocumentWork>[] = [extractionStage, summaryStage, chunksStage, embeddingsStage];

export async function runDocumentPipeline(ctx: DocumentDeps, options: DocumentPipelineOptions, job: JobContext<FileJobPayload>, file: FileRow): Promise<PipelineReport> {
  const fileId = file.id;
  const work: DocumentWork = { ctx, options, job, file, outcomes: {}, signal: job.signal, document: null, chunks: [], exactTokens: false, drafted: null, summary: null, embeddingJobId: null };
  await runStages(work, DOCUMENT_STAGES);
  const doc = work.document!;
  const failedPages = doc.pages.filter((p) => p.status === "failed");
  return {
    summary: {
      document_id: fileId,
      document_type: file.document_type,
      text_extraction_status: "completed",
      page_count: doc.page_count,
      chunk_count: work.chunks.length,
      failed_pages: failedPages.map((p) => p.page_number),
      token_counts: work.exactTokens ? "tokenizer" : "estimated",
      embedding_job_id: work.embeddingJobId,
      stages: work.outcomes,
    },
    warnings: failedPages.length ? failedPages.map((p) => `page ${p.page_number}: ${p.error_message}`).join("; ") : null,
  };
}


/**
 * Embeds a document's pending chunks in batches. Without the model installed the chunks stay
 * `pending` (keyword search still finds them) and the document's embedding_status says why;
 * installing the model and restarting embeds them (see resumePendingEmbeddings).
 */
export function documentEmbedQueue(ctx: DocumentDeps): QueueDefinition<"document.embed"> {
  return fileJob(ctx, {
    name: "document.embed",
    // Side by side, documents' new words share the built-in model's runs (use-sif-embedder.ts),
    // whose fixed cost (~40 ms a run) dominated at 4 documents a run: 16 took the model thread's
    // time in the retrieval bench from ~12 s to ~9 s. A folder model takes its calls one at a
    // time anyway (embeddings/text-embedder.ts).
    concurrency: 16,
    timeoutMs: 60 * 60 * 1000,
    async handle(file, job) {
      const fileId = file.id;
      const why = await ctx.embedder.unavailableReason();
      if (why) {
        await ctx.sql.transaction(async (tx) => {
          await ctx.files.withTx(tx).embeddingsWait(fileId, why);
          await embeddingWaits(tx, ctx.files, fileId);
        });
        await ctx.sql.run("UPDATE document_chunks SET embedding_error = ? WHERE file_id = ? AND embedding_status = 'pending'", [forTenants(why), fileId]);
        return [{ document_id: fileId, embedding_status: "pending", reason: why }];
      }
      await embeddingStarted(ctx.sql, ctx.files, fileId);
      const pending = await ctx.sql.all<{ id: string; content: string; heading_hierarchy: string }>(
        "SELECT id, content, heading_hierarchy FROM document_chunks WHERE file_id = ? AND embedding_status = 'pending' ORDER BY chunk_index",
        [fileId],
      );
      let done = 0;
      let failed = 0;
      try {
        const dimension = await ctx.embedder.dimension();
        const space = await ctx.spaces.open("text", ctx.embedder.modelId, dimension);
        for (let i = 0; i < pending.length; i += EMBED_BATCH) {
          if (job.signal.aborted) throw new Error("embedding interrupted");
          const batch = pending.slice(i, i + EMBED_BATCH);
          // The model thread may be busy for seconds (preparing its vocabulary): a stopping server or a
          // cancelled job does not wait for it.
          const vectors = await unlessAborted(ctx.embedder.embed(batch.map((c) => c.content)), job.signal);
          const last = i + batch.length === pending.length;
          // The document's state commits with its last chunks' marks (a commit less a document).
          await storeVectors(ctx, file, space, batch.map((c) => c.id), vectors, last);
          done += batch.length;
          // The job's end writes 100.
          if (!last) job.progress(Math.round((done / pending.length) * 100));
        }
      } catch (err) {
        if (job.signal.aborted) throw err;
        failed = pending.length - done;
        await ctx.sql.run("UPDATE document_chunks SET embedding_status = 'failed', embedding_error = ? WHERE file_id = ? AND embedding_status = 'pending'", [forTenants(errorMessage(err)), fileId]);
      }
      if (failed || pending.length === 0) await embeddingEnded(ctx.sql, ctx.files, fileId, failed ? "failed" : "completed");
      return [{ document_id: fileId, embedded: done, failed }];
    },
  });
}

/**
 * At start, when the text model is usable: chunks embedded by another model (the setting
 * changed; vectors of different models are not comparable) go back to `pending`, and every
 * document with pending chunks (those too, and those that waited for a model) gets its job.
 */
export async function resumePendingEmbeddings(ctx: DocumentDeps): Promise<number> {
  if (await ctx.embedder.unavailableReason()) return 0;
  await ctx.sql.transaction(async (tx) => {
    await embeddingsOfOtherModelsPending(tx, ctx.files, ctx.embedder.modelId);
    await tx.run(
      "UPDATE document_chunks SET embedding_status = 'pending', embedding_error = NULL WHERE embedding_status = 'completed' AND (embedding_model IS NULL OR embedding_model <> ?)",
      [ctx.embedder.modelId],
    );
  });
  const files = await ctx.sql.all<{ id: string; org_id: string }>(
    `SELECT DISTINCT f.id, f.org_id FROM document_chunks c JOIN files f ON f.id = c.file_id
     WHERE c.embedding_status = 'pending' AND f.deleted_at IS NULL`,
  );
  for (const file of files) await enqueueEmbedding(ctx, file);
  return files.length;
}
