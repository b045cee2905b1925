/**
 * PP-OCR (PaddleOCR's detector, angle classifier and recognizer, as ONNX) run by onnxruntime:
 * the detector's probability map becomes line boxes (db-boxes.ts), each line is cut out
 * straight (line-crop.ts), turned half a turn when the classifier says it is upside down, and
 * read by the recognizer (ctc.ts). Pre- and post-processing follow RapidOCR's defaults for the
 * PP-OCR models it ships. Called on the OCR thread (ppocr-worker.ts); CPU-heavy throughout.
 *
 * A model folder holds `det.onnx`, `rec.onnx`, optionally `cls.onnx`, and the recognizer's
 * alphabet either in rec.onnx's metadata ("character") or in `keys.txt` (one per line).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import * as ort from "onnxruntime-node";
import { boxesFromProbabilityMap, DEFAULT_DB, type DetectedBox, mergeLineOverlaps, type Point, type Quad } from "./db-boxes.ts";
import { ctcDecode, wordsOf } from "./ctc.ts";
import { inkBounds, lineFrame, type LineFrame, type RawImage, sampleLine, scaledWidth, turnedHalf } from "./line-crop.ts";
import { onnxMetadata } from "./onnx-metadata.ts";
import { PPOCR_FILES } from "./ppocr-files.ts";


export interface PpWord {
  text: string;
  quad: Quad;
}

export interface PpLine {
  text: string;
  /** Mean probability of the line's characters, 0-1. */
  confidence: number;
  quad: Quad;
  words: PpWord[];
}

export interface PpOcrSettings {
  /** Lines read with a lower mean character probability are dropped (RapidOCR's text_score). */
  textScore: number;
  /** The classifier's probability above which a line is taken as upside down. */
  turnScore: number;
  /** Threads onnxruntime may use for one model run. */
  threads: number;
}

export const DEFAULT_PPOCR: PpOcrSettings = { textScore: 0.5, turnScore: 0.9, threads: 1 };

const REC_HEIGHT = 48;
const REC_MIN_WIDTH = 320;
// A line longer than this many heights is read squeezed to it (a receipt's widest rows are ~40).
const REC_MAX_RATIO = 80;
const CLS_HEIGHT = 48;
const CLS_WIDTH = 192;
const BATCH = 6;

export class PpOcrReader {
  private constructor(
    private readonly det: ort.InferenceSession,
    private readonly rec: ort.InferenceSession,
    private readonly cls: ort.InferenceSession | null,
    private readonly alphabet: string[],
    private readonly settings: PpOcrSettings,
  ) {}

  /** Loads the folder's models; fails naming the file that is missing or unusable. */
  static async load(folder: string, settings: Partial<PpOcrSettings> = {}): Promise<PpOcrReader> {
    const options = { ...DEFAULT_PPOCR, ...settings };
    const file = (name: string) => path.join(folder, name);
    for (const name of [PPOCR_FILES.det, PPOCR_FILES.rec]) {
      if (!existsSync(file(name))) throw new Error(`PP-OCR model folder ${folder} has no ${name}`);
    }
    const sessionOptions: ort.InferenceSession.SessionOptions = {
      intraOpNumThreads: options.threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: "all",
      // Every image has its own input size; an arena sized for the largest one so far is never given back.
      enableCpuMemArena: false,
    };
    const recBytes = readFileSync(file(PPOCR_FILES.rec));
    const alphabet = readAlphabet(recBytes, file(PPOCR_FILES.keys));
    const [det, rec, cls] = await Promise.all([
      ort.InferenceSession.create(file(PPOCR_FILES.det), sessionOptions),
      ort.InferenceSession.create(recBytes, sessionOptions),
      existsSync(file(PPOCR_FILES.cls)) ? ort.InferenceSession.create(file(PPOCR_FILES.cls), sessionOptions) : null,
    ]);
    return new PpOcrReader(det, rec, cls, alphabet, options);
  }

  /**
   * The text lines of `image`, top-down then left to right, in its pixel coordinates. `detInput`
   * is the same picture scaled for the detector (sides multiples of 32).
   */
  async read(image: RawImage, detInput: RawImage): Promise<PpLine[]> {
    const boxes = sortBoxes(mergeLineOverlaps(await this.detect(image, detInput)));
    if (!boxes.length) return [];
    let frames = boxes.map((b) => lineFrame(b.quad));
    if (this.cls) frames = await this.straighten(image, frames);
    const lines = await this.recognize(image, frames);
    return lines.filter((l): l is PpLine => l !== null && l.confidence >= this.settings.textScore && l.text.trim() !== "");
  }

  async release(): Promise<void> {
    await Promise.all([this.det.release(), this.rec.release(), this.cls?.release()]);
  }

  private async detect(image: RawImage, input: RawImage): Promise<DetectedBox[]> {
    const { width, height, data } = input;
    const plane = width * height;
    const tensor = new Float32Array(3 * plane);
    for (let i = 0; i < plane; i++) {
      tensor[i] = data[i * 3 + 2]! / 127.5 - 1;
      tensor[i + plane] = data[i * 3 + 1]! / 127.5 - 1;
      tensor[i + 2 * plane] = data[i * 3]! / 127.5 - 1;
    }
    const output = await this.run(this.det, new ort.Tensor("float32", tensor, [1, 3, height, width]));
    const [, , mapHeight, mapWidth] = output.dims as number[];
    return boxesFromProbabilityMap(output.data as Float32Array, mapWidth!, mapHeight!, image.width, image.height, DEFAULT_DB);
  }

