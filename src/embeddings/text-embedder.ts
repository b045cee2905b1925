/**
 * The sentence-embedding model for document chunks and search queries (default
 * all-MiniLM-L6-v2: 384-d, 256 word pieces), run locally by transformers.js + onnxruntime-node
 * from one folder of the models directory:
 *
 *   <modelsDir>/<model>/config.json, tokenizer.json, tokenizer_config.json, onnx/model_quantized.onnx
 *
 * - Nothing is ever downloaded. Remote loading is disabled (`env.allowRemoteModels = false`,
 *   `local_files_only`), the folder is loaded by its absolute path (which transformers.js never
 *   turns into a Hub URL, and which keeps its per-model-id caches of configs and file lists apart
 *   for two models directories holding a folder of the same name), and transformers.js's own
 *   `env.fetch` is replaced by one that refuses http(s) URLs, so even a library code path that
 *   ignores those settings cannot reach the network.
 * - The tokenizer alone (tokenizer.json + tokenizer_config.json) is enough to size chunks, so
 *   chunking is exact even where the weights are not installed; embedding needs the weights.
 * - Required files are checked up front, so a missing model is an error naming the exact folder or
 *   file that was looked for (never a fake vector); a failed load is retried on the next call, so a
 *   site that copies the folder in later needs no restart for the check to pass. Messages name
 *   them relative to the models directory ("models/all-MiniLM-L6-v2/..."): they reach API answers
 *   (a document's processing error, search's vector_unavailable_reason), which never show server paths.
 * - Everything loads lazily on first use; concurrent callers share one load, and embedding calls
 *   run one at a time in batches of EMBED_BATCH (ONNX Runtime already uses every core per run).
 */
import { stat } from "node:fs/promises";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { ModelCheck } from "../models/model-verifier.ts";
import { offlineTransformers } from "../models/transformers.ts";
import { errorMessage } from "../errors.ts";

export interface TextEmbedderOptions {
  /** The models directory (MEDIABOX_MODELS_DIR). */
  modelsDir: string;
  /** Folder name of the model under modelsDir, e.g. "all-MiniLM-L6-v2" (an "owner/name" path works too). */
  model: string;
  /** Runs before the folder is used (the models manifest check); rejecting refuses the model. */
  check?: ModelCheck;
}

/**
 * What document chunking, embedding and search need from a text model: the folder models of this
 * module and the built-in one (use-sif-embedder.ts), chosen by text-models.ts.
 */
export interface TextEmbedding {
  /** The model whose vectors embed() returns (vectors of different models are never compared). */
  readonly modelId: string;
  /** The model's own token counter, for sizing chunks; rejects when chunks should be sized by estimate. */
  tokenizer(): Promise<TokenCounter>;
  /** The models-directory folder tokenizer() reads (the reader child loads the same one). */
  readonly tokenizerFolder: string;
  /** Null when embed() can run, else why not. */
  unavailableReason(): Promise<string | null>;
  /** L2-normalized vectors, one per text, in order. */
  embed(texts: string[]): Promise<Float32Array[]>;
  /**
   * The same vectors at once when the model can make them without running (the built-in model,
   * once its words are known), else null. Call after unavailableReason() said null.
   */
  embedNow?(texts: string[]): Float32Array[] | null;
  dimension(): Promise<number>;
  close(): Promise<void>;
}

export interface TokenCounter {
  /** Word pieces in `text` as the model's tokenizer cuts it, without the [CLS]/[SEP] the model adds. */
  count(text: string): number;
  /** The longest input the model reads (in tokens, [CLS]/[SEP] included); longer inputs are truncated. */
  maxTokens: number;
}

/**
 * sentence-transformers models are trained on and truncate at windows shorter than their 512
 * positions (all-MiniLM-L6-v2: 256). Used as a ceiling unless the folder has a
 * sentence_bert_config.json saying otherwise.
 */
export const DEFAULT_MAX_TOKENS = 256;
/** Texts per ONNX Runtime run. */
export const EMBED_BATCH = 32;

