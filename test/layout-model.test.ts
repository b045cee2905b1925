/**
 * The layout model's part of reading a page (src/documents/layout-model/, layout/model-regions.ts):
 * decoding and suppressing its detections, the letterbox, the regions deciding elements while the
 * rules place words and order, and the fallback to the rules alone when no model is installed.
 * The model here is a fixture the test builds (support/layout-model.ts); the real weights are
 * never needed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { suppress, type Detection } from "../src/documents/layout-model/detections.ts";
import { letterbox } from "../src/documents/layout-model/letterbox.ts";
import { LayoutDetector } from "../src/documents/layout-model/layout-detector.ts";
import { decodeYolo } from "../src/documents/layout-model/yolo.ts";
import { confirmedBy, gridOfLines, regionAt, type ModelRegion } from "../src/documents/layout/model-regions.ts";
import { layoutPage, type LayoutStyle, type Run } from "../src/documents/page-layout.ts";
import { readDocument, type OcrLike } from "../src/documents/read-document.ts";
import { buildFixtureLayoutModel } from "./support/layout-model.ts";
import { processed } from "./support/polling.ts";
import { startTestServer } from "./support/server.ts";
import { tempDir } from "./support/temp-dir.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const det = (kind: Detection["kind"], score: number, x0: number, y0: number, x1: number, y1: number): Detection => ({ kind, score, x0, y0, x1, y1 });

describe("detections", () => {
  test("suppression keeps the best box of a region: same kind overlapping, another kind nearly the same box, a box nested in its own kind", () => {
    const kept = suppress([
      det("text", 0.9, 0, 0, 100, 50),
      det("text", 0.6, 5, 0, 100, 55), // same kind, IoU 0.86
      det("list_item", 0.5, 1, 1, 100, 50), // another kind, IoU 0.97
      det("text", 0.55, 10, 10, 60, 40), // inside the first
      det("title", 0.8, 10, 10, 60, 40), // another kind inside it: a title in a text box stands
      det("text", 0.7, 0, 60, 100, 100), // apart
    ]);
    expect(kept.map((d) => [d.kind, d.score])).toEqual([
      ["text", 0.9],
      ["title", 0.8],
      ["text", 0.7],
    ]);
  });

  test("YOLOv8 output decodes to boxes in the image's pixels, the letterbox undone; low scores and unmapped classes are dropped", () => {
    // Three anchors, two classes (text, unmapped); the 200 x 100 image sits in a 64 square at scale 0.32, 16 px down.
    const anchors = 3;
    const out = new Float32Array(6 * anchors);
    const set = (a: number, values: number[]) => values.forEach((v, row) => (out[row * anchors + a] = v));
    set(0, [32, 32, 32, 16, 0.9, 0.1]); // centre of the image, 100 x 50 image px
    set(1, [10, 20, 8, 8, 0.1, 0.2]); // under the threshold
    set(2, [50, 30, 8, 8, 0.1, 0.95]); // its best class maps to nothing
    const found = decodeYolo(out, [1, 6, anchors], ["text", null], { width: 200, height: 100, scale: 0.32, dx: 0, dy: 16 }, 0.25);
    expect(found).toHaveLength(1);
    expect(found[0]!.kind).toBe("text");
    expect(found[0]!.x0).toBeCloseTo(50);
    expect(found[0]!.x1).toBeCloseTo(150);
    expect(found[0]!.y0).toBeCloseTo(25);
    expect(found[0]!.y1).toBeCloseTo(75);
    expect(() => decodeYolo(out, [1, 5, anchors], ["text", null], { width: 1, height: 1, scale: 1, dx: 0, dy: 0 }, 0.25)).toThrow(/\[1, 6, anchors\]/);
  });

  test("letterbox: the image scaled into the square, centred on grey, RGB planes from 0 to 1", async () => {
    const width = 200;
    const height = 100;
    const data = new Uint8Array(width * height * 4);
    for (let i = 0; i < width * height; i++) data.set([255, 0, 0, 255], i * 4);
    const { tensor, box } = await letterbox({ width, height, data }, 64);
    expect(box).toEqual({ width, height, scale: 0.32, dx: 0, dy: 16 });
    const plane = 64 * 64;
    expect(tensor[0]).toBeCloseTo(114 / 255); // top padding
    expect(tensor[32 * 64 + 32]).toBeCloseTo(1); // red inside
    expect(tensor[plane + 32 * 64 + 32]).toBeCloseTo(0);
    expect(tensor[63 * 64]).toBeCloseTo(114 / 255); // bottom padding
  });
});

describe("regions and the page's text", () => {
  const region = (kind: ModelRegion["kind"], x0: number, y0: number, x1: number, y1: number): ModelRegion => ({ kind, score: 0.9, x0, y0, x1, y1 });

  test("a piece of text goes to the smallest region holding its centre", () => {
    const regions = [region("figure", 0, 0, 300, 300), region("caption", 0, 250, 300, 280)];
    expect(regionAt(regions, { x0: 10, y0: 260, x1: 200, y1: 270 })).toBe(1);
    expect(regionAt(regions, { x0: 10, y0: 10, x1: 200, y1: 20 })).toBe(0);
    expect(regionAt(regions, { x0: 310, y0: 10, x1: 400, y1: 20 })).toBe(-1);
    expect(confirmedBy(regions, "figure", { x0: 20, y0: 20, x1: 200, y1: 200 })).toBe(true);
    expect(confirmedBy(regions, "table", { x0: 20, y0: 20, x1: 200, y1: 200 })).toBe(false);
  });

  test("a table region's lines as a grid: columns from the rows of several cells, a lone wide line in its first column", () => {
    const cell = (text: string, x0: number, x1: number) => ({ text, x0, x1 });
    const rows = gridOfLines([
      { cells: [cell("Results by site and season", 10, 300)] },
      { cells: [cell("Site", 10, 40), cell("Spring", 100, 140), cell("Autumn", 200, 240)] },
      { cells: [cell("North", 10, 45), cell("12", 110, 120), cell("14", 210, 220)] },
      { cells: [cell("South", 10, 45), cell("9", 230, 236)] },
    ]);
    expect(rows).toEqual([
      ["Results by site and season", "", ""],
      ["Site", "Spring", "Autumn"],
      ["North", "12", "14"],
      ["South", "", "9"],
    ]);
  });

  const style: LayoutStyle = { body: 10, headingSizes: [], headingRatio: 1.2, monoIsCode: true };
  const run = (text: string, x0: number, baseline: number, extra: Partial<Run> = {}): Run => ({ text, x0, x1: x0 + text.length * 5, baseline, size: 10, ...extra });

  test("regions decide the elements; the rules read what lies outside them", () => {
    const runs = [
      run("Results of the field survey", 50, 60),
      run("The survey covered every site of the district over two seasons and", 50, 74),
      run("found the pumps in good order on most of them, as the table shows.", 50, 86),
      run("- the north pumps", 50, 110),
      run("- the south pumps", 50, 124),
      run("Site", 50, 150),
      run("Spring", 150, 150),
      run("North", 50, 162),
      run("12", 150, 162),
      run("Quarterly report of the works department", 50, 20),
      run("This paragraph lies outside every region and the rules read it alone.", 50, 200),
    ];
    const regions = [
      region("header", 40, 8, 300, 24),
      region("title", 45, 50, 200, 63),
      region("text", 45, 64, 400, 90),
      region("list_item", 45, 100, 200, 113),
      region("list_item", 45, 114, 200, 127),
      region("table", 45, 140, 200, 165),
    ];
    const elements = layoutPage(runs, 595, 842, style, { regions });
    expect(elements.map((e) => [e.type, e.content.slice(0, 24), e.metadata?.furniture ?? null])).toEqual([
      ["heading", "Results of the field sur", null],
      ["paragraph", "The survey covered every", null],
      ["list", "- the north pumps\n- the ", null],
      ["table", "| Site | Spring |\n|---|-", null],
      ["paragraph", "This paragraph lies outs", null],
      ["paragraph", "Quarterly report of the ", "header"],
    ]);
    // Without regions the rules alone: the title line joins the paragraph under it.
    expect(elements.find((e) => e.type === "table")!.metadata?.region).toBe("table");
    expect(layoutPage(runs, 595, 842, style).map((e) => e.type)).not.toContain("heading");
  });

  test("inside the regions the rules still read words: a bold heading in a text region stands apart, a formula in a title region is no heading", () => {
    const runs = [
      run("The previous section ends with this sentence of its own.", 50, 60),
      run("3 Results", 50, 84, { bold: true }),
      run("The results follow the method described in the section above.", 50, 98),
      run("E = m c 2", 200, 140),
    ];
    const regions = [region("text", 45, 50, 400, 102), region("title", 190, 130, 260, 143)];
    const elements = layoutPage(runs, 595, 842, style, { regions });
    expect(elements.map((e) => [e.type, e.content.slice(0, 12), e.metadata?.region])).toEqual([
      ["paragraph", "The previous", "text"],
      ["heading", "3 Results", "text"],
      ["paragraph", "The results ", "text"],
      ["paragraph", "E = m c 2", "title"],
    ]);
  });
});

describe("form rows under a layout model", () => {
  const style: LayoutStyle = { body: 10, headingSizes: [], headingRatio: 1.2, monoIsCode: true };
  const run = (text: string, x0: number, baseline: number, extra: Partial<Run> = {}): Run => ({ text, x0, x1: x0 + text.length * 5, baseline, size: 10, ...extra });
  const region = (kind: ModelRegion["kind"], x0: number, y0: number, x1: number, y1: number): ModelRegion => ({ kind, score: 0.9, x0, y0, x1, y1 });

  test("label-value rows the model takes for a table, and \"Label: value\" lines it boxes one by one, are key-value groups", () => {
    const runs = [
      run("Inspector", 50, 40, { bold: true }),
      run("Dana Whitfield", 200, 40),
      run("Site", 50, 54, { bold: true }),
      run("North pit, bench 4", 200, 54),
      run("Weather: dry, 14 degrees", 50, 90),
      run("Permit number: QP-2291", 50, 103),
    ];
    const regions = [region("table", 45, 30, 300, 58), region("text", 45, 80, 300, 93), region("text", 45, 94, 300, 106)];
    const elements = layoutPage(runs, 595, 842, style, { regions });
    expect(elements.map((e) => [e.type, e.content])).toEqual([
      ["key_value", "Inspector: Dana Whitfield\nSite: North pit, bench 4"],
      ["key_value", "Weather: dry, 14 degrees\nPermit number: QP-2291"],
    ]);
  });
});

const noOcr: OcrLike = { recognize: () => Promise.reject(new Error("no OCR here")) };

/** A text page: a plain line at body size right over its paragraph (the rules read one paragraph). */
async function surveyPdf(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage([595, 842]);
  const lines = [
    "Results of the field survey",
    "The survey covered every site of the district over two seasons and found",
    "the pumps in good order on most of them, with the exceptions listed below.",
  ];
  lines.forEach((text, i) => page.drawText(text, { x: 72, y: 842 - 100 - i * 14, size: 11, font }));
  return pdf.save();
}

