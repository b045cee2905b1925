/**
 * The TensorFlow.js side of image vision: one tfjs runtime per process on the WebAssembly
 * backend, shared by Human (CenterNet objects, BlazeFace + face mesh for faces) and the
 * MobileNetV2 network that ships inside nsfwjs (its pooled late-layer features are the default
 * image embedding).
 *
 * Everything is read from files inside node_modules, resolved at run time; nothing is fetched.
 * Used only through vision.ts (and vision-tiles.ts, which runs the detectors for it).
 */
import { createRequire } from "node:module";
import { assetsReady, isCompiled, packageRequire } from "../native/packages.ts";
import { readFile, access } from "node:fs/promises";
import path from "node:path";
import type * as TfCore from "@tensorflow/tfjs-core";
import type * as TfLayers from "@tensorflow/tfjs-layers";
import type { Human, Config as HumanConfig, FaceResult, ObjectResult } from "@vladmandic/human";
import { errorMessage } from "../errors.ts";

/** The 80 COCO classes CenterNet can report, in its class-id order. */
export const COCO_LABELS: readonly string[] = [
  "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat", "traffic light",
  "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat", "dog", "horse", "sheep", "cow",
  "elephant", "bear", "zebra", "giraffe", "backpack", "umbrella", "handbag", "tie", "suitcase", "frisbee",
  "skis", "snowboard", "sports ball", "kite", "baseball bat", "baseball glove", "skateboard", "surfboard",
  "tennis racket", "bottle", "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple",
  "sandwich", "orange", "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair", "couch",
  "potted plant", "bed", "dining table", "toilet", "tv", "laptop", "mouse", "remote", "keyboard",
  "cell phone", "microwave", "oven", "toaster", "sink", "refrigerator", "book", "clock", "vase", "scissors",
  "teddy bear", "hair drier", "toothbrush",
];

export const MOBILENET_MODEL_NAME = "mobilenet_v2-nsfwjs";
export const MOBILENET_INPUT_SIZE = 224;

// Human's node-wasm build does not bundle tfjs: it require()s tfjs-core, tfjs-converter and
// tfjs-backend-wasm from node_modules. Resolving those (and tfjs-layers) from Human's own
// location guarantees all of them share one tfjs-core instance: one engine, one kernel registry,
// one Tensor class, even if a package manager ever nests a second copy somewhere.
interface VisionModules {
  tf: typeof TfCore;
  wasmBackend: { setWasmPaths(prefix: string): void };
  layers: typeof TfLayers;
  humanModule: { Human: new (config?: Partial<HumanConfig>) => Human };
  /** Folder of tfjs-backend-wasm's .wasm files, with a trailing separator. */
  wasmDir: string;
  humanModelsDir: string;
  mobileNetDir: string;
  requireFile(file: string): unknown;
}

// Loaded on first use (a process that never analyzes an image never looks for them).
const modules = once(async (): Promise<VisionModules> => (isCompiled ? bundledModules(await assetsReady()) : installedModules()));

function installedModules(): VisionModules {
  const requireHere = packageRequire();
  const humanMain = requireHere.resolve("@vladmandic/human");
  const requireFromHuman = createRequire(humanMain);
  const tf = requireFromHuman("@tensorflow/tfjs-core") as typeof TfCore;
  // tfjs-layers is a dependency of @tensorflow/tfjs, not of Human; resolve it from there.
  const requireFromTfjs = createRequire(requireHere.resolve("@tensorflow/tfjs"));
  const layersMain = requireFromTfjs.resolve("@tensorflow/tfjs-layers");
  if (createRequire(layersMain)("@tensorflow/tfjs-core") !== tf) {
    throw new Error("@tensorflow/tfjs-layers resolves a different copy of @tensorflow/tfjs-core than @vladmandic/human");
  }
  return {
    tf,
    wasmBackend: requireFromHuman("@tensorflow/tfjs-backend-wasm") as VisionModules["wasmBackend"],
    layers: requireFromTfjs(layersMain) as typeof TfLayers,
    // Human's exports map has no "./dist/..." entry for the wasm build, so it is addressed by file.
    humanModule: requireHere(path.join(path.dirname(humanMain), "human.node-wasm.js")) as VisionModules["humanModule"],
    wasmDir: path.dirname(requireFromHuman.resolve("@tensorflow/tfjs-backend-wasm")) + path.sep,
    humanModelsDir: path.join(path.dirname(humanMain), "..", "models"),
    mobileNetDir: path.join(path.dirname(requireHere.resolve("nsfwjs")), "..", "models", "mobilenet_v2"),
    requireFile: requireHere,
  };
}

