/**
 * The server's one document reader (document-reader.ts), made on first use from its settings and
 * closed by the server's stop(). Kept beside the context rather than in it, so tests can run
 * several servers side by side, each with its own reader process.
 */
import type { AppContext } from "../context.ts";
import { errorMessage } from "../errors.ts";
import { DocumentReader } from "./document-reader.ts";

const readers = new WeakMap<AppContext, DocumentReader>();

export function documentReaderOf(ctx: AppContext): DocumentReader {
  let reader = readers.get(ctx);
  if (!reader) {
    reader = new DocumentReader({
      memoryBudgetBytes: ctx.config.documentMemoryMb * 1024 * 1024,
      scratchDir: ctx.dataDir.scratch,
      ocr: {
        // OCR errors become page errors, which answers show: name the models directory relatively.
        recognize: (image) =>
          ctx.ocr.recognize(image).catch((err: unknown) => {
            throw new Error(errorMessage(err).split(ctx.config.modelsDir).join("models"), { cause: err });
          }),
      },
      log: ctx.log.child({ component: "document-reader" }),
    });
    readers.set(ctx, reader);
  }
  return reader;
}

/** Kills the reader process (if one was started); reads still waiting fail as interrupted. */
export async function closeDocumentReader(ctx: AppContext): Promise<void> {
  const reader = readers.get(ctx);
  readers.delete(ctx);
  await reader?.close();
}
