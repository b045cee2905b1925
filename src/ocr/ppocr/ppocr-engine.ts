/**
 * PP-OCR as an OCR engine with the same result as tesseract's (ocr.ts): lines with their words,
 * boxes normalized to the upright image. The image is decoded and scaled here with sharp (off the
 * event loop in libvips' threads) and read on the PP-OCR thread (ppocr-worker.ts).
 *
 * Scaling follows RapidOCR: the long side at most 2000 px; an image much wider than tall (a
 * single text line) padded above and below so the detector sees a line in a page rather than a
 * sliver; the detector's copy scaled so its short side is at least 736 px, sides multiples of 32.
 */
import sharp from "sharp";
import { errorMessage } from "../../errors.ts";
import { WorkerThread } from "../../native/worker-thread.ts";
import type { BoundingBox, OcrResult, TextRegion } from "../ocr.ts";
import type { Quad } from "./db-boxes.ts";
import type { RawImage } from "./line-crop.ts";
import type { PpLine, PpOcrSettings } from "./ppocr-reader.ts";
import type { PpOcrReply, PpOcrRequest } from "./ppocr-worker.ts";

const MAX_SIDE = 2000;
const MIN_SIDE = 30;
const DET_MIN_SIDE = 736;
const PAD_RATIO = 8;

export interface PpOcrEngineOptions {
  /** The model folder (det.onnx, rec.onnx, cls.onnx). */
  folder: string;
  settings?: Partial<PpOcrSettings>;
}

export class PpOcrEngine {
  private thread: WorkerThread<PpOcrRequest, PpOcrReply> | null = null;
  private closed = false;

  constructor(private readonly options: PpOcrEngineOptions) {}

  async recognize(image: Buffer | Uint8Array): Promise<OcrResult> {
    const prepared = await prepare(image);
    if (this.closed) throw new Error("PP-OCR engine is closed");
    const reply = await this.worker().ask(
      { folder: this.options.folder, settings: this.options.settings ?? {}, image: prepared.image, detInput: prepared.detInput },
      [prepared.image.data.buffer as ArrayBuffer, prepared.detInput.data.buffer as ArrayBuffer],
    );
    if (reply instanceof Error) throw reply;
    if ("error" in reply) throw new Error(`PP-OCR failed: ${reply.error}`);
    return toResult(reply.lines, prepared.width, prepared.height, prepared.padTop);
  }

  close(): void {
    this.closed = true;
    this.thread?.terminate();
    this.thread = null;
  }

  private worker(): WorkerThread<PpOcrRequest, PpOcrReply> {
    if (!this.thread || this.thread.broken) this.thread = new WorkerThread<PpOcrRequest, PpOcrReply>("ocr/ppocr/ppocr-worker.ts", "the PP-OCR thread");
    return this.thread;
  }
}

interface Prepared {
  image: RawImage;
  detInput: RawImage;
  /** The upright image's size as read (before padding). */
  width: number;
  height: number;
  padTop: number;
}

async function prepare(input: Buffer | Uint8Array): Promise<Prepared> {
  try {
    const source = sharp(input);
    const { autoOrient } = await source.metadata();
    let scale = Math.min(1, MAX_SIDE / Math.max(autoOrient.width, autoOrient.height));
    if (Math.min(autoOrient.width, autoOrient.height) * scale < MIN_SIDE) scale = MIN_SIDE / Math.min(autoOrient.width, autoOrient.height);
    const width = Math.max(1, Math.round(autoOrient.width * scale));
    const height = Math.max(1, Math.round(autoOrient.height * scale));
    const padTop = height <= MIN_SIDE || width / height > PAD_RATIO ? Math.floor(Math.abs(Math.max(Math.floor(width / PAD_RATIO), MIN_SIDE) * 2 - height) / 2) : 0;
    const { data, info } = await source
      .autoOrient()
      .flatten({ background: "#ffffff" })
      .toColourspace("srgb")
      .resize({ width, height, fit: "fill" })
      .extend({ top: padTop, bottom: padTop, background: "#ffffff" })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    // Copied: sharp may hand back a slice of a shared pool, which must not be transferred to the thread.
    const image = { data: new Uint8Array(data), width: info.width, height: info.height };
    const ratio = Math.max(1, DET_MIN_SIDE / Math.min(info.width, info.height));
    const detWidth = Math.max(32, Math.round((info.width * ratio) / 32) * 32);
    const detHeight = Math.max(32, Math.round((info.height * ratio) / 32) * 32);
    const det = await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } }).resize({ width: detWidth, height: detHeight, fit: "fill" }).raw().toBuffer();
    return { image, detInput: { data: new Uint8Array(det), width: detWidth, height: detHeight }, width, height, padTop };
  } catch (err) {
    const reason = errorMessage(err).trim().replace(/\s*\n\s*/g, "; ");
    throw new Error(`OCR failed: the image could not be decoded (${reason})`, { cause: err });
  }
}

