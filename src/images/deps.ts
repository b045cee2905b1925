/**
 * The services the images feature uses: its own (the image models, OCR, vector spaces), the
 * stage runner's, and the upload path's (POST /images/analyze stores through ingest). The
 * composition root (src/app.ts) builds them once and passes its context, which satisfies this
 * interface: the feature names what it needs and no more.
 */
import type { ImageAnalyzers } from "./analyzers.ts";
import type { IngestDeps } from "../ingest/deps.ts";
import type { BackgroundWork } from "../jobs/background-work.ts";
import type { OcrRouter } from "../ocr/ocr-router.ts";
import type { StageRunnerDeps } from "../processing/stage-runner.ts";
import type { VectorSpaces } from "../vectors/vector-spaces.ts";

export interface ImageDeps extends IngestDeps, StageRunnerDeps {
  /** Files being analysed, which work that can wait (model preparation, re-embedding) gives way to. */
  background: BackgroundWork;
  /** Image models (detectors, embeddings, captioning), loaded lazily. */
  images: ImageAnalyzers;
  /** Text recognition for images, scanned pages and video frames (PP-OCR or tesseract by kind), loaded lazily. */
  ocr: OcrRouter;
  /** The vector spaces (image embeddings, faces). */
  spaces: VectorSpaces;
}