/** The compiled binary: one pre-bundled runtime file (a single tfjs-core) and model files beside it. */
function bundledModules(assets: string): VisionModules {
  const dir = path.join(assets, "vision");
  const requireFile = createRequire(path.join(dir, "runtime.js"));
  const runtime = requireFile("./runtime.js") as { tf: typeof TfCore; wasm: VisionModules["wasmBackend"]; layers: typeof TfLayers; human: VisionModules["humanModule"] };
  return {
    tf: runtime.tf,
    wasmBackend: runtime.wasm,
    layers: runtime.layers,
    humanModule: runtime.human,
    wasmDir: path.join(dir, "wasm") + path.sep,
    humanModelsDir: path.join(dir, "human-models"),
    mobileNetDir: path.join(dir, "mobilenet_v2"),
    requireFile,
  };
}

// Models load through a tfjs IO router of our own so nothing goes through fetch(): Human would
// otherwise fetch() its model URLs, and a private scheme cannot collide with anyone's router.
const LOCAL_SCHEME = "mediabox-local://";

export interface TfjsRuntime {
  tf: typeof TfCore;
  layers: typeof TfLayers;
  human: Human;
}

let runtime: Promise<TfjsRuntime> | undefined;
let routerRegistered = false;

/** The process-wide tfjs runtime; created once, on first use. */
export function tfjsRuntime(): Promise<TfjsRuntime> {
  runtime ??= createRuntime().catch((err: unknown) => {
    runtime = undefined; // a later call may retry (for example after a transient fs error)
    throw new Error(`could not start the TensorFlow.js wasm runtime: ${errorMessage(err)}`, { cause: err });
  });
  return runtime;
}

async function createRuntime(): Promise<TfjsRuntime> {
  const { tf, wasmBackend, layers, humanModule, wasmDir, humanModelsDir: HUMAN_MODELS_DIR } = await modules();

  if (!routerRegistered) {
    // A router answers null for URLs it does not handle (the published type omits that case).
    const router = (url: string | string[]) => (typeof url === "string" && url.startsWith(LOCAL_SCHEME) ? localModelHandler(tf, url) : null);
    tf.io.registerLoadRouter(router as Parameters<typeof tf.io.registerLoadRouter>[0]);
    routerRegistered = true; // a second one would make tfjs refuse the URL as ambiguous
  }

  // The threaded wasm build starts workers from blob URLs, which Bun does not run reliably;
  // inference is serialized anyway, so the single-threaded SIMD build loses nothing here.
  tf.env().set("WASM_HAS_MULTITHREAD_SUPPORT", false);
  wasmBackend.setWasmPaths(wasmDir);

  const human = new humanModule.Human(humanConfig(wasmDir, HUMAN_MODELS_DIR));
  await human.init();
  if (tf.getBackend() !== "wasm") throw new Error(`tfjs backend is "${tf.getBackend()}", expected "wasm"`);
  return { tf, layers, human };
}

