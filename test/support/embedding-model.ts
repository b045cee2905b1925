/**
 * A small, real sentence-embedding model the tests build for themselves: the real
 * all-MiniLM-L6-v2 tokenizer (from ../shared/models, copied at test time, never committed) in
 * front of an ONNX graph that looks each token up in a fixed table of pseudo-random word vectors
 * (`last_hidden_state = Gather(table, input_ids)`). transformers.js runs it exactly like the real
 * model (tokenize, ONNX session, mean pooling, normalization), so texts sharing words come out
 * close and the whole embedding path is exercised without weights that cannot be downloaded here.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { onnx } from "onnx-proto";

export const SHARED_TOKENIZER = resolve(import.meta.dir, "../../../shared/models/all-MiniLM-L6-v2");
const FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"];

function wordTable(vocab: number, dim: number): Float32Array {
  const table = new Float32Array(vocab * dim);
  let x = 2463534242;
  for (let i = 0; i < table.length; i++) {
    // xorshift32: deterministic, so every build gives the same vectors
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    table[i] = ((x >>> 0) / 2 ** 32 - 0.5) * 2;
  }
  return table;
}

export async function buildFixtureEmbeddingModel(modelsDir: string, options: { name?: string; dim?: number; tokenizerFrom?: string } = {}): Promise<string> {
  const from = options.tokenizerFrom ?? SHARED_TOKENIZER;
  if (!existsSync(join(from, "tokenizer.json"))) throw new Error(`no tokenizer to build the fixture model from: ${from}`);
  const dim = options.dim ?? 32;
  const folder = join(modelsDir, options.name ?? "all-MiniLM-L6-v2");
  mkdirSync(join(folder, "onnx"), { recursive: true });
  for (const file of FILES) if (existsSync(join(from, file))) copyFileSync(join(from, file), join(folder, file));
  const config = JSON.parse(readFileSync(join(from, "config.json"), "utf8")) as Record<string, unknown>;
  const vocab = Number(config.vocab_size);
  writeFileSync(join(folder, "config.json"), JSON.stringify({ ...config, hidden_size: dim }, null, 2));

  const int64 = onnx.TensorProto.DataType.INT64;
  const float = onnx.TensorProto.DataType.FLOAT;
  const tensorType = (elemType: number, dims: (string | number)[]) => ({
    tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === "string" ? { dimParam: d } : { dimValue: d })) } },
  });
  const table = wordTable(vocab, dim);
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: "mediabox-test-fixture",
    opsetImport: [{ domain: "", version: 13 }],
    graph: {
      name: "word_vectors",
      node: [{ opType: "Gather", input: ["word_table", "input_ids"], output: ["last_hidden_state"], attribute: [{ name: "axis", type: onnx.AttributeProto.AttributeType.INT, i: 0 }] }],
      initializer: [{ name: "word_table", dataType: float, dims: [vocab, dim], rawData: new Uint8Array(table.buffer) }],
      input: [
        { name: "input_ids", type: tensorType(int64, ["batch", "sequence"]) },
        { name: "attention_mask", type: tensorType(int64, ["batch", "sequence"]) },
        { name: "token_type_ids", type: tensorType(int64, ["batch", "sequence"]) },
      ],
      output: [{ name: "last_hidden_state", type: tensorType(float, ["batch", "sequence", dim]) }],
    },
  });
  writeFileSync(join(folder, "onnx", "model_quantized.onnx"), onnx.ModelProto.encode(model).finish());
  return folder;
}