const WEIGHTS_FILE = path.join("onnx", "model_quantized.onnx");
const TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json"];
const MODEL_FILES = ["config.json", ...TOKENIZER_FILES, WEIGHTS_FILE];

/** The parts of transformers.js objects used here (the library types them loosely). */
interface HfTokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
}
interface FeatureExtractor {
  (texts: string[], options: { pooling: "mean"; normalize: boolean }): Promise<{ data: Float32Array; dims: number[] }>;
  tokenizer: object;
  dispose(): Promise<void>;
}
const isFile = async (file: string) => (await stat(file).catch(() => null))?.isFile() ?? false;

export class TextEmbedder implements TextEmbedding {
  readonly modelId: string;
  readonly tokenizerFolder: string;
  /** Absolute path of the model's folder. */
  readonly folder: string;
  /** Absolute path of the weights file embedding needs. */
  readonly weightsPath: string;
  private readonly modelsDir: string;
  /** Set when the model name cannot be a folder under modelsDir; every call rejects with it. */
  private readonly nameError: string | null;
  private readonly check: ModelCheck | undefined;
  private tokenizerLoad: Promise<TokenCounter> | null = null;
  private modelLoad: Promise<FeatureExtractor> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private dim: number | null = null;

  constructor(options: TextEmbedderOptions) {
    this.modelsDir = path.resolve(options.modelsDir);
    this.modelId = options.model;
    this.tokenizerFolder = options.model;
    this.folder = path.resolve(this.modelsDir, options.model);
    this.weightsPath = path.join(this.folder, WEIGHTS_FILE);
    this.check = options.check;
    const parts = options.model.split(/[\\/]/);
    this.nameError =
      !options.model || path.isAbsolute(options.model) || parts.some((p) => p === "" || p === "." || p === "..")
        ? `text embedding model name "${options.model}" must be a folder name inside the models directory`
        : null;
  }

  /** A path inside the models directory as answers show it: "models/<model>/<file>". */
  private shown(file: string): string {
    return ["models", ...path.relative(this.modelsDir, file).split(path.sep)].join("/");
  }

  /** The error with every mention of the models directory's absolute path replaced by "models". */
  private scrubbed(err: unknown): Error {
    const message = errorMessage(err).split(this.modelsDir).join("models");
    return new Error(message, { cause: err });
  }

  /** Rejects naming the folder, or the first missing file, of `files`, or what the manifest check refused. */
  private async require(files: string[]): Promise<void> {
    if (this.nameError) throw new Error(this.nameError);
    if (!(await stat(this.folder).catch(() => null))?.isDirectory()) {
      throw new Error(`text embedding model "${this.modelId}" is not installed: folder ${this.shown(this.folder)} does not exist`);
    }
    for (const file of files) {
      const full = path.join(this.folder, file);
      if (!(await isFile(full))) throw new Error(`text embedding model "${this.modelId}" is not installed: ${this.shown(full)} is missing`);
    }
    // The manifest check's own messages name the models directory by its absolute path.
    await this.check?.(this.modelId).catch((err: unknown) => {
      throw this.scrubbed(err);
    });
  }

  private async readJson(file: string): Promise<Record<string, unknown>> {
    try {
      return JSON.parse(await readFile(path.join(this.folder, file), "utf8")) as Record<string, unknown>;
    } catch {
      return {};
    }
  }

  /**
   * The model's window: sentence_bert_config.json `max_seq_length` when present, else
   * tokenizer_config `model_max_length` capped by config `max_position_embeddings` and by
   * DEFAULT_MAX_TOKENS (all-MiniLM-L6-v2 ships 512/512 there but was trained for 256).
   */
  private async maxTokens(): Promise<number> {
    const positive = (n: unknown) => (typeof n === "number" && Number.isInteger(n) && n > 0 ? n : null);
    const sentence = positive((await this.readJson("sentence_bert_config.json")).max_seq_length);
    const limits = [
      sentence ?? DEFAULT_MAX_TOKENS,
      positive((await this.readJson("tokenizer_config.json")).model_max_length),
      positive((await this.readJson("config.json")).max_position_embeddings),
    ];
    return Math.min(...limits.filter((n): n is number => n !== null));
  }