function humanConfig(wasmDir: string, modelsDir: string): Partial<HumanConfig> {
  return {
    backend: "wasm",
    wasmPath: wasmDir,
    modelBasePath: LOCAL_SCHEME + modelsDir + "/",
    debug: false,
    async: true,
    warmup: "none",
    cacheModels: false,
    // Human is built for video: it reuses earlier results when frames look alike. Every call
    // here is an unrelated image, so all frame caching is off.
    cacheSensitivity: 0,
    skipAllowed: false,
    filter: { enabled: false },
    gesture: { enabled: false },
    face: {
      enabled: true,
      // BlazeFace alone scores background texture and hands up to ~0.5 and real small faces
      // below that; Human's face-mesh stage re-scores each candidate and rejects non-faces, which
      // makes a count trustworthy. Iris, description and emotion are not needed for a count.
      // maxDetected caps the count (and the mesh runs, ~10 ms each) for contact sheets and crowds.
      detector: { maxDetected: 100, minConfidence: 0.2, rotation: false, skipFrames: 0, skipTime: 0, return: false },
      mesh: { enabled: true, keepInvalid: false },
      iris: { enabled: false },
      attention: { enabled: false },
      description: { enabled: false },
      emotion: { enabled: false },
      antispoof: { enabled: false },
      liveness: { enabled: false },
    },
    body: { enabled: false },
    hand: { enabled: false },
    segmentation: { enabled: false },
    // Below analyze()'s 0.4 on purpose: a faint person is not reported, but hints that a group
    // photo deserves a tiled second look (vision-tiles.ts).
    object: { enabled: true, minConfidence: 0.25, maxDetected: 50, iouThreshold: 0.4, skipFrames: 0, skipTime: 0 },
  };
}

/** tfjs IOHandler for a model.json + weight files on local disk. */
function localModelHandler(tf: typeof TfCore, url: string): TfCore.io.IOHandler {
  const jsonPath = url.slice(LOCAL_SCHEME.length);
  return {
    load: async () => {
      const json = JSON.parse(await readFile(jsonPath, "utf8")) as TfCore.io.ModelJSON;
      return tf.io.getModelArtifactsForJSON(json, async (manifest) => {
        const specs: TfCore.io.WeightsManifestEntry[] = [];
        const buffers: ArrayBuffer[] = [];
        for (const group of manifest) {
          for (const file of group.paths) buffers.push(toArrayBuffer(await readFile(path.join(path.dirname(jsonPath), file))));
          specs.push(...group.weights);
        }
        return [specs, concatArrayBuffers(buffers)];
      });
    },
  };
}

// The wasm backend runs kernels synchronously on one thread, and Human keeps per-call state on
// its instance, so interleaving two detect() calls would corrupt results. One queue for all
// tfjs work in the process costs no parallelism.
let queue: Promise<unknown> = Promise.resolve();
function exclusive<T>(task: () => Promise<T> | T): Promise<T> {
  const run = queue.then(task);
  queue = run.catch(() => undefined);
  return run;
}

/** Memoizes a loader but forgets failures, so a later call can succeed (e.g. after a repair). */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= load().catch((err: unknown) => {
      value = undefined;
      throw err;
    });
    return value;
  };
}

// Human keeps module-level references to its models, so once loaded they stay for the life of
// the process (a second Human instance would share them anyway). MobileNet stays likewise.
const HUMAN_MODEL_FILES = ["centernet", "blazeface", "facemesh"].flatMap((m) => [`${m}.json`, `${m}.bin`]);
const humanReady = once(async () => {
  const rt = await tfjsRuntime();
  const { humanModelsDir: HUMAN_MODELS_DIR } = await modules();
  for (const file of HUMAN_MODEL_FILES) {
    await access(path.join(HUMAN_MODELS_DIR, file)).catch(() => {
      throw new Error(`vision model file missing: ${path.join(HUMAN_MODELS_DIR, file)} (reinstall @vladmandic/human)`);
    });
  }
  await exclusive(() => rt.human.load());
  const stats = rt.human.models.stats().modelStats;
  for (const name of ["centernet", "blazeface", "facemesh"]) {
    if (!stats.find((m) => m.name === name)?.loaded) throw new Error(`could not load the ${name} model from ${HUMAN_MODELS_DIR}`);
  }
  return rt;
});

export interface RawDetections {
  objects: ObjectResult[];
  faces: number;
  /** Face boxes in pixels of the input (x, y, width, height) with their confidence. */
  faceBoxes: { x: number; y: number; w: number; h: number; score: number }[];
  /** The faces with their faceres descriptors, for a region that asked for them. */
  descriptors?: FaceDescriptor[];
}

export interface DetectRegion {
  /** Square region of the image in pixels; the whole image when absent. */
  tile?: { left: number; top: number; size: number };
  faces: boolean;
  objects: boolean;
  /** Also each face's faceres descriptor (what detectFaceDescriptors gives), in the same pass. */
  describe?: boolean;
}

