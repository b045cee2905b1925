/**
 * A tiny CLIP-style model folder with both towers, built by the tests (no CLIP weights can be
 * obtained here), in the layout transformers.js loads: config.json, preprocessor_config.json,
 * a BERT tokenizer (fixtureTokenizerDir: the real MiniLM one when present), and
 *
 *   onnx/vision_model_quantized.onnx   pixel_values [b,3,h,w] ─ReduceMean(h,w)─ MatMul(3→4) → image_embeds [b,4]
 *   onnx/text_model_quantized.onnx     input_ids [b,s] ─Gather(word_table)─ ReduceMean(s) → text_embeds [b,4]
 *
 * The image vector is the normalized mean colour in the first three dimensions (and 0 in the
 * fourth); every token's vector is (0,0,0,1) except the words the test gives a colour, scaled up
 * so one such word dominates its text. So a text holding a "red" word is close to red images and
 * a text with none is orthogonal to every image: zero-shot outcomes the tests can predict.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { onnx } from "onnx-proto";
import { fixtureTokenizerDir } from "./embedding-model.ts";

const DIM = 4;
const MEAN = [0.48145466, 0.4578275, 0.40821073];
const STD = [0.26862954, 0.26130258, 0.27577711];

/** The vision fixture's embedding direction for an opaque colour (before L2 normalization). */
export function colourDirection([r, g, b]: [number, number, number]): [number, number, number, number] {
  return [(r / 255 - MEAN[0]!) / STD[0]!, (g / 255 - MEAN[1]!) / STD[1]!, (b / 255 - MEAN[2]!) / STD[2]!, 0];
}

const { DataType } = onnx.TensorProto;
const tensorType = (elemType: number, dims: (string | number)[]) => ({
  tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === "string" ? { dimParam: d } : { dimValue: d })) } },
});
const ints = (name: string, values: number[]) => ({ name, type: onnx.AttributeProto.AttributeType.INTS, ints: values });
const int = (name: string, value: number) => ({ name, type: onnx.AttributeProto.AttributeType.INT, i: value });
const floats = (name: string, dims: number[], values: Float32Array) => ({ name, dataType: DataType.FLOAT, dims, rawData: new Uint8Array(values.buffer) });

function model(graph: onnx.IGraphProto): Uint8Array {
  return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, producerName: "mediabox-test-fixture", opsetImport: [{ domain: "", version: 13 }], graph })).finish();
}

/**
 * Writes `<modelsDir>/<name>/`; `words` maps a word of the tokenizer's vocabulary to the colour its
 * vector points at. Pass `textTower: false` for a vision-only folder.
 */
export function buildFixtureClipModel(modelsDir: string, name: string, words: Record<string, [number, number, number]>, options: { textTower?: boolean } = {}): string {
  const folder = path.join(modelsDir, name);
  mkdirSync(path.join(folder, "onnx"), { recursive: true });
  writeFileSync(path.join(folder, "config.json"), JSON.stringify({ model_type: "clip", architectures: ["CLIPModel"], projection_dim: DIM }));
  writeFileSync(
    path.join(folder, "preprocessor_config.json"),
    JSON.stringify({
      image_processor_type: "CLIPImageProcessor", do_resize: true, size: { shortest_edge: 32 }, resample: 3, do_center_crop: true,
      crop_size: { height: 32, width: 32 }, do_rescale: true, rescale_factor: 1 / 255, do_normalize: true, image_mean: MEAN, image_std: STD,
      do_convert_rgb: true,
    }),
  );
  const projection = new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0]); // 3×4: colour into the first three dimensions
  writeFileSync(
    path.join(folder, "onnx", "vision_model_quantized.onnx"),
    model({
      name: "clip_vision_fixture",
      node: [
        { opType: "ReduceMean", input: ["pixel_values"], output: ["pooled"], attribute: [ints("axes", [2, 3]), int("keepdims", 0)] },
        { opType: "MatMul", input: ["pooled", "projection"], output: ["image_embeds"] },
      ],
      initializer: [floats("projection", [3, DIM], projection)],
      input: [{ name: "pixel_values", type: tensorType(DataType.FLOAT, ["batch", 3, "height", "width"]) }],
      output: [{ name: "image_embeds", type: tensorType(DataType.FLOAT, ["batch", DIM]) }],
    }),
  );
  if (options.textTower === false) return folder;

  const tokenizerDir = fixtureTokenizerDir();
  for (const file of ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]) {
    if (existsSync(path.join(tokenizerDir, file))) copyFileSync(path.join(tokenizerDir, file), path.join(folder, file));
  }
  const vocab = (JSON.parse(readFileSync(path.join(tokenizerDir, "tokenizer.json"), "utf8")) as { model: { vocab: Record<string, number> } }).model.vocab;
  const rows = Math.max(...Object.values(vocab)) + 1;
  const table = new Float32Array(rows * DIM);
  for (let row = 0; row < rows; row++) table[row * DIM + 3] = 1;
  for (const [word, colour] of Object.entries(words)) {
    const id = vocab[word];
    if (id === undefined) throw new Error(`"${word}" is not one token of the fixture tokenizer`);
    const direction = colourDirection(colour);
    const norm = Math.hypot(...direction);
    // Large enough that the word outweighs the (0,0,0,1) of every other token in a short prompt.
    direction.forEach((v, j) => (table[id * DIM + j] = (v / norm) * 1000));
  }
  const tokens = (input: string) => ({ name: input, type: tensorType(DataType.INT64, ["batch", "sequence"]) });
  writeFileSync(
    path.join(folder, "onnx", "text_model_quantized.onnx"),
    model({
      name: "clip_text_fixture",
      node: [
        { opType: "Gather", input: ["word_table", "input_ids"], output: ["token_vectors"], attribute: [int("axis", 0)] },
        { opType: "ReduceMean", input: ["token_vectors"], output: ["text_embeds"], attribute: [ints("axes", [1]), int("keepdims", 0)] },
      ],
      initializer: [floats("word_table", [rows, DIM], table)],
      input: [tokens("input_ids"), tokens("attention_mask")],
      output: [{ name: "text_embeds", type: tensorType(DataType.FLOAT, ["batch", DIM]) }],
    }),
  );
  return folder;
}
