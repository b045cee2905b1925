/**
 * Which OCR engine reads which kind of input. PP-OCR (ppocr/) reads where it was measured to read
 * better, when its model folder is installed (`<modelsDir>/ppocr/`, fetched by the models step)
 * and OCR is set to English only; tesseract (ocr.ts) reads everything else: its other languages,
 * the kinds where it wins, and everything when the PP-OCR folder is absent. The folder is looked
 * for on every call, so models installed later are used without a restart.
 *
 * Measured with `npm run bench:ocr` and `bench:digitization` (docs/benchmarks.md): PP-OCR's
 * character error rate on photos' scene text, receipts and text lines is a fraction of
 * tesseract's, so photos, receipts and screenshots (images) and video frames go to PP-OCR.
 * Scanned pages stay with tesseract: the layout rules read columns, paragraphs and table cells
 * from tesseract's page segmentation and words.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import type { ModelCheck } from "../models/model-verifier.ts";
import type { OcrEngine, OcrResult, Segmentation } from "./ocr.ts";
import { PpOcrEngine } from "./ppocr/ppocr-engine.ts";
import { PPOCR_FILES } from "./ppocr/ppocr-files.ts";

/** What is being read: an uploaded picture, a video's keyframe, a scanned document page. */
export type OcrInput = "image" | "video-frame" | "scan";

/** The kinds PP-OCR reads when it is installed (measured; see the module comment). */
export const PPOCR_INPUTS: ReadonlySet<OcrInput> = new Set(["image", "video-frame"]);

/** The model folder's name under the models directory. */
export const PPOCR_FOLDER = "ppocr";

export interface OcrRouterOptions {
  /** Where `ppocr/` is looked for; without one, tesseract reads everything. */
  modelsDir?: string;
  /** The models manifest check, run on the PP-OCR folder before it is used. */
  check?: ModelCheck;
  /** Threads one PP-OCR model run may use. */
  threads?: number;
}

export class OcrRouter {
  private readonly ppocr: PpOcrEngine | null;
  private readonly folder: string | null;

  constructor(
    readonly tesseract: OcrEngine,
    private readonly options: OcrRouterOptions = {},
  ) {
    this.folder = options.modelsDir ? path.join(options.modelsDir, PPOCR_FOLDER) : null;
    this.ppocr = this.folder ? new PpOcrEngine({ folder: this.folder, settings: options.threads ? { threads: options.threads } : {} }) : null;
  }

  async recognize(image: Buffer | Uint8Array, { input = "image", segmentation }: { input?: OcrInput; segmentation?: Segmentation } = {}): Promise<OcrResult> {
    if (this.readsWithPpOcr(input)) {
      await this.options.check?.(PPOCR_FOLDER);
      return this.ppocr!.recognize(image);
    }
    return this.tesseract.recognize(image, segmentation ? { segmentation } : {});
  }

  /** What reads `input` now, for the extraction's source. */
  modelFor(input: OcrInput): string {
    return this.readsWithPpOcr(input) ? `PP-OCR (${PPOCR_FOLDER})` : this.tesseract.modelDescription;
  }

  /**
   * Whether reading `input` starts with a trained text detector (PP-OCR's), which finds no lines
   * on an image without text at a fraction of the reading's cost: then no cheaper test needs to
   * decide first (images/text-gate.ts is that test for tesseract).
   */
  detectsTextFirst(input: OcrInput): boolean {
    return this.readsWithPpOcr(input);
  }

  async close(): Promise<void> {
    this.ppocr?.close();
    await this.tesseract.close();
  }

  private readsWithPpOcr(input: OcrInput): boolean {
    if (!this.ppocr || !PPOCR_INPUTS.has(input)) return false;
    // Only English was measured; a site that set other tesseract languages asked for those.
    if (this.tesseract.languages.some((code) => code !== "eng")) return false;
    return existsSync(path.join(this.folder!, PPOCR_FILES.det));
  }
}