describe("the layout model on a PDF page", () => {
  test("with the model's folder installed its regions decide; without it the rules serve alone", async () => {
    const modelsDir = tempDir("mediabox-layout-model-");
    dirs.push(modelsDir);
    const bytes = await surveyPdf();

    // No folder: no detector, the rules' reading.
    expect(await LayoutDetector.open(modelsDir, "yolov8n-doclaynet")).toBeNull();
    const rules = await readDocument(bytes, "pdf", { ocr: noOcr, layout: null });
    expect(rules.pages[0]!.elements.map((e) => e.type)).toEqual(["paragraph"]);

    // The fixture model sees a section header on the first line and text under it.
    buildFixtureLayoutModel(modelsDir, { width: 595, height: 842 }, [
      { label: "Section-header", box: { x0: 68, y0: 88, x1: 230, y1: 104 }, score: 0.88 },
      { label: "Text", box: { x0: 68, y0: 105, x1: 520, y1: 134 }, score: 0.93 },
      { label: "Text", box: { x0: 70, y0: 106, x1: 518, y1: 133 }, score: 0.5 }, // the same paragraph again: suppressed
    ]);
    const detector = await LayoutDetector.open(modelsDir, "yolov8n-doclaynet");
    expect(detector).not.toBeNull();
    try {
      const doc = await readDocument(bytes, "pdf", { ocr: noOcr, layout: detector });
      const elements = doc.pages[0]!.elements;
      expect(elements.map((e) => [e.type, e.content.slice(0, 16), e.metadata?.region])).toEqual([
        ["heading", "Results of the f", "title"],
        ["paragraph", "The survey cover", "text"],
      ]);
      expect(elements[1]!.content).toEndWith("exceptions listed below.");
    } finally {
      await detector!.close();
    }
  });

  test("through the server: the reader process uses the installed model; MEDIABOX_LAYOUT_MODEL=none leaves pages to the rules", async () => {
    const modelsDir = tempDir("mediabox-layout-models-");
    dirs.push(modelsDir);
    buildFixtureLayoutModel(modelsDir, { width: 595, height: 842 }, [
      { label: "Section-header", box: { x0: 68, y0: 88, x1: 230, y1: 104 }, score: 0.88 },
      { label: "Text", box: { x0: 68, y0: 105, x1: 520, y1: 134 }, score: 0.93 },
    ]);
    const bytes = await surveyPdf();
    for (const [setting, expected] of [
      ["yolov8n-doclaynet", ["heading", "paragraph"]],
      ["none", ["paragraph"]],
    ] as const) {
      const server = await startTestServer({ env: { MEDIABOX_MODELS_DIR: modelsDir, MEDIABOX_LAYOUT_MODEL: setting } });
      try {
        const owner = await server.tenant({ tier: "CUSTOM" });
        const form = new FormData();
        form.append("file", new File([bytes as Uint8Array<ArrayBuffer>], "survey.pdf"));
        const uploaded = await owner.api.form("/files/upload", form);
        expect(uploaded.status).toBe(201);
        await processed(owner, uploaded.body.image_id);
        const page = (await owner.api.get(`/files/${uploaded.body.image_id}/digitization/pages/1`)).body;
        expect(page.elements.map((e: { type: string }) => e.type), setting).toEqual([...expected]);
      } finally {
        await server.close();
      }
    }
  });

  test("an unknown model name is refused with the names known", async () => {
    await expect(LayoutDetector.open(tempDir("mediabox-layout-model-"), "no-such-model")).rejects.toThrow(/known: yolov8n-doclaynet/);
  });
});