  /** Each frame, turned half a turn where the classifier is sure the line is upside down. */
  private async straighten(image: RawImage, frames: LineFrame[]): Promise<LineFrame[]> {
    const out = [...frames];
    for (let start = 0; start < frames.length; start += BATCH) {
      const batch = frames.slice(start, start + BATCH);
      const plane = 3 * CLS_HEIGHT * CLS_WIDTH;
      const tensor = new Float32Array(batch.length * plane);
      batch.forEach((frame, i) => sampleLine(image, frame, tensor, i * plane, CLS_HEIGHT, CLS_WIDTH, Math.min(CLS_WIDTH, scaledWidth(frame, CLS_HEIGHT))));
      const output = await this.run(this.cls!, new ort.Tensor("float32", tensor, [batch.length, 3, CLS_HEIGHT, CLS_WIDTH]));
      const scores = output.data as Float32Array;
      batch.forEach((frame, i) => {
        if (scores[i * 2 + 1]! > this.settings.turnScore) out[start + i] = turnedHalf(frame);
      });
    }
    return out;
  }

  /** Lines read in batches of similar aspect ratio (less padding), returned in the frames' order. */
  private async recognize(image: RawImage, frames: LineFrame[]): Promise<(PpLine | null)[]> {
    const widths = frames.map((f) => Math.min(REC_HEIGHT * REC_MAX_RATIO, scaledWidth(f, REC_HEIGHT)));
    const order = frames.map((_, i) => i).sort((a, b) => widths[a]! - widths[b]!);
    const lines: (PpLine | null)[] = frames.map(() => null);
    for (let start = 0; start < order.length; start += BATCH) {
      const batch = order.slice(start, start + BATCH);
      const stride = Math.max(REC_MIN_WIDTH, ...batch.map((i) => widths[i]!));
      const plane = 3 * REC_HEIGHT * stride;
      const tensor = new Float32Array(batch.length * plane);
      batch.forEach((frameIndex, i) => sampleLine(image, frames[frameIndex]!, tensor, i * plane, REC_HEIGHT, stride, widths[frameIndex]!));
      const output = await this.run(this.rec, new ort.Tensor("float32", tensor, [batch.length, 3, REC_HEIGHT, stride]));
      const [, steps, classes] = output.dims as number[];
      if (classes !== this.alphabet.length) {
        throw new Error(`PP-OCR recognizer has ${classes} classes but its alphabet ${this.alphabet.length} (blank and space included)`);
      }
      batch.forEach((frameIndex, i) => {
        const frame = frames[frameIndex]!;
        const decoded = ctcDecode(output.data as Float32Array, steps!, classes!, this.alphabet, i);
        const filled = widths[frameIndex]! / stride;
        // Boxes hug the ink: the line's rows and columns with ink; words split it where the recognizer read spaces.
        const { top, bottom, left, right } = inkBounds(tensor, i * plane, REC_HEIGHT, stride, widths[frameIndex]!);
        const spans = wordsOf(decoded, filled);
        if (spans.length) {
          spans[0]!.start = left;
          spans.at(-1)!.end = right;
        }
        const words = spans.map((w) => ({ text: w.text, quad: slice(frame, w.start, Math.max(w.start, w.end), top, bottom) }));
        const quad = slice(frame, left, right, top, bottom);
        lines[frameIndex] = { text: decoded.text.trim(), confidence: decoded.confidence, quad, words };
      });
    }
    return lines;
  }

  private async run(session: ort.InferenceSession, input: ort.Tensor): Promise<ort.Tensor> {
    const results = await session.run({ [session.inputNames[0]!]: input });
    return results[session.outputNames[0]!]!;
  }
}

/**
 * The recognizer's classes: the blank, the alphabet from the model's metadata (or keys.txt), and
 * the space PaddleOCR appends.
 */
function readAlphabet(recModel: Uint8Array, keysFile: string): string[] {
  const fromModel = onnxMetadata(recModel).get("character");
  const listed = fromModel ?? (existsSync(keysFile) ? readFileSync(keysFile, "utf8") : null);
  if (listed === null) throw new Error(`PP-OCR recognizer has no alphabet: neither rec.onnx's metadata nor ${keysFile} lists it`);
  const chars = listed.split(/\r?\n/);
  if (chars.at(-1) === "") chars.pop();
  return ["", ...chars, " "];
}

/** The part of a line's frame between fractions `start` and `end` of its length and `top` and `bottom` of its height, as a quad. */
function slice(frame: LineFrame, start: number, end: number, top = 0, bottom = 1): Quad {
  const at = (f: number, g: number): Point => ({
    x: frame.origin.x + frame.along.x * f + frame.across.x * g,
    y: frame.origin.y + frame.along.y * f + frame.across.y * g,
  });
  return [at(start, top), at(end, top), at(end, bottom), at(start, bottom)];
}

/** Top-down, and left to right among boxes whose tops are within 10 px (PaddleOCR's sorted_boxes). */
export function sortBoxes(boxes: DetectedBox[]): DetectedBox[] {
  const byTop = [...boxes].sort((a, b) => a.quad[0].y - b.quad[0].y);
  const rows: number[] = [];
  let row = 0;
  byTop.forEach((box, i) => {
    if (i > 0 && box.quad[0].y - byTop[i - 1]!.quad[0].y >= 10) row++;
    rows.push(row);
  });
  return byTop.map((box, i) => ({ box, row: rows[i]! })).sort((a, b) => a.row - b.row || a.box.quad[0].x - b.box.quad[0].x).map((e) => e.box);
}