/**
 * CenterNet objects and BlazeFace faces in regions of one RGB image (rows of width*3 bytes), in
 * one turn of the queue (the image is uploaded to tfjs once). Boxes are in pixels of each region. `shouldStop` is asked before each
 * region after the first; once it says yes the remaining regions are skipped (a time budget).
 */
export async function detectRegions(
  rgb: Uint8Array,
  width: number,
  height: number,
  regions: DetectRegion[],
  shouldStop: () => boolean = () => false,
): Promise<RawDetections[]> {
  const rt = await (regions.some((r) => r.describe) ? faceresReady() : humanReady());
  return exclusive(async () => {
    const input = rt.tf.tensor3d(rgb, [height, width, 3], "int32");
    const results: RawDetections[] = [];
    try {
      for (const region of regions) {
        if (results.length > 0 && shouldStop()) break;
        const { tile } = region;
        const part = tile ? rt.tf.slice(input, [tile.top, tile.left, 0], [tile.size, tile.size, 3]) : input;
        try {
          // Human merges a per-call config into its own for good, so both switches are always given.
          const describe = region.faces && region.describe === true;
          const result = await rt.human.detect(part, { face: { enabled: region.faces, description: { enabled: describe } }, object: { enabled: region.objects } });
          if (result.error) throw new Error(`detection failed: ${result.error}`);
          results.push({
            objects: result.object,
            faces: result.face.length,
            faceBoxes: result.face.map((f) => ({ x: f.box[0], y: f.box[1], w: f.box[2], h: f.box[3], score: f.score })),
            ...(describe ? { descriptors: descriptorsOf(result.face) } : {}),
          });
        } finally {
          if (part !== input) part.dispose();
        }
      }
      return results;
    } finally {
      input.dispose();
    }
  });
}

export interface FaceDescriptor {
  /** Pixels of the input: x, y, width, height. */
  box: { x: number; y: number; w: number; h: number };
  score: number;
  /** Human's faceres descriptor (1024 values), as the model gives it. */
  embedding: Float32Array;
}

const faceresReady = once(async () => {
  const rt = await humanReady();
  const { humanModelsDir: HUMAN_MODELS_DIR } = await modules();
  for (const file of ["faceres.json", "faceres.bin"]) {
    await access(path.join(HUMAN_MODELS_DIR, file)).catch(() => {
      throw new Error(`vision model file missing: ${path.join(HUMAN_MODELS_DIR, file)} (reinstall @vladmandic/human)`);
    });
  }
  await exclusive(() => rt.human.load({ face: { description: { enabled: true } } }));
  if (!rt.human.models.stats().modelStats.find((m) => m.name === "faceres")?.loaded) throw new Error(`could not load the faceres model from ${HUMAN_MODELS_DIR}`);
  return rt;
});

/** BlazeFace faces of one RGB image with Human's faceres descriptor of each (the face-recognition embedding). */
export async function detectFaceDescriptors(rgb: Uint8Array, width: number, height: number): Promise<FaceDescriptor[]> {
  const [faces] = await detectRegions(rgb, width, height, [{ faces: true, objects: false, describe: true }]);
  return faces!.descriptors!;
}

function descriptorsOf(faces: FaceResult[]): FaceDescriptor[] {
  return faces
    .filter((f) => (f.embedding?.length ?? 0) > 0)
    .map((f) => ({ box: { x: f.box[0], y: f.box[1], w: f.box[2], h: f.box[3] }, score: f.score, embedding: Float32Array.from(f.embedding!) }));
}

interface MobileNet {
  rt: TfjsRuntime;
  model: TfLayers.LayersModel;
  dimension: number;
}

/**
 * Which activations make the vector, measured on photos, screenshots and flat graphics against
 * half-size JPEG, mirrored and cropped copies: the pooled 1280-d output of the final ReLU6 is
 * non-negative and sparse, so unrelated images share much of it and re-encoded graphics lose
 * it (a half-size JPEG of a drawing scored 0.77, below an unrelated drawing). The signed
 * outputs of the last two bottleneck blocks (7x7x160 and 7x7x320, before any ReLU), averaged
 * over space, kept every copy nearest to its original with a wider margin.
 */
