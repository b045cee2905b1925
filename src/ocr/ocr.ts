/**
 * Offline OCR: turns an image's bytes into its text lines with boxes normalized to the upright
 * image. Owns the tesseract.js worker pool (never touching the network or the working directory),
 * its language data, and the sharp preprocessing that makes photos legible to it. Deciding which
 * images to OCR and storing the results is the pipeline's job.
 *
 * Languages: English is bundled (npm `@tesseract.js-data/eng`, 4.0.0_best_int). Any other
 * tesseract language is read from `<modelsDir>/tesseract/<code>.traineddata` (or `.gz`), where a
 * site may also put its own `eng`. With only the bundled English the worker reads the package's
 * file directly; otherwise the files are gathered, uncompressed, into a temporary directory.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { access, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { gunzipSync } from "node:zlib";
import type { ModelCheck } from "../models/model-verifier.ts";
import { modelsReady, tesseractPaths } from "../native/packages.ts";
import path from "node:path";
import sharp from "sharp";
import { createScheduler, createWorker, OEM, type Page, type Scheduler, type Worker } from "tesseract.js";
import { errorMessage } from "../errors.ts";
import { DEFAULT_FILTER, filterLines, type FilterOptions } from "./ocr-filter.ts";

/** Normalized 0-1, relative to the image as displayed (after EXIF orientation). */
export interface BoundingBox {
  x_min: number;
  y_min: number;
  x_max: number;
  y_max: number;
}

export interface TextRegion {
  text: string;
  bounding_box: BoundingBox;
  /** 0-1 */
  confidence: number;
  /** The line's words with their boxes (a scanned table's cells are told apart by the gaps between them). */
  words?: { text: string; bounding_box: BoundingBox }[];
}

export interface OcrResult {
  /** Lines joined by "\n"; paragraphs separated by a blank line. */
  text: string;
  /** One per text line, in reading order. */
  regions: TextRegion[];
  /** Pixel size OCR saw (after EXIF orientation and scaling). */
  width: number;
  height: number;
}

/**
 * How tesseract finds the text before reading it. "block" (the default) reads the image as one
 * block of lines: photos, receipts, labels, a video frame. "page" first finds the page's columns,
 * text blocks and pictures (tesseract's automatic page segmentation): a document page. Measured
 * (scripts/bench/ocr.ts, digitization.ts): a scanned two-column page read as one block fits one
 * baseline across both columns and garbles the lines it misjudges (a DocBank page's column beside
 * a diagram: "Wi Iv Eb Box Encodi I" for "We apply Exponent Box Encoding"); as a page, DocBank's
 * 18 page images read at word F1 0.934 against 0.915. Receipts and single text lines read better
 * as one block (SROIE CER 0.176 against 0.217, UW-III lines 0.006 against 0.014).
 */
export type Segmentation = "block" | "page";

const PAGE_SEGMENTATION_MODE: Record<Segmentation, string> = { block: "6", page: "3" };

export interface OcrOptions {
  /** Tesseract workers, each a thread with its own copy of the model. Default 1. */
  workers?: number;
  /** Tesseract language codes, e.g. ["eng", "deu"]. Default ["eng"]. */
  languages?: string[];
  /** Where languages other than the bundled English are looked for (`<modelsDir>/tesseract/`). */
  modelsDir?: string;
  /** The models manifest check, run on the `tesseract` folder before its files are used. */
  check?: ModelCheck;
  /** Where gathered language files are written (the data directory's scratch, emptied at start). Default: the OS temp dir. */
  scratchDir?: string;
  /** Which words are kept (ocr-filter.ts); default DEFAULT_FILTER. */
  filter?: FilterOptions;
}

// Tesseract misreads text only a few pixels tall, so small images are scaled up; huge ones are
// scaled down because recognition time grows with pixel count while their text stays legible.
const MIN_LONG_SIDE = 1000;
const MAX_LONG_SIDE = 2500;

interface LanguageData {
  /** The directory tesseract.js reads `<code>.traineddata[.gz]` from. */
  langPath: string;
  gzip: boolean;
  /** Removes what was gathered (nothing for the bundled file). */
  dispose(): void;
}

/** Where a site installs tesseract language `code`, in order of preference. */
export function siteLanguageFiles(modelsDir: string, code: string): string[] {
  const dir = path.join(modelsDir, "tesseract");
  return [path.join(dir, `${code}.traineddata`), path.join(dir, `${code}.traineddata.gz`)];
}

/**
 * Finds every language's file, or fails naming the one missing and where it was looked for.
 * Resolved from the installed packages so the worker never falls back to its CDN defaults.
 */
