/** Documents: PDF, DOCX, text and Markdown, read into pages, chunks and embeddings by the document pipeline. */
import type { DocumentDeps } from "./deps.ts";
import type { MediaKind, WorkInFlight } from "../kinds/media-kind.ts";
import { documentFactsOf, textPending } from "./document-facts.ts";
import { DOCUMENT_DETAIL_FIELDS, DOCUMENT_FIELDS } from "../files/file-shapes.ts";
import { DOCUMENT_CONTENT } from "./document-content.ts";
import { runDocumentPipeline, documentPipelineOptions } from "./document-pipeline.ts";
import { documentDetailFields, documentSummaries } from "./document-views.ts";
import { removePageImages } from "./page-images.ts";

export function documentKind(ctx: DocumentDeps): MediaKind<"document"> {
  const options = documentPipelineOptions(ctx.config);
  return {
    type: "document",
    content: DOCUMENT_CONTENT,
    pipeline: {
      produces: { thumbnails: false, analysis: true },
      // Small text is read on a thread and PDFs wait their turn for the reader process: mostly waiting.
      concurrency: 4,
      run: (job, file) => runDocumentPipeline(ctx, options, job, file),
    },
    view: {
      summaryFields: DOCUMENT_FIELDS,
      detailFields: DOCUMENT_DETAIL_FIELDS,
      summaries: documentSummaries,
      detail: async (row, urls) => documentDetailFields(row, urls),
    },
    queued: (fileId, tx) => textPending(tx, fileId),
    conditionFacts: async (sql, fileId) => ({ page_count: (await documentFactsOf(sql, fileId)).pageCount }),
    busy: async (sql, fileId) => {
      const facts = await documentFactsOf(sql, fileId);
      const work: WorkInFlight[] = [];
      if (facts.textExtractionStatus === "processing") work.push({ reason: "its text extraction is in progress", blocksReprocessing: false });
      // Reprocessing replaces the chunks an embedding job is reading.
      if (facts.embeddingStatus === "processing") work.push({ reason: "its chunks are being embedded", blocksReprocessing: true });
      return work;
    },
    purge: (fileId) => removePageImages(ctx, fileId),
  };
}