const FEATURE_LAYERS = ["block_15_add", "block_16_project_BN"] as const;

/**
 * nsfwjs ships MobileNetV2 as browserify bundles (model JSON and base64 weights as JS modules).
 * They are CommonJS-loadable, so they are read directly: nsfwjs's own loader logs to the console
 * on every load and only exposes the classifier, while the intermediate layers are needed here.
 */
const mobileNetReady = once(async (): Promise<MobileNet> => {
  const rt = await tfjsRuntime();
  const { requireFile: requireHere, mobileNetDir: dir } = await modules();
  let modelJson: { modelTopology?: object; weightsManifest?: TfCore.io.WeightsManifestConfig };
  let weightsBase64: unknown;
  try {
    modelJson = requireHere(path.join(dir, "model.min.js")) as typeof modelJson;
    weightsBase64 = requireHere(path.join(dir, "group1-shard1of1.min.js"));
  } catch (err) {
    throw new Error(`could not read the MobileNetV2 model from ${dir}: ${errorMessage(err)}`, { cause: err });
  }
  if (typeof weightsBase64 !== "string" || !modelJson?.modelTopology || !modelJson.weightsManifest) {
    throw new Error(`unexpected MobileNetV2 model format in ${dir}`);
  }
  const weightData = toArrayBuffer(Buffer.from(weightsBase64, "base64"));
  const weightSpecs = modelJson.weightsManifest.flatMap((g) => g.weights);
  return exclusive(async () => {
    const full = await rt.layers.loadLayersModel(
      rt.tf.io.fromMemory({ modelTopology: modelJson.modelTopology, weightSpecs, weightData }),
    );
    const outputs = FEATURE_LAYERS.map((name) => full.getLayer(name).output as TfLayers.SymbolicTensor);
    const model = rt.layers.model({ inputs: full.inputs, outputs });
    const dimension = outputs.reduce((n, t) => n + (t.shape[3] ?? Number.NaN), 0);
    if (!Number.isInteger(dimension)) throw new Error("MobileNetV2 feature layers have no fixed width");
    return { rt, model, dimension };
  });
});

export async function mobileNetDimension(): Promise<number> {
  return (await mobileNetReady()).dimension;
}

/**
 * MobileNetV2 features of a 224x224 RGB image: each feature layer averaged over space and
 * L2-normalized on its own (so both weigh the same), then concatenated.
 */
export async function mobileNetFeatures(rgb: Uint8Array): Promise<Float32Array> {
  const { rt, model, dimension } = await mobileNetReady();
  const expected = MOBILENET_INPUT_SIZE * MOBILENET_INPUT_SIZE * 3;
  if (rgb.length !== expected) throw new Error(`MobileNetV2 input must be ${expected} bytes, got ${rgb.length}`);
  // The nsfwjs model was trained on pixels scaled to 0..1.
  const pixels = new Float32Array(expected);
  for (let i = 0; i < expected; i++) pixels[i] = rgb[i]! / 255;
  return exclusive(() => {
    const { tf } = rt;
    const vector = tf.tidy(() => {
      const input = tf.tensor4d(pixels, [1, MOBILENET_INPUT_SIZE, MOBILENET_INPUT_SIZE, 3]);
      const maps = model.predict(input) as TfCore.Tensor[];
      const parts = maps.map((m) => {
        const pooled = tf.mean(m, [1, 2]);
        return tf.div(pooled, tf.maximum(tf.norm(pooled), 1e-12));
      });
      return tf.concat(parts, 1);
    });
    try {
      const out = new Float32Array(vector.dataSync());
      if (out.length !== dimension) throw new Error(`MobileNetV2 returned ${out.length} features, expected ${dimension}`);
      return out;
    } finally {
      vector.dispose();
    }
  });
}

function toArrayBuffer(buf: Uint8Array): ArrayBuffer {
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
}

function concatArrayBuffers(parts: ArrayBuffer[]): ArrayBuffer {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(new Uint8Array(p), offset);
    offset += p.byteLength;
  }
  return out.buffer;
}

