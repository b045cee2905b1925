/**
 * The sentence-embedding model for document chunks and search queries, run locally by
 * transformers.js from `<modelsDir>/<model>/` (tokenizer.json, tokenizer_config.json, config.json,
 * onnx/model_quantized.onnx) with remote loading disabled. The tokenizer alone is enough to size
 * chunks; embedding needs the weights, and a missing file is an error naming its path.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** sentence-transformers models are trained on windows shorter than BERT's 512 positions. */
const DEFAULT_MAX_TOKENS = 256;

interface Tokenizer {
  count(text: string): number;
  maxTokens: number;
}

type FeatureExtractor = (texts: string[], options: { pooling: "mean"; normalize: boolean }) => Promise<{ data: Float32Array; dims: number[] }>;
type HfTokenizer = { encode(text: string, options?: { add_special_tokens?: boolean }): number[] };

async function transformers(modelsDir: string) {
  const lib = await import("@huggingface/transformers");
  lib.env.allowRemoteModels = false;
  lib.env.allowLocalModels = true;
  lib.env.localModelPath = modelsDir;
  return lib;
}

export class TextEmbedder {
  readonly modelId: string;
  private readonly folder: string;
  private readonly modelsDir: string;
  private tokenizerLoad: Promise<Tokenizer> | null = null;
  private extractorLoad: Promise<FeatureExtractor> | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: { modelsDir: string; model: string }) {
    this.modelsDir = resolve(options.modelsDir);
    this.modelId = options.model;
    this.folder = join(this.modelsDir, options.model);
  }

  get weightsPath(): string {
    return join(this.folder, "onnx", "model_quantized.onnx");
  }

  private require(file: string): void {
    if (!existsSync(this.folder)) throw new Error(`text embedding model "${this.modelId}" is not installed: folder ${this.folder} does not exist`);
    const path = join(this.folder, file);
    if (!existsSync(path)) throw new Error(`text embedding model "${this.modelId}" is not installed: ${path} is missing`);
  }

  private maxTokens(): number {
    const read = (file: string) => {
      try {
        return JSON.parse(readFileSync(join(this.folder, file), "utf8")) as Record<string, unknown>;
      } catch {
        return {};
      }
    };
    const fromSentenceConfig = Number(read("sentence_bert_config.json").max_seq_length);
    if (Number.isInteger(fromSentenceConfig) && fromSentenceConfig > 0) return fromSentenceConfig;
    const limits = [Number(read("tokenizer_config.json").model_max_length), Number(read("config.json").max_position_embeddings), DEFAULT_MAX_TOKENS];
    return Math.min(...limits.filter((n) => Number.isInteger(n) && n > 0));
  }

  tokenizer(): Promise<Tokenizer> {
    this.tokenizerLoad ??= (async () => {
      this.require("tokenizer.json");
      this.require("tokenizer_config.json");
      const lib = await transformers(this.modelsDir);
      const tokenizer = (await lib.AutoTokenizer.from_pretrained(this.modelId, { local_files_only: true })) as unknown as HfTokenizer;
      return { count: (text: string) => tokenizer.encode(text, { add_special_tokens: false }).length, maxTokens: this.maxTokens() };
    })();
    this.tokenizerLoad.catch(() => (this.tokenizerLoad = null));
    return this.tokenizerLoad;
  }

  async available(): Promise<boolean> {
    return existsSync(this.weightsPath) && existsSync(join(this.folder, "tokenizer.json"));
  }

  private extractor(): Promise<FeatureExtractor> {
    this.extractorLoad ??= (async () => {
      this.require("config.json");
      this.require("tokenizer.json");
      this.require(join("onnx", "model_quantized.onnx"));
      const lib = await transformers(this.modelsDir);
      const pipe = await lib.pipeline("feature-extraction", this.modelId, { local_files_only: true, dtype: "q8", device: "cpu" });
      return pipe as unknown as FeatureExtractor;
    })();
    this.extractorLoad.catch(() => (this.extractorLoad = null));
    return this.extractorLoad;
  }

  /** L2-normalized, mean-pooled vectors, one per text. Calls run one at a time (onnxruntime already uses every core). */
  embed(texts: string[]): Promise<Float32Array[]> {
    const run = this.queue.then(async () => {
      if (texts.length === 0) return [];
      const extract = await this.extractor();
      const output = await extract(texts, { pooling: "mean", normalize: true });
      const dim = output.dims.at(-1)!;
      return texts.map((_, i) => output.data.slice(i * dim, (i + 1) * dim));
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private dim: number | null = null;

  async dimension(): Promise<number> {
    this.dim ??= (await this.embed(["dimension probe"]))[0]!.length;
    return this.dim;
  }

  async close(): Promise<void> {
    const extractor = await this.extractorLoad?.catch(() => null);
    await (extractor as unknown as { dispose?: () => Promise<void> } | null)?.dispose?.();
    this.extractorLoad = null;
  }
}
