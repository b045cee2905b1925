/**
 * YOLOv8 detection heads exported to ONNX (Ultralytics' layout): one output [1, 4 + classes,
 * anchors], each anchor's centre x, centre y, width, height in the input's pixels followed by its
 * class scores (already sigmoid). The input is the page letterboxed into a square (letterbox.ts).
 */
import type { RegionKind, Detection } from "./detections.ts";
import type { Letterboxed } from "./letterbox.ts";

/**
 * The boxes scoring at least `threshold` for their best class, in the page image's pixels
 * (the letterbox undone, clamped to the image); classes mapped to no kind are skipped.
 */
export function decodeYolo(output: Float32Array, dims: readonly number[], kinds: readonly (RegionKind | null)[], box: Letterboxed, threshold: number): Detection[] {
  const [batch, rows, anchors] = dims as [number, number, number];
  if (dims.length !== 3 || batch !== 1 || rows !== 4 + kinds.length) throw new Error(`a YOLOv8 head of ${kinds.length} classes gives [1, ${4 + kinds.length}, anchors], not [${dims.join(", ")}]`);
  const found: Detection[] = [];
  for (let a = 0; a < anchors; a++) {
    let best = -1;
    let score = threshold;
    for (let c = 0; c < kinds.length; c++) {
      const s = output[(4 + c) * anchors + a]!;
      if (s >= score) [best, score] = [c, s];
    }
    const kind = best >= 0 ? kinds[best] : null;
    if (!kind) continue;
    const [cx, cy, w, h] = [output[a]!, output[anchors + a]!, output[2 * anchors + a]!, output[3 * anchors + a]!];
    const toImage = (v: number, offset: number, limit: number) => Math.min(limit, Math.max(0, (v - offset) / box.scale));
    found.push({
      kind,
      score,
      x0: toImage(cx - w / 2, box.dx, box.width),
      y0: toImage(cy - h / 2, box.dy, box.height),
      x1: toImage(cx + w / 2, box.dx, box.width),
      y1: toImage(cy + h / 2, box.dy, box.height),
    });
  }
  return found;
}
