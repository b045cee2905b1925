/** Documents: PDF, DOCX, text and Markdown, read into pages, chunks and embeddings by the document pipeline. */
import type { AppContext } from "../context.ts";
import type { MediaKind } from "../kinds/media-kind.ts";
import { runDocumentPipeline } from "./document-pipeline.ts";
import { removePageImages } from "./page-images.ts";

export function documentKind(ctx: AppContext): MediaKind {
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
