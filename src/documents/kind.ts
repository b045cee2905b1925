/** Documents: PDF, DOCX, text and Markdown, read into pages, chunks and embeddings by the document pipeline. */
import type { DocumentDeps } from "./deps.ts";
import type { MediaKind } from "../kinds/media-kind.ts";
import { runDocumentPipeline } from "./document-pipeline.ts";
import { removePageImages } from "./page-images.ts";

export function documentKind(ctx: DocumentDeps): MediaKind {
  return {
    type: "document",
    pipeline: {
      produces: { thumbnails: false, analysis: true },
      // Small text is read on a thread and PDFs wait their turn for the reader process: mostly waiting.
      concurrency: 4,
      run: (job, file) => runDocumentPipeline(ctx, job, file),
    },
    purge: (fileId) => removePageImages(ctx, fileId),
  };
}
