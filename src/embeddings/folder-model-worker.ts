/**
 * Worker thread entry that runs a folder text model (transformers.js + ONNX Runtime) off the
 * main thread: tokenizing a batch, building its tensors, pooling and normalizing are synchronous
 * JavaScript that would otherwise hold up requests for milliseconds per batch, and ONNX
 * Runtime's own threads, started from here, inherit this thread's lowered priority, so on a busy
 * machine the event loop goes first. The pipeline loads on the first request; the main thread
 * (src/documents/text-embedder.ts) checks files and the manifest before asking.
 */
import { serveRequests } from "../native/worker-thread.ts";
import { lowerThreadPriority } from "../native/thread-priority.ts";
import { offlineTransformers } from "../models/transformers.ts";

export interface FolderModelRequest {
  modelsDir: string;
  /** Absolute path of the model's folder. */
  folder: string;
  /** Already prefixed with the model's prompt for their purpose. */
  texts: string[];
  pooling: "mean" | "cls";
  /** Longer inputs are truncated to this many tokens ([CLS]/[SEP] included). */
  maxTokens: number;
  /** Texts per ONNX Runtime run. */
  batch: number;
}
/** `vectors`: texts.length × dim floats, L2-normalized, in order. */
export type FolderModelReply = { vectors: Float32Array; dim: number } | { error: string };

interface FeatureExtractor {
  (texts: string[], options: { pooling: "mean" | "cls"; normalize: boolean }): Promise<{ data: Float32Array; dims: number[] }>;
  tokenizer: object;
}

let loaded: { folder: string; pipe: Promise<FeatureExtractor> } | null = null;

// Background work: the event loop that feeds this thread goes first on a busy machine.
lowerThreadPriority();

async function extractor({ modelsDir, folder, maxTokens }: FolderModelRequest): Promise<FeatureExtractor> {
  if (loaded?.folder !== folder) {
    const pipe = (async () => {
      const { pipeline } = await offlineTransformers(modelsDir);
      const extract = (await pipeline("feature-extraction", folder, {
        local_files_only: true,
        dtype: "q8", // selects onnx/model_quantized.onnx
        device: "cpu",
        // ONNX Runtime's threads otherwise spin between runs, burning a shared core for nothing.
        session_options: { extra: { session: { intra_op: { allow_spinning: "0" }, inter_op: { allow_spinning: "0" } } } },
      } as Record<string, unknown>)) as unknown as FeatureExtractor;
      // The pipeline truncates at the tokenizer's model_max_length (512 for BERT); truncate at
      // the window the model is used with instead, as sentence-transformers does.
      Object.defineProperty(extract.tokenizer, "model_max_length", { value: maxTokens, configurable: true });
      return extract;
    })();
    loaded = { folder, pipe };
    pipe.catch(() => {
      if (loaded?.pipe === pipe) loaded = null;
    });
  }
  return loaded.pipe;
}

serveRequests<FolderModelRequest, FolderModelReply>(async (request) => {
  try {
    const extract = await extractor(request);
    const { texts, pooling, batch } = request;
    // Runs of texts of similar length: a run is padded to its longest text.
    const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
    let vectors: Float32Array | null = null;
    let dim = 0;
    for (let start = 0; start < order.length; start += batch) {
      const run = order.slice(start, start + batch);
      const output = await extract(run.map((i) => texts[i]!), { pooling, normalize: true });
      dim = output.dims.at(-1)!;
      vectors ??= new Float32Array(texts.length * dim);
      run.forEach((i, k) => vectors!.set(output.data.subarray(k * dim, (k + 1) * dim), i * dim));
    }
    vectors ??= new Float32Array(0);
    return { reply: { vectors, dim }, transfer: [vectors.buffer as ArrayBuffer] };
  } catch (err) {
    return { reply: { error: err instanceof Error ? err.message : String(err) } };
  }
});