/**
 * Lines that share a row (vertical overlap of at least half the smaller one) become one region,
 * left to right, as tesseract reports a row; rows without a letter or digit are dropped; rows
 * further apart than 1.5 line heights start a new paragraph in the text.
 */
export function toResult(lines: PpLine[], width: number, height: number, padTop: number): OcrResult {
  const box = (quad: Quad): BoundingBox => ({
    x_min: unit(Math.min(...quad.map((p) => p.x)) / width),
    y_min: unit((Math.min(...quad.map((p) => p.y)) - padTop) / height),
    x_max: unit(Math.max(...quad.map((p) => p.x)) / width),
    y_max: unit((Math.max(...quad.map((p) => p.y)) - padTop) / height),
  });
  const rows: { lines: PpLine[]; box: BoundingBox }[] = [];
  for (const line of lines) {
    const b = box(line.quad);
    const row = rows.find((r) => overlap(r.box, b) >= 0.5 * Math.min(r.box.y_max - r.box.y_min, b.y_max - b.y_min));
    if (row) {
      row.lines.push(line);
      row.box = union(row.box, b);
    } else {
      rows.push({ lines: [line], box: b });
    }
  }
  // A row of symbols alone is what PP-OCR makes of texture in photos without text ("■", "-").
  const kept = rows.filter((row) => row.lines.some((l) => /[\p{L}\p{N}]/u.test(l.text)));
  kept.sort((a, b) => a.box.y_min - b.box.y_min);
  const regions: TextRegion[] = [];
  let text = "";
  let previous: BoundingBox | null = null;
  for (const row of kept) {
    row.lines.sort((a, b) => box(a.quad).x_min - box(b.quad).x_min);
    const chars = row.lines.reduce((n, l) => n + l.text.length, 0);
    const region: TextRegion = {
      text: row.lines.map((l) => l.text).join(" "),
      bounding_box: row.box,
      confidence: unit(row.lines.reduce((n, l) => n + l.confidence * l.text.length, 0) / Math.max(1, chars)),
      words: row.lines.flatMap((l) => l.words.map((w) => ({ text: w.text, bounding_box: box(w.quad) }))),
    };
    if (previous) {
      const lineHeight = Math.min(previous.y_max - previous.y_min, row.box.y_max - row.box.y_min);
      text += row.box.y_min - previous.y_max > 1.5 * lineHeight ? "\n\n" : "\n";
    }
    text += region.text;
    previous = row.box;
    regions.push(region);
  }
  return { text, regions, width, height };
}

const overlap = (a: BoundingBox, b: BoundingBox) => Math.max(0, Math.min(a.y_max, b.y_max) - Math.max(a.y_min, b.y_min));
const union = (a: BoundingBox, b: BoundingBox): BoundingBox => ({
  x_min: Math.min(a.x_min, b.x_min),
  y_min: Math.min(a.y_min, b.y_min),
  x_max: Math.max(a.x_max, b.x_max),
  y_max: Math.max(a.y_max, b.y_max),
});

function unit(value: number): number {
  return Math.round(Math.min(1, Math.max(0, value)) * 10000) / 10000;
}