  /** Token counting with the model's own tokenizer (needs only tokenizer.json + tokenizer_config.json). */
  tokenizer(): Promise<TokenCounter> {
    this.tokenizerLoad ??= (async () => {
      await this.require(TOKENIZER_FILES);
      const { AutoTokenizer } = await offlineTransformers(this.modelsDir);
      let tokenizer: HfTokenizer;
      try {
        tokenizer = (await AutoTokenizer.from_pretrained(this.folder, { local_files_only: true })) as unknown as HfTokenizer;
      } catch (err) {
        throw this.scrubbed(new Error(`could not load the tokenizer of text embedding model "${this.modelId}" from ${this.shown(this.folder)}: ${errorMessage(err)}`, { cause: err }));
      }
      const maxTokens = await this.maxTokens();
      return { count: (text: string) => (text ? tokenizer.encode(text, { add_special_tokens: false }).length : 0), maxTokens };
    })();
    // A failed load is retried on the next call (the site may install the folder meanwhile).
    this.tokenizerLoad.catch(() => (this.tokenizerLoad = null));
    return this.tokenizerLoad;
  }

  /** Null when embedding can run (weights, config and tokenizer present, manifest check passed), else why not. */
  unavailableReason(): Promise<string | null> {
    return this.require(MODEL_FILES).then(() => null, (err: unknown) => errorMessage(err));
  }

  private extractor(): Promise<FeatureExtractor> {
    this.modelLoad ??= (async () => {
      await this.require(MODEL_FILES);
      const { pipeline } = await offlineTransformers(this.modelsDir);
      let pipe: FeatureExtractor;
      try {
        pipe = (await pipeline("feature-extraction", this.folder, {
          local_files_only: true,
          dtype: "q8", // selects onnx/model_quantized.onnx
          device: "cpu",
        })) as unknown as FeatureExtractor;
      } catch (err) {
        throw this.scrubbed(new Error(`could not load text embedding model "${this.modelId}" from ${this.shown(this.folder)}: ${errorMessage(err)}`, { cause: err }));
      }
      // The pipeline truncates at the tokenizer's model_max_length (512 for MiniLM); truncate at
      // the window the model was trained for instead, as sentence-transformers does.
      Object.defineProperty(pipe.tokenizer, "model_max_length", { value: await this.maxTokens(), configurable: true });
      return pipe;
    })();
    this.modelLoad.catch(() => (this.modelLoad = null));
    return this.modelLoad;
  }

  /** Runs `task` after every earlier embedding call has settled. */
  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** L2-normalized, mean-pooled vectors, one per text, in order. Rejects naming the missing file when the model is not installed. */
  embed(texts: string[]): Promise<Float32Array[]> {
    return this.serial(async () => {
      const extract = await this.extractor();
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += EMBED_BATCH) {
        const batch = texts.slice(start, start + EMBED_BATCH);
        const output = await extract(batch, { pooling: "mean", normalize: true });
        const dim = output.dims.at(-1)!;
        for (let i = 0; i < batch.length; i++) vectors.push(output.data.slice(i * dim, (i + 1) * dim));
      }
      return vectors;
    });
  }

  /** Length of the vectors embed returns (runs the model once). */
  async dimension(): Promise<number> {
    this.dim ??= (await this.embed(["dimension"]))[0]!.length;
    return this.dim;
  }

  /** Releases the ONNX Runtime session; a later call loads the model again. */
  async close(): Promise<void> {
    await this.serial(async () => {
      const load = this.modelLoad;
      this.modelLoad = null;
      this.dim = null;
      const pipe = await load?.catch(() => null);
      await pipe?.dispose();
    });
  }
}
