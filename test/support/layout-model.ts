/**
 * A layout model the tests build for themselves (the real weights are fetched by the models step
 * and are never in a clean clone): an ONNX graph with the real YOLOv8 DocLayNet export's input and
 * output,
 *
 *   images  float [1, 3, 1024, 1024] ─ ReduceMean ─ Mul 0 ─┐
 *   heads   float [1, 15, anchors] (constant) ──────────── Add ─→ output0 float [1, 15, anchors]
 *
 * whose output is the detections given to it (the image only flows through so the graph reads its
 * input), so the whole path runs: page rendering, letterbox, ONNX Runtime, decoding, suppression.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { onnx } from "onnx-proto";

/** DocLayNet's classes in the real model's output order. */
export const DOCLAYNET_CLASSES = ["Caption", "Footnote", "Formula", "List-item", "Page-footer", "Page-header", "Picture", "Section-header", "Table", "Text", "Title"] as const;
const INPUT = 1024;


export interface FixtureDetection {
  label: (typeof DOCLAYNET_CLASSES)[number];
  /** Box in points on a page of `page` size (top-left origin). */
  box: { x0: number; y0: number; x1: number; y1: number };
  score: number;
}

const { DataType } = onnx.TensorProto;
const tensorType = (dims: number[]) => ({ tensorType: { elemType: DataType.FLOAT, shape: { dim: dims.map((d) => ({ dimValue: d })) } } });

/**
 * Writes `<modelsDir>/<name>/model.onnx` answering `detections` on any page of `page` size
 * (points): boxes are placed where the page, drawn with its long side the input's side and
 * centred, puts them.
 */
export function buildFixtureLayoutModel(modelsDir: string, page: { width: number; height: number }, detections: FixtureDetection[], name = "yolov8n-doclaynet"): string {
  const folder = path.join(modelsDir, name);
  mkdirSync(folder, { recursive: true });
  const scale = INPUT / Math.max(page.width, page.height);
  const dx = (INPUT - page.width * scale) / 2;
  const dy = (INPUT - page.height * scale) / 2;
  // One anchor per detection, plus a few that score nothing.
  const anchors = detections.length + 3;
  const rows = 4 + DOCLAYNET_CLASSES.length;
  const heads = new Float32Array(rows * anchors);
  detections.forEach((d, a) => {
    const [x0, y0, x1, y1] = [d.box.x0 * scale + dx, d.box.y0 * scale + dy, d.box.x1 * scale + dx, d.box.y1 * scale + dy];
    heads[a] = (x0 + x1) / 2;
    heads[anchors + a] = (y0 + y1) / 2;
    heads[2 * anchors + a] = x1 - x0;
    heads[3 * anchors + a] = y1 - y0;
    heads[(4 + DOCLAYNET_CLASSES.indexOf(d.label)) * anchors + a] = d.score;
  });
  const graph: onnx.IGraphProto = {
    name: "layout_fixture",
    node: [
      { opType: "ReduceMean", input: ["images"], output: ["mean"], attribute: [{ name: "keepdims", type: onnx.AttributeProto.AttributeType.INT, i: 0 }] },
      { opType: "Mul", input: ["mean", "zero"], output: ["nothing"] },
      { opType: "Add", input: ["heads", "nothing"], output: ["output0"] },
    ],
    initializer: [
      { name: "heads", dataType: DataType.FLOAT, dims: [1, rows, anchors], rawData: new Uint8Array(heads.buffer) },
      { name: "zero", dataType: DataType.FLOAT, dims: [], rawData: new Uint8Array(new Float32Array([0]).buffer) },
    ],
    input: [{ name: "images", type: tensorType([1, 3, INPUT, INPUT]) }],
    output: [{ name: "output0", type: tensorType([1, rows, anchors]) }],
  };
  const bytes = onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, producerName: "mediabox-test-fixture", opsetImport: [{ domain: "", version: 13 }], graph })).finish();
  writeFileSync(path.join(folder, "model.onnx"), bytes);
  return folder;
}
