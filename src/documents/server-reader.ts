/**
 * The server's one document reader (document-reader.ts), built from its settings: OCR requests
 * of the reader process go to the server's OCR engine. The process starts on the first read and
 * is killed by the server's stop().
 */
import type { DocumentDeps } from "./deps.ts";
import { errorMessage } from "../errors.ts";
import { DocumentReader } from "./document-reader.ts";

export function serverDocumentReader(ctx: Pick<DocumentDeps, "config" | "dataDir" | "ocr" | "log">): DocumentReader {
  return new DocumentReader({
    memoryBudgetBytes: ctx.config.documentMemoryMb * 1024 * 1024,
    scratchDir: ctx.dataDir.scratch,
    ocr: {
      // OCR errors become page errors, which answers show: name the models directory relatively.
      recognize: (image, options) =>
        ctx.ocr.recognize(image, { ...options, input: "scan" }).catch((err: unknown) => {
          throw new Error(errorMessage(err).split(ctx.config.modelsDir).join("models"), { cause: err });
        }),
    },
    log: ctx.log.child({ component: "document-reader" }),
  });
}