async function languageData(languages: string[], options: OcrOptions): Promise<LanguageData> {
  const { modelsDir, check } = options;
  const bundled = (await tesseractPaths()).langPath;
  if (modelsDir) await modelsReady(modelsDir);
  const siteDir = modelsDir ? path.join(modelsDir, "tesseract") : null;
  const exists = (file: string) => access(file).then(() => true, () => false);
  const sources: { code: string; file: string }[] = [];
  for (const code of languages) {
    const candidates = [...(modelsDir ? siteLanguageFiles(modelsDir, code) : []), ...(code === "eng" ? [path.join(bundled, "eng.traineddata.gz")] : [])];
    let found: string | undefined;
    for (const candidate of candidates) if (!found && (await exists(candidate))) found = candidate;
    if (!found) {
      const where = siteDir ? `${siteDir}/${code}.traineddata (or .gz)` : `a models directory's tesseract/${code}.traineddata`;
      throw new Error(`OCR model is missing: language "${code}" needs ${where}`);
    }
    sources.push({ code, file: found });
  }
  if (sources.every((s) => s.file.startsWith(bundled + path.sep))) return { langPath: bundled, gzip: true, dispose: () => {} };
  await check?.("tesseract");
  const scratch = options.scratchDir ?? tmpdir();
  mkdirSync(scratch, { recursive: true });
  const dir = mkdtempSync(path.join(scratch, "tessdata-"));
  try {
    for (const { code, file } of sources) {
      const bytes = await readFile(file);
      writeFileSync(path.join(dir, `${code}.traineddata`), file.endsWith(".gz") ? gunzipSync(bytes) : bytes);
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return { langPath: dir, gzip: false, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

export class OcrEngine {
  private readonly workers: number;
  readonly languages: string[];
  private readonly options: OcrOptions;
  private data: LanguageData | null = null;
  private readonly filter: FilterOptions;
  private scheduler: Promise<Scheduler> | null = null;
  private closed = false;

  constructor(options: OcrOptions = {}) {
    this.workers = Math.max(1, Math.floor(options.workers ?? 1));
    this.languages = options.languages?.length ? options.languages : ["eng"];
    this.options = options;
    this.filter = options.filter ?? DEFAULT_FILTER;
  }

  /** Accepts any image buffer sharp can read (jpeg, png, webp, tiff, gif, avif, heic...). */
  async recognize(image: Buffer | Uint8Array, { segmentation = "block" }: { segmentation?: Segmentation } = {}): Promise<OcrResult> {
    // Decode before touching the pool so a bad upload never costs a worker start.
    const { png, width, height } = await preprocess(image);
    const scheduler = await this.pool();
    // Set for this job only: tesseract.js passes options it does not know on to tesseract and
    // restores the worker's parameters after the job (its types list only its own options).
    // Layout analysis reports what it found ("Detected 19 diacritics") on stdout: into the debug file.
    const parameters = { tessedit_pageseg_mode: PAGE_SEGMENTATION_MODE[segmentation], debug_file: "/dev/null" } as object;
    const { data } = await scheduler.addJob("recognize", png, parameters, { blocks: true, text: false }).catch((err: unknown) => {
      throw asError(err, "OCR failed");
    });
    return toResult(data, width, height, this.filter);
  }

  /** Terminates the workers. Safe to call twice; the engine cannot be used afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const pending = this.scheduler;
    this.scheduler = null;
    if (!pending) return;
    const scheduler = await pending.catch(() => null);
    await scheduler?.terminate();
    this.data?.dispose();
    this.data = null;
  }

  /** What produced the text, for the extraction's source. */
  get modelDescription(): string {
    return `tesseract.js ${this.languages.join("+")}`;
  }

  private pool(): Promise<Scheduler> {
    // Checked here rather than on entry, so a call still decoding when close() ran cannot restart the pool.
    if (this.closed) return Promise.reject(new Error("OcrEngine is closed"));
    if (!this.scheduler) {
      const starting = (async () => {
        this.data ??= await languageData(this.languages, this.options);
        return startPool(this.workers, this.languages, this.data);
      })();
      // A failed start must not poison the engine: the next call tries again.
      starting.catch(() => {
        if (this.scheduler === starting) this.scheduler = null;
      });
      this.scheduler = starting;
    }
    return this.scheduler;
  }
}

// A worker that fails to load the model can't be terminated (tesseract.js never hands it over)
// and its thread would outlive the engine: languageData rules out missing files before any starts.
async function startPool(count: number, languages: string[], data: LanguageData): Promise<Scheduler> {
  const { workerPath } = await tesseractPaths();
  const started = await Promise.allSettled(Array.from({ length: count }, () => startWorker(workerPath, languages, data)));
  const failure = started.find((s) => s.status === "rejected");
  if (failure) {
    // Don't leave the threads that did start running with nobody to terminate them.
    await Promise.allSettled(started.map((s) => (s.status === "fulfilled" ? s.value.terminate() : null)));
    throw failure.reason;
  }
  const scheduler = createScheduler();
  for (const s of started) if (s.status === "fulfilled") scheduler.addWorker(s.value);
  return scheduler;
}

function startWorker(workerPath: string, languages: string[], data: LanguageData): Promise<Worker> {
  return new Promise((resolve, reject) => {
    createWorker(languages, OEM.LSTM_ONLY, {
      workerPath,
      langPath: data.langPath,
      gzip: data.gzip,
      // The default cache writes eng.traineddata into the working directory.
      cacheMethod: "none",
      logger: () => {},
      // Without a handler tesseract.js throws every failed job's error from its message listener,
      // an uncaught exception. It is also the only signal of a failed model load: createWorker
      // then never settles, and the first recognize would hang forever. After a successful start
      // this reject is a no-op and the failing job's own promise carries the error.
      errorHandler: (err: unknown) => reject(asError(err, "OCR worker failed to start")),
    }).then(resolve, (err: unknown) => reject(asError(err, "OCR worker failed to start")));
  });
}

async function preprocess(image: Buffer | Uint8Array): Promise<{ png: Buffer; width: number; height: number }> {
  try {
    const source = sharp(image);
    const { autoOrient } = await source.metadata();
    const longSide = Math.max(autoOrient.width, autoOrient.height);
    const target = Math.min(MAX_LONG_SIDE, Math.max(MIN_LONG_SIDE, longSide));
    const { data, info } = await source
      .autoOrient()
      .flatten({ background: "#ffffff" })
      .greyscale()
      .resize({ width: target, height: target, fit: "inside" })
      // Tesseract warns about (and guesses) a missing resolution; screen text at this scale reads like 300 dpi print.
      .withDensity(300)
      .png({ compressionLevel: 1 })
      .toBuffer({ resolveWithObject: true });
    return { png: data, width: info.width, height: info.height };
  } catch (err) {
    // libvips reports one line per layer; keep the message to one line for logs and API errors.
    const reason = errorMessage(err).trim().replace(/\s*\n\s*/g, "; ");
    throw new Error(`OCR failed: the image could not be decoded (${reason})`, { cause: err });
  }
}

/**
 * Lines of the words the filter keeps (ocr-filter.ts), each line's box the union of its kept
 * words and its confidence their mean; nothing at all when the page holds no text.
 */
function toResult(page: Page, width: number, height: number, filter: FilterOptions): OcrResult {
  const paragraphs = (page.blocks ?? []).flatMap((block) => block.paragraphs.map((paragraph) => paragraph.lines.map((line) => line.words)));
  const kept = filterLines(paragraphs.flat(), filter);
  if (!kept) return { text: "", regions: [], width, height };
  const regions: TextRegion[] = [];
  const texts: string[] = [];
  let index = 0;
  for (const paragraph of paragraphs) {
    const lines: string[] = [];
    for (let i = 0; i < paragraph.length; i++) {
      const words = kept[index++]!;
      if (!words.length) continue;
      const text = words.map((w) => w.text.trim()).join(" ");
      const x0 = Math.min(...words.map((w) => w.bbox.x0));
      const y0 = Math.min(...words.map((w) => w.bbox.y0));
      const x1 = Math.max(...words.map((w) => w.bbox.x1));
      const y1 = Math.max(...words.map((w) => w.bbox.y1));
      const confidence = words.reduce((n, w) => n + w.confidence, 0) / words.length / 100;
      regions.push({
        text,
        bounding_box: { x_min: unit(x0 / width), y_min: unit(y0 / height), x_max: unit(x1 / width), y_max: unit(y1 / height) },
        confidence: unit(confidence),
        words: words.map((w) => ({ text: w.text.trim(), bounding_box: { x_min: unit(w.bbox.x0 / width), y_min: unit(w.bbox.y0 / height), x_max: unit(w.bbox.x1 / width), y_max: unit(w.bbox.y1 / height) } })),
      });
      lines.push(text);
    }
    if (lines.length) texts.push(lines.join("\n"));
  }
  return { text: texts.join("\n\n"), regions, width, height };
}

// tesseract.js rejects with bare strings; callers deserve an Error with a stack.
function asError(err: unknown, context: string): Error {
  return err instanceof Error ? err : new Error(`${context}: ${String(err)}`);
}

function unit(value: number): number {
  return Math.round(Math.min(1, Math.max(0, value)) * 10000) / 10000;
}
