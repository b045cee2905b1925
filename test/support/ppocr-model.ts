/**
 * A tiny PP-OCR model folder the tests build (the real weights are fetched, never committed), with
 * the real models' inputs, outputs and layout, so the whole PP-OCR path runs through onnxruntime:
 *
 *   det.onnx  x [1,3,H,W] ─ReduceMean(channels)→ m ─(1-m)/2→ probability map [1,1,H,W]
 *             (dark pixels are "text": the map is 1 on black, 0 on white)
 *   cls.onnx  x [N,3,48,192] → [N,2], always (1, 0): every line is upright
 *   rec.onnx  x [N,3,48,W] ─ReduceMean(channels, height)→ darkness per column ─AveragePool(4)→
 *             T = W/4 steps ─MatMul/Add→ [N,T,3] = (1-d, d, 0): blank, "I", space
 *             metadata "character" = "I" (the alphabet, as RapidOCR's exports carry it)
 *
 * So a black bar on white reads as one "I" in a box around the bar, and the padding (zeros, mid
 * grey) reads as blank.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { onnx } from "onnx-proto";
import sharp from "sharp";

const { DataType } = onnx.TensorProto;
const tensorType = (dims: (string | number)[]) => ({
  tensorType: { elemType: DataType.FLOAT, shape: { dim: dims.map((d) => (typeof d === "string" ? { dimParam: d } : { dimValue: d })) } },
});
const ints = (name: string, values: number[]) => ({ name, type: onnx.AttributeProto.AttributeType.INTS, ints: values });
const int = (name: string, value: number) => ({ name, type: onnx.AttributeProto.AttributeType.INT, i: value });
const floats = (name: string, dims: number[], values: number[]) => ({ name, dataType: DataType.FLOAT, dims, rawData: new Uint8Array(new Float32Array(values).buffer) });

function model(graph: onnx.IGraphProto, metadata: Record<string, string> = {}): Uint8Array {
  return onnx.ModelProto.encode(
    onnx.ModelProto.create({
      irVersion: 8,
      producerName: "mediabox-test-fixture",
      opsetImport: [{ domain: "", version: 13 }],
      graph,
      metadataProps: Object.entries(metadata).map(([key, value]) => ({ key, value })),
    }),
  ).finish();
}

/** Writes `<modelsDir>/<name>/{det,cls,rec}.onnx`; returns the folder. */
export function buildFixturePpOcrModel(modelsDir: string, name = "ppocr"): string {
  const folder = path.join(modelsDir, name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    path.join(folder, "det.onnx"),
    model({
      name: "det_fixture",
      node: [
        { opType: "ReduceMean", input: ["x"], output: ["m"], attribute: [ints("axes", [1]), int("keepdims", 1)] },
        { opType: "Sub", input: ["one", "m"], output: ["inverted"] },
        { opType: "Mul", input: ["inverted", "half"], output: ["maps"] },
      ],
      initializer: [floats("one", [], [1]), floats("half", [], [0.5])],
      input: [{ name: "x", type: tensorType(["batch", 3, "height", "width"]) }],
      output: [{ name: "maps", type: tensorType(["batch", 1, "height", "width"]) }],
    }),
  );
  writeFileSync(
    path.join(folder, "cls.onnx"),
    model({
      name: "cls_fixture",
      node: [
        { opType: "ReduceMean", input: ["x"], output: ["pooled"], attribute: [ints("axes", [2, 3]), int("keepdims", 0)] },
        { opType: "MatMul", input: ["pooled", "zero"], output: ["nothing"] },
        { opType: "Add", input: ["nothing", "upright"], output: ["scores"] },
      ],
      initializer: [floats("zero", [3, 2], [0, 0, 0, 0, 0, 0]), floats("upright", [2], [1, 0])],
      input: [{ name: "x", type: tensorType(["batch", 3, 48, "width"]) }],
      output: [{ name: "scores", type: tensorType(["batch", 2]) }],
    }),
  );
  writeFileSync(
    path.join(folder, "rec.onnx"),
    model(
      {
        name: "rec_fixture",
        node: [
          { opType: "ReduceMean", input: ["x"], output: ["columns"], attribute: [ints("axes", [1, 2]), int("keepdims", 1)] }, // [N,1,1,W]
          { opType: "Sub", input: ["one", "columns"], output: ["inverted"] },
          { opType: "Mul", input: ["inverted", "half"], output: ["darkness"] },
          { opType: "AveragePool", input: ["darkness"], output: ["steps"], attribute: [ints("kernel_shape", [1, 4]), ints("strides", [1, 4])] }, // [N,1,1,T]
          { opType: "Squeeze", input: ["steps", "squeeze_axes"], output: ["per_step"] }, // [N,T]
          { opType: "Unsqueeze", input: ["per_step", "last_axis"], output: ["column"] }, // [N,T,1]
          { opType: "MatMul", input: ["column", "classes"], output: ["scaled"] },
          { opType: "Add", input: ["scaled", "blank"], output: ["probabilities"] },
        ],
        initializer: [
          floats("one", [], [1]),
          floats("half", [], [0.5]),
          { name: "squeeze_axes", dataType: DataType.INT64, dims: [2], int64Data: [1, 2] },
          { name: "last_axis", dataType: DataType.INT64, dims: [1], int64Data: [2] },
          floats("classes", [1, 3], [-1, 1, 0]),
          floats("blank", [3], [1, 0, 0]),
        ],
        input: [{ name: "x", type: tensorType(["batch", 3, 48, "width"]) }],
        output: [{ name: "probabilities", type: tensorType(["batch", "steps", 3]) }],
      },
      { character: "I" },
    ),
  );
  return folder;
}

/**
 * A white picture with black bars `[x, y, width, height]`: what the fixture models read, each bar
 * as one "I" (real text's thin strokes are neither detected nor read by them).
 */
export function barsImage(width: number, height: number, bars: number[][]): Promise<Buffer> {
  const rects = bars.map(([x, y, w, h]) => `<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="black"/>`).join("");
  return sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="white"/>${rects}</svg>`))
    .png()
    .toBuffer();
}
