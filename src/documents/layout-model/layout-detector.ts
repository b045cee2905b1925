/**
 * A document layout model run by onnxruntime: a page image in, its regions out (text, titles,
 * list items, tables, figures, captions, footnotes, formulas, running headers and footers) with
 * boxes as fractions of the page. It runs in the document reader's child process, where pages are
 * read; onnxruntime runs the model on its own threads, so the reader's event loop only waits.
 *
 * `LayoutDetector.open` returns null when the model's folder is absent: the rule-based layout then
 * serves alone (page-layout.ts).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { suppress, type Detection } from "./detections.ts";
import { letterbox, type RawImage } from "./letterbox.ts";
import { LAYOUT_MODELS, type LayoutModelSpec } from "./layout-models.ts";
import { decodeYolo } from "./yolo.ts";

type Ort = typeof import("onnxruntime-node");
type Session = import("onnxruntime-node").InferenceSession;

/** A region found on a page; box corners are fractions of the page image (0-1, origin top-left). */
export type PageRegion = Detection;

/** What the PDF reader needs of a layout model (tests may give a fake of their own). */
export interface LayoutRegionFinder {
  /** The side, in pixels, the page image should have for the model (larger images are scaled down). */
  readonly imageSide: number;
  regions(image: RawImage): Promise<PageRegion[]>;
}

/** Threads one model run may use: the machine's cores are shared with OCR and the server. */
const THREADS = 2;

export class LayoutDetector implements LayoutRegionFinder {
  private constructor(
    readonly name: string,
    private readonly spec: LayoutModelSpec,
    private readonly ort: Ort,
    private readonly session: Session,
  ) {}

  get imageSide(): number {
    return this.spec.input;
  }

  /** The model `name` from `<modelsDir>/<name>/`, or null when that folder or its weights are absent. */
  static async open(modelsDir: string, name: string): Promise<LayoutDetector | null> {
    const spec = LAYOUT_MODELS[name];
    if (!spec) throw new Error(`unknown layout model "${name}" (known: ${Object.keys(LAYOUT_MODELS).join(", ")})`);
    const file = path.join(modelsDir, name, spec.file);
    if (!existsSync(file)) return null;
    const ort = await import("onnxruntime-node");
    const session = await ort.InferenceSession.create(file, { intraOpNumThreads: THREADS, interOpNumThreads: 1, graphOptimizationLevel: "all" });
    return new LayoutDetector(name, spec, ort, session);
  }

  async regions(image: RawImage): Promise<PageRegion[]> {
    const { tensor, box } = await letterbox(image, this.spec.input);
    const input = new this.ort.Tensor("float32", tensor, [1, 3, this.spec.input, this.spec.input]);
    const outputs = await this.session.run({ [this.session.inputNames[0]!]: input });
    const output = outputs[this.session.outputNames[0]!]!;
    const found = decodeYolo(output.data as Float32Array, output.dims, this.spec.classes, box, this.spec.threshold);
    return suppress(found).map((d) => ({ ...d, x0: d.x0 / image.width, x1: d.x1 / image.width, y0: d.y0 / image.height, y1: d.y1 / image.height }));
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}
