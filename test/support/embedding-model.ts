/**
 * A small, real sentence-embedding model that the tests build for themselves, because no
 * sentence-embedding weights can be obtained on this machine (see ../shared/models/README.md).
 *
 * `<modelsDir>/<name>/` gets the real all-MiniLM-L6-v2 tokenizer files (copied at test time from
 * the shared models folder, never committed; on machines without that folder, a WordPiece
 * tokenizer generated from the test sources' words, see wordpiece.ts), a config.json whose `hidden_size` is the fixture's
 * dimension, and `onnx/model_quantized.onnx`: an ONNX graph (ir_version 8, opset 13) with the
 * same inputs as the real BERT export and one node,
 *
 *   input_ids       int64 [batch, sequence]  ─┐
 *   attention_mask  int64 [batch, sequence]   │  (declared like the real model; unused by the graph,
 *   token_type_ids  int64 [batch, sequence]   │   transformers.js feeds zeros for it as for MiniLM)
 *   word_table      float [vocab, dim]  ──────┴─ Gather(axis 0) ─→ last_hidden_state float [batch, sequence, dim]
 *
 * `word_table` holds a pseudo-random vector per token, seeded by a hash of the token's text, so
 * every build gives the same vectors, identical texts embed identically and texts sharing words
 * come out closer than unrelated ones. [PAD]/[CLS]/[SEP] get short vectors, so similarity comes
 * from the words while an empty text still has a direction. transformers.js runs it exactly like
 * the real model (tokenizer, ONNX Runtime session, mean pooling over the attention mask, L2
 * normalization), so the whole embedding path is exercised. 30522 tokens × 32 floats ≈ 3.9 MB.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { onnx } from "onnx-proto";
import { tempDir } from "./temp-dir.ts";
import { writeWordPieceTokenizer } from "./wordpiece.ts";

/** The shared folder with all-MiniLM-L6-v2's real tokenizer and config (no weights); MEDIABOX_TEST_SHARED_MODELS overrides ../shared/models. */
export const SHARED_TOKENIZER = path.resolve(
  process.env.MEDIABOX_TEST_SHARED_MODELS ?? path.resolve(import.meta.dir, "../../../shared/models"),
  "all-MiniLM-L6-v2",
);

const COPIED = ["config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"];
const REQUIRED = ["config.json", "tokenizer.json", "tokenizer_config.json"];
/** Tokens whose vectors are kept short: they are in every text and would only add a common offset. */
const QUIET_TOKENS = new Set(["[PAD]", "[CLS]", "[SEP]"]);

export interface FixtureModelOptions {
  /** Folder with tokenizer.json, tokenizer_config.json, config.json (default: fixtureTokenizerDir()). */
  tokenizerFrom?: string;
  /** Embedding dimension (default 32). */
  dim?: number;
  /** Folder name under the models directory (default "all-MiniLM-L6-v2"). */
  name?: string;
}

/** True when the real all-MiniLM-L6-v2 tokenizer is present (tests about its exact behaviour skip otherwise). */
export function realTokenizerAvailable(from: string = SHARED_TOKENIZER): boolean {
  return REQUIRED.every((file) => existsSync(path.join(from, file)));
}

let generated: string | undefined;

/** The tokenizer fixtures use: the real one when present, else one generated once per process. */
export function fixtureTokenizerDir(): string {
  if (realTokenizerAvailable()) return SHARED_TOKENIZER;
  if (!generated) {
    generated = path.join(tempDir("mediabox-wordpiece-"), "tokenizer");
    writeWordPieceTokenizer(generated);
  }
  return generated;
}

/** FNV-1a of the token text: the seed of its vector. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0 || 1;
}

/** Writes token `token`'s vector (xorshift32 from its hash, uniform in [-1, 1)) at `row`. */
function fillRow(table: Float32Array, row: number, dim: number, token: string, scale: number): void {
  let x = hash(token);
  for (let j = 0; j < dim; j++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    table[row * dim + j] = ((x >>> 0) / 2 ** 32 - 0.5) * 2 * scale;
  }
}

/** Builds `<modelsDir>/<name>/` and returns its absolute path. Throws if the tokenizer folder is absent. */
export async function buildFixtureEmbeddingModel(modelsDir: string, options: FixtureModelOptions = {}): Promise<string> {
  const from = path.resolve(options.tokenizerFrom ?? fixtureTokenizerDir());
  const missing = REQUIRED.filter((file) => !existsSync(path.join(from, file)));
  if (missing.length) {
    throw new Error(`cannot build the fixture embedding model: tokenizer folder ${from} lacks ${missing.join(", ")}`);
  }
  const dim = options.dim ?? 32;
  if (!Number.isInteger(dim) || dim < 1) throw new Error(`fixture embedding dimension must be a positive integer, got ${dim}`);
  const folder = path.resolve(modelsDir, options.name ?? "all-MiniLM-L6-v2");
  mkdirSync(path.join(folder, "onnx"), { recursive: true });
  for (const file of COPIED) if (existsSync(path.join(from, file))) copyFileSync(path.join(from, file), path.join(folder, file));

  const config = JSON.parse(readFileSync(path.join(from, "config.json"), "utf8")) as Record<string, unknown>;
  writeFileSync(path.join(folder, "config.json"), JSON.stringify({ ...config, hidden_size: dim }, null, 2));

  // One row per token id; the vocabulary comes from tokenizer.json (WordPiece: { token: id }).
  const tokenizer = JSON.parse(readFileSync(path.join(from, "tokenizer.json"), "utf8")) as {
    model?: { vocab?: Record<string, number> };
    added_tokens?: { id: number; content: string }[];
  };
  const tokens = new Map<number, string>();
  for (const [token, id] of Object.entries(tokenizer.model?.vocab ?? {})) tokens.set(id, token);
  for (const added of tokenizer.added_tokens ?? []) tokens.set(added.id, added.content);
  let rows = Number(config.vocab_size) || 0;
  for (const id of tokens.keys()) rows = Math.max(rows, id + 1);
  const table = new Float32Array(rows * dim);
  for (let id = 0; id < rows; id++) {
    const token = tokens.get(id) ?? `[id ${id}]`;
    fillRow(table, id, dim, token, QUIET_TOKENS.has(token) ? 0.05 : 1);
  }

  const { DataType } = onnx.TensorProto;
  const tensorType = (elemType: number, dims: (string | number)[]) => ({
    tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === "string" ? { dimParam: d } : { dimValue: d })) } },
  });
  const tokenInput = (name: string) => ({ name, type: tensorType(DataType.INT64, ["batch", "sequence"]) });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: "mediabox-test-fixture",
    opsetImport: [{ domain: "", version: 13 }],
    graph: {
      name: "word_vectors",
      node: [
        {
          name: "lookup",
          opType: "Gather",
          input: ["word_table", "input_ids"],
          output: ["last_hidden_state"],
          attribute: [{ name: "axis", type: onnx.AttributeProto.AttributeType.INT, i: 0 }],
        },
      ],
      initializer: [{ name: "word_table", dataType: DataType.FLOAT, dims: [rows, dim], rawData: new Uint8Array(table.buffer) }],
      input: [tokenInput("input_ids"), tokenInput("attention_mask"), tokenInput("token_type_ids")],
      output: [{ name: "last_hidden_state", type: tensorType(DataType.FLOAT, ["batch", "sequence", dim]) }],
    },
  });
  writeFileSync(path.join(folder, "onnx", "model_quantized.onnx"), onnx.ModelProto.encode(model).finish());
  return folder;
}
