/**
 * The services the documents feature uses: the reader process, the text model, model checks, OCR
 * for scanned pages and vector spaces, the stage runner's, and the upload path's (POST
 * /documents/analyze stores through ingest). The composition root (src/app.ts) builds them once
 * and passes its context, which satisfies this interface.
 */
import type { DocumentReader } from "./document-reader.ts";
import type { TextEmbedding } from "../embeddings/text-embedder.ts";
import type { IngestDeps } from "../ingest/deps.ts";
import type { ModelVerifier } from "../models/model-verifier.ts";
import type { OcrRouter } from "../ocr/ocr-router.ts";
import type { StageRunnerDeps } from "../processing/stage-runner.ts";
import type { VectorSpaces } from "../vectors/vector-spaces.ts";

export interface DocumentDeps extends IngestDeps, StageRunnerDeps {
  /** Reads documents in a killable child process (started on first use). */
  documentReader: DocumentReader;
  /** Sentence-embedding model and its tokenizer for document chunks and search, loaded lazily. */
  embedder: TextEmbedding;
  /** Checks model folders against the models directory's manifest before they load. */
  models: ModelVerifier;
  /** Text recognition for images, scanned pages and video frames (PP-OCR or tesseract by kind), loaded lazily. */
  ocr: OcrRouter;
  /** The vector spaces (the chunks' text embeddings). */
  spaces: VectorSpaces;
}
