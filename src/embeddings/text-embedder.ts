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
 * - The folder says how to use the model, in sentence-transformers' own files: how token vectors
 *   become one (`1_Pooling/config.json`: mean, or the [CLS] token's for bge), and the prompts
 *   queries and documents are prefixed with (`config_sentence_transformers.json` `prompts.query`
 *   / `prompts.document` or `passage`: bge's query instruction, e5's "query: " / "passage: ").
 * - The model runs on a worker thread of its own (src/embeddings/folder-model-worker.ts), so
 *   tokenizing and pooling never hold up requests; the tokenizer for sizing chunks loads here.
 *   Everything loads lazily on first use; embedding calls run one at a time, RUN_BATCH texts per
 *   ONNX Runtime run (ONNX Runtime already uses every core per run).
 */
import { stat } from "node:fs/promises";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { ModelCheck } from "../models/model-verifier.ts";
import { offlineTransformers } from "../models/transformers.ts";
import { errorMessage } from "../errors.ts";
import { modelsReady } from "../native/packages.ts";
import { WorkerThread } from "../native/worker-thread.ts";
import type { FolderModelReply, FolderModelRequest } from "./folder-model-worker.ts";

/** What a text is embedded for: models trained with prompts prefix queries and documents differently. */
export type EmbedPurpose = "query" | "document";

export interface TextEmbedderOptions {
  /** The models directory (MEDIABOX_MODELS_DIR). */
  modelsDir: string;
  /** Folder name of the model under modelsDir, e.g. "all-MiniLM-L6-v2" (an "owner/name" path works too). */
  model: string;
  /** Runs before the folder is used (the models manifest check); rejecting refuses the model. */
  check?: ModelCheck;
  /** Texts per ONNX Runtime run (default RUN_BATCH; benches compare others). */
  runBatch?: number;
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
  /**
   * The model's window in tokens ([CLS]/[SEP] and its document prompt included) when tokenizer()
   * can load, without loading it; rejects when chunks should be sized by estimate. For the server,
   * which only names the tokenizer to the document reader: loading transformers.js held its event
   * loop for 90-150 ms at the first document.
   */
  chunkWindow(): Promise<number>;
  /** The models-directory folder tokenizer() reads (the reader child loads the same one). */
  readonly tokenizerFolder: string;
  /** Null when embed() can run, else why not. */
  unavailableReason(): Promise<string | null>;
  /** L2-normalized vectors, one per text, in order (`purpose` defaults to "document"). */
  embed(texts: string[], purpose?: EmbedPurpose): Promise<Float32Array[]>;
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
/** Texts per embed() call from the document pipeline (a job's unit of progress and of writes). */
export const EMBED_BATCH = 32;
/**
 * Texts per ONNX Runtime run (each run padded to its longest text; texts are sorted by length
 * first). Small runs cost less CPU per text: bge-small on Cranfield chunks (~160 tokens), in one
 * process on the shared 2-core machine, 40 ms of CPU a chunk in runs of 32, 34 in 16, 30 in 8,
 * 26-28 in 4, 25-28 one at a time (the activations of a large run outgrow the CPU's caches).
 * Four keeps two ONNX Runtime threads busy.
 */
export const RUN_BATCH = 4;

/** How long a folder that passed its checks is taken as it was (ms). */
const RECHECK_MS = 1_000;

const WEIGHTS_FILE = path.join("onnx", "model_quantized.onnx");
const TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json"];
const MODEL_FILES = ["config.json", ...TOKENIZER_FILES, WEIGHTS_FILE];

/** The parts of transformers.js objects used here (the library types them loosely). */
interface HfTokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
}
interface EmbedCall {
  texts: string[];
  purpose: EmbedPurpose;
  resolve: (vectors: Float32Array[]) => void;
  reject: (err: unknown) => void;
}

/** Most texts sent to the model's thread at once (calls waiting together are joined up to this). */
const COALESCED_TEXTS = 64;

/** How the folder's model is used (read from its sentence-transformers files). */
export interface ModelUsage {
  pooling: "mean" | "cls";
  /** Prefixes by purpose ("" when the model has none). */
  prompts: Record<EmbedPurpose, string>;
  maxTokens: number;
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
  private readonly modelCheck: ModelCheck | undefined;
  /** When each set of files (TOKENIZER_FILES, MODEL_FILES) last passed require(), plus RECHECK_MS. */
  private readonly passedUntil = new Map<string[], number>();
  private readonly runBatch: number;
  private tokenizerLoad: Promise<TokenCounter> | null = null;
  private usageLoad: Promise<ModelUsage> | null = null;
  private worker: WorkerThread<FolderModelRequest, FolderModelReply> | null = null;
  private readonly waiting: EmbedCall[] = [];
  private draining: Promise<void> | null = null;
  private dim: number | null = null;

  constructor(options: TextEmbedderOptions) {
    this.modelsDir = path.resolve(options.modelsDir);
    this.modelId = options.model;
    this.tokenizerFolder = options.model;
    this.folder = path.resolve(this.modelsDir, options.model);
    this.weightsPath = path.join(this.folder, WEIGHTS_FILE);
    this.modelCheck = options.check;
    this.runBatch = options.runBatch ?? RUN_BATCH;
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

  /**
   * Rejects naming the folder, or the first missing file, of `files`, or what the manifest check
   * refused. A pass holds for RECHECK_MS: every embedding job checked twice, ~12 stat calls each,
   * 11 % of the event loop's samples while 1,000 documents indexed. A failure is checked again at
   * every call (a site installing the folder needs no restart).
   */
  private async require(files: string[]): Promise<void> {
    if (this.nameError) throw new Error(this.nameError);
    if ((this.passedUntil.get(files) ?? 0) > performance.now()) return;
    await this.check(files);
    this.passedUntil.set(files, performance.now() + RECHECK_MS);
  }

  private async check(files: string[]): Promise<void> {
    await modelsReady(this.modelsDir); // the compiled binary's embedded models, written out after start
    if (!(await stat(this.folder).catch(() => null))?.isDirectory()) {
      throw new Error(`text embedding model "${this.modelId}" is not installed: folder ${this.shown(this.folder)} does not exist`);
    }
    for (const file of files) {
      const full = path.join(this.folder, file);
      if (!(await isFile(full))) throw new Error(`text embedding model "${this.modelId}" is not installed: ${this.shown(full)} is missing`);
    }
    // The manifest check's own messages name the models directory by its absolute path.
    await this.modelCheck?.(this.modelId).catch((err: unknown) => {
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
      const count = (text: string) => (text ? tokenizer.encode(text, { add_special_tokens: false }).length : 0);
      // A chunk is embedded after the model's document prompt, within the same window.
      const { maxTokens, prompts } = await this.usage();
      return { count, maxTokens: maxTokens - count(prompts.document) };
    })();
    // A failed load is retried on the next call (the site may install the folder meanwhile).
    this.tokenizerLoad.catch(() => (this.tokenizerLoad = null));
    return this.tokenizerLoad;
  }

  chunkWindow(): Promise<number> {
    return this.require(TOKENIZER_FILES).then(async () => (await this.usage()).maxTokens);
  }

  /** Null when embedding can run (weights, config and tokenizer present, manifest check passed), else why not. */
  unavailableReason(): Promise<string | null> {
    return this.require(MODEL_FILES).then(() => null, (err: unknown) => errorMessage(err));
  }

  /**
   * Pooling and prompts from the folder's sentence-transformers files: `1_Pooling/config.json`
   * (the [CLS] token's vector when `pooling_mode_cls_token`, else the mean) and
   * `config_sentence_transformers.json` `prompts` (`query`; `document`, or `passage` as e5 names it).
   */
  usage(): Promise<ModelUsage> {
    this.usageLoad ??= (async () => {
      const pooling = (await this.readJson(path.join("1_Pooling", "config.json"))).pooling_mode_cls_token === true ? "cls" : "mean";
      const raw = (await this.readJson("config_sentence_transformers.json")).prompts;
      const prompts = raw && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
      const text = (value: unknown) => (typeof value === "string" ? value : "");
      return {
        pooling,
        prompts: { query: text(prompts.query), document: text(prompts.document ?? prompts.passage) },
        maxTokens: await this.maxTokens(),
      } satisfies ModelUsage;
    })();
    return this.usageLoad;
  }

  /**
   * L2-normalized vectors, one per text, in order. Rejects naming the missing file when the model
   * is not installed. Calls made while the model is busy are run together (queries first), so
   * documents embedded side by side share the model's runs instead of each running on its own.
   */
  embed(texts: string[], purpose: EmbedPurpose = "document"): Promise<Float32Array[]> {
    return new Promise((resolve, reject) => {
      const call = { texts, purpose, resolve, reject };
      if (purpose === "query") this.waiting.splice(this.waiting.findIndex((c) => c.purpose !== "query") >>> 0, 0, call);
      else this.waiting.push(call);
      this.draining ??= this.drain();
    });
  }

  /** Runs the waiting calls, up to COALESCED_TEXTS texts a request to the model's thread, until none is left. */
  private async drain(): Promise<void> {
    while (this.waiting.length) {
      const taken: EmbedCall[] = [];
      let count = 0;
      while (this.waiting.length && (!taken.length || count + this.waiting[0]!.texts.length <= COALESCED_TEXTS)) {
        const call = this.waiting.shift()!;
        taken.push(call);
        count += call.texts.length;
      }
      try {
        const vectors = await this.run(taken);
        let at = 0;
        for (const call of taken) {
          call.resolve(vectors.slice(at, at + call.texts.length));
          at += call.texts.length;
        }
      } catch (err) {
        for (const call of taken) call.reject(err);
      }
    }
    // In the same turn as the last check: a call made after it starts a new drain.
    this.draining = null;
  }

  private async run(calls: EmbedCall[]): Promise<Float32Array[]> {
    await this.require(MODEL_FILES);
    const { pooling, prompts, maxTokens } = await this.usage();
    const texts = calls.flatMap((call) => (prompts[call.purpose] ? call.texts.map((t) => prompts[call.purpose] + t) : call.texts));
    if (!texts.length) return [];
    if (!this.worker || this.worker.broken) this.worker = new WorkerThread<FolderModelRequest, FolderModelReply>("embeddings/folder-model-worker.ts", "the text model thread");
    const reply = await this.worker.ask({ modelsDir: this.modelsDir, folder: this.folder, texts, pooling, maxTokens, batch: this.runBatch });
    if (reply instanceof Error) throw reply;
    if ("error" in reply) {
      throw this.scrubbed(new Error(`could not run text embedding model "${this.modelId}" from ${this.shown(this.folder)}: ${reply.error}`));
    }
    const { vectors, dim } = reply;
    return texts.map((_, i) => vectors.slice(i * dim, (i + 1) * dim));
  }

  /** Length of the vectors embed returns (runs the model once). */
  async dimension(): Promise<number> {
    this.dim ??= (await this.embed(["dimension"]))[0]!.length;
    return this.dim;
  }

  /** Ends the model's thread (and its ONNX Runtime session) once waiting calls are done; a later call loads the model again. */
  async close(): Promise<void> {
    while (this.draining) await this.draining;
    this.worker?.terminate();
    this.worker = null;
    this.dim = null;
    this.usageLoad = null;
  }
}
