/**
 * The layout models Mediabox knows how to run: the file in the model's folder, its input size,
 * and its classes in output order mapped onto region kinds (detections.ts). A folder under the
 * models directory named after one of these serves it (`MEDIABOX_LAYOUT_MODEL`).
 */
import type { RegionKind } from "./detections.ts";

export interface LayoutModelSpec {
  /** The ONNX file inside the model's folder. */
  file: string;
  /** The square input side, pixels. */
  input: number;
  /** Each output class's region kind, in the model's order (null: not used). */
  classes: readonly (RegionKind | null)[];
  /** Boxes scoring under this are dropped before suppression. */
  threshold: number;
}

/** DocLayNet's eleven classes (Pfitzmann et al. 2022), in the order its YOLO exports use. */
const DOCLAYNET: readonly RegionKind[] = ["caption", "footnote", "formula", "list_item", "footer", "header", "figure", "title", "table", "text", "title"];

export const LAYOUT_MODELS: Record<string, LayoutModelSpec> = {
  /** YOLOv8n trained on DocLayNet (80k pages of reports, manuals, papers, patents, laws, tenders). */
  "yolov8n-doclaynet": { file: "model.onnx", input: 1024, classes: DOCLAYNET, threshold: 0.25 },
};

export const DEFAULT_LAYOUT_MODEL = "yolov8n-doclaynet";
