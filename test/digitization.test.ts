/**
 * Page digitization on generated PDFs whose layout is known (test/support/layout-pdfs.ts): ruled
 * tables with a spanning header, unruled tables, two columns under a full-width title and abstract,
 * bold and numbered headings of body size, bulleted, checkbox and numbered lists, a footnote, form
 * rows, a vector chart with its caption, running headers and page numbers, landscape content printed
 * sideways (running up or down a portrait page, or on a page turned by /Rotate). Right-to-left order is
 * checked on text items directly (no font with Arabic or Hebrew glyphs can be embedded here).
 * The parts on their own are fed runs and rules by hand: grids ruled only in the header or only
 * between groups of columns, wrapped header cells and row labels, captioned tables of text rows,
 * diagrams joined by their labels, three-column reading order, headings against one-item lists,
 * display formulas on several baselines, the page orientation read from text directions.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { readDocument, type OcrLike } from "../src/documents/read-document.ts";
import type { DocElement, DocumentContent } from "../src/documents/types.ts";
import { logicalText, rightToLeft } from "../src/documents/layout/bidi.ts";
import { readingOrder } from "../src/documents/layout/columns.ts";
import { booktabsTables } from "../src/documents/layout/booktabs.ts";
import { findFigures } from "../src/documents/layout/figures.ts";
import { fontInfo, pageGraphics, type Matrix, type Ops } from "../src/documents/layout/graphics.ts";
import { boxToPage, frameOf, pageTurn } from "../src/documents/layout/orientation.ts";
import { readsApart, textRegions } from "../src/documents/layout/text-regions.ts";
import { ruledTables } from "../src/documents/layout/ruled-tables.ts";
import { unruledTables } from "../src/documents/layout/unruled-tables.ts";
import { buildLines, layoutPage, type LayoutStyle, type Run } from "../src/documents/page-layout.ts";
import { PDFDocument } from "pdf-lib";
import sharp from "sharp";
import { inkGrid, inkShapes, scanMarks } from "../src/documents/layout/raster-marks.ts";
import { bulletBefore } from "../src/documents/layout/raster-bullets.ts";
import { rasterRules } from "../src/documents/layout/raster-rules.ts";
import { scannedPdf } from "./support/documents.ts";
import { articlePdf, BOOKTABS_ROWS, booktabsPdf, formPdf, lamAlefPdf, mixedPdf, SIDEWAYS_ROWS, sidewaysPdf, type LayoutFixture } from "./support/layout-pdfs.ts";

const noOcr: OcrLike = { recognize: () => Promise.reject(new Error("OCR should not run for this document")) };
const ofType = (elements: DocElement[], type: DocElement["type"]) => elements.filter((e) => e.type === type);
const iou = (a: DocElement["bounding_box"], b: DocElement["bounding_box"]) => {
  const ix = Math.max(0, Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x));
  const iy = Math.max(0, Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y));
  return (ix * iy) / (a.w * a.h + b.w * b.h - ix * iy);
};

describe("a two-column article", () => {
  let fixture: LayoutFixture;
  let doc: DocumentContent;
  beforeAll(async () => {
    fixture = await articlePdf();
    doc = await readDocument(fixture.bytes, "pdf", { ocr: noOcr });
  });

  test("every element of the truth is found with its type where it was drawn", () => {
    for (const truth of fixture.elements) {
      const found = doc.pages[truth.page - 1]!.elements.filter((e) => e.type === truth.type && !e.metadata?.furniture);
      const best = Math.max(0, ...found.map((e) => iou(e.bounding_box, truth.box)));
      expect(best, `${truth.type} "${truth.text.slice(0, 40)}"`).toBeGreaterThan(0.5);
    }
  });

  test("columns are read one after the other, below the full-width title and abstract", () => {
    const text = doc.pages[0]!.text;
    const order = ["Wear of Conveyor Idlers", "Abstract.", "1 Introduction", "2 Method", "2.1 Sampling", "2.2 Measurements"].map((s) => text.indexOf(s));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  test("bold headings of body size are headings, levels from their numbering", () => {
    const headings = doc.pages.flatMap((p) => ofType(p.elements, "heading")).map((h) => [h.content, h.metadata?.level]);
    expect(headings).toEqual([
      ["Wear of Conveyor Idlers in Hard Rock Quarries", 1],
      ["1 Introduction", 2],
      ["2 Method", 2],
      ["2.1 Sampling", 3],
      ["2.2 Measurements", 3],
      ["3 Results", 2],
      ["4 Discussion", 2],
    ]);
  });

  test("paragraphs split at first-line indents; lists join wrapped lines; checkbox glyphs are bullets", () => {
    const page = doc.pages[0]!;
    expect(ofType(page.elements, "paragraph").filter((p) => !p.metadata?.furniture && !p.metadata?.footnote).length).toBe(7);
    const lists = ofType(page.elements, "list");
    expect(lists.map((l) => l.metadata?.items)).toEqual([3, 2, 3]);
    expect(lists.map((l) => l.metadata?.ordered)).toEqual([false, true, false]);
    for (const l of lists) expect(l.content.split("\n").every((item) => /^(?:-|\d+\.) \S/.test(item))).toBe(true);
  });

  test("a small-print note numbered 1) at the foot of a column is a footnote paragraph, not a list", () => {
    const footnotes = doc.pages[0]!.elements.filter((e) => e.metadata?.footnote);
    expect(footnotes).toHaveLength(1);
    expect(footnotes[0]).toMatchObject({ type: "paragraph" });
    expect(footnotes[0]!.content.startsWith("1) ")).toBe(true);
  });

  test("running headers and page numbers are marked and kept out of the page text", () => {
    for (const page of doc.pages) {
      const furniture = page.elements.filter((e) => e.metadata?.furniture);
      expect(furniture.map((e) => [e.content, e.metadata?.furniture])).toEqual([
        ["Journal of Quarry Engineering 12 (2026)", "header"],
        [String(page.page_number), "footer"],
      ]);
      expect(page.text).not.toContain("Journal of Quarry Engineering");
    }
  });

  test("a ruled table: cells from the grid, the spanning header in its first slot", () => {
    const tables = ofType(doc.pages[1]!.elements, "table");
    expect(tables).toHaveLength(2);
    expect(tables[0]!.content).toBe(
      [
        "| Site | Belt speed |  | Wear |",
        "|---|---|---|---|",
        "|  | m/s | ft/min | mm/yr |",
        "| North pit | 2.5 | 492 | 0.8 |",
        "| South pit | 3.1 | 610 | 1.1 |",
        "| Harbour | 4.0 | 787 | 1.9 |",
      ].join("\n"),
    );
    expect(tables[0]!.metadata).toMatchObject({ rows: 5, columns: 4, ruled: true, spans: [{ row: 0, col: 1, rowspan: 1, colspan: 2 }], caption: "Table 1: Idler wear by site and belt speed." });
  });

  test("an unruled table from aligned columns", () => {
    const table = ofType(doc.pages[1]!.elements, "table")[1]!;
    expect(table.content.split("\n")[0]).toBe("| Part | North | South | Harbour |");
    expect(table.content.split("\n")[3]).toBe("| Belt splice kit | 6 | 4 | 9 |");
    expect(table.metadata?.caption).toBe("Table 2: Spare parts held per site.");
  });

  test("a vector chart is a figure with its caption", () => {
    const figures = ofType(doc.pages[1]!.elements, "figure");
    expect(figures).toHaveLength(1);
    expect(figures[0]!.metadata).toMatchObject({ source: "drawing", caption: "Figure 1: Wear against belt speed for the three sites." });
  });
});

describe("a form", () => {
  test("label / value rows and 'Label: value' lines are key_value (two groups a blank line apart); checkbox lines a list; the readings a table", async () => {
    const doc = await readDocument((await formPdf()).bytes, "pdf", { ocr: noOcr });
    const elements = doc.pages[0]!.elements;
    expect(elements.map((e) => e.type)).toEqual(["heading", "key_value", "key_value", "heading", "list", "heading", "table", "paragraph"]);
    expect(elements[1]!.content.split("\n")).toEqual(["Inspector: Dana Whitfield", "Site: North pit, bench 4", "Date of visit: 12 March 2026"]);
    expect(elements[2]!.content.split("\n")).toEqual(["Weather: dry, 14 degrees", "Shift supervisor: Omar Haddad", "Permit number: QP-2291"]);
    expect(elements[4]!.metadata).toMatchObject({ items: 3 });
    expect(elements[6]!.metadata).toMatchObject({ rows: 4, columns: 4 });
  });
});

describe("a scanned table", () => {
  test("OCR word boxes split a scanned table's lines into cells: a table, not a paragraph", async () => {
    const box = (x: number, y: number, w: number) => ({ x_min: x, y_min: y, x_max: x + w, y_max: y + 0.03 });
    const row = (y: number, cells: string[]) => {
      // Each cell's words at the column's x, the columns 0.25 of the page apart.
      const words = cells.flatMap((cell, c) => {
        let x = 0.1 + c * 0.25;
        return cell.split(" ").map((w) => {
          const word = { text: w, bounding_box: box(x, y, w.length * 0.012) };
          x += w.length * 0.012 + 0.01;
          return word;
        });
      });
      return { text: cells.join(" "), bounding_box: { x_min: 0.1, y_min: y, x_max: words.at(-1)!.bounding_box.x_max, y_max: y + 0.03 }, words };
    };
    const fake: OcrLike = {
      recognize: async () => ({
        text: "",
        regions: [row(0.2, ["Truck", "Loads", "Tonnes"]), row(0.26, ["T-01 north", "14", "560"]), row(0.32, ["T-02 south", "11", "440"])],
      }),
    };
    const page = (await readDocument(await scannedPdf(), "pdf", { ocr: fake })).pages[0]!;
    expect(page.elements.map((e) => e.type)).toEqual(["table"]);
    expect(page.elements[0]!.content).toBe(["| Truck | Loads | Tonnes |", "|---|---|---|", "| T-01 north | 14 | 560 |", "| T-02 south | 11 | 440 |"].join("\n"));
    expect(page.elements[0]!.metadata?.ocr).toBe(true);
  });
});

describe("a table ruled with horizontal rules only", () => {
  test("booktabs rules (top, under the header, bottom) over columns 0.7 em apart make a table with its header", async () => {
    const page = (await readDocument((await booktabsPdf()).bytes, "pdf", { ocr: noOcr })).pages[0]!;
    expect(page.elements.map((e) => e.type)).toEqual(["paragraph", "table", "paragraph"]);
    const table = page.elements[1]!;
    const markdown = [BOOKTABS_ROWS[0]!, ["---", "---", "---", "---"], ...BOOKTABS_ROWS.slice(1)].map((r, i) => (i === 1 ? "|---|---|---|---|" : `| ${r.join(" | ")} |`));
    expect(table.content).toBe(markdown.join("\n"));
    expect(table.metadata).toMatchObject({ rows: 5, columns: 4, ruled: true });
  });
});

/** The sideways fixtures' table as the reader writes it. */
const SIDEWAYS_MARKDOWN = [`| ${SIDEWAYS_ROWS[0]!.join(" | ")} |`, "|---|---|---|---|---|", ...SIDEWAYS_ROWS.slice(1).map((r) => `| ${r.join(" | ")} |`)].join("\n");

describe("text printed sideways", () => {
  let fixture: LayoutFixture;
  let doc: DocumentContent;
  beforeAll(async () => {
    fixture = await sidewaysPdf();
    doc = await readDocument(fixture.bytes, "pdf", { ocr: noOcr });
  });

  test("running up the page, down it, and on a page turned by /Rotate 90: heading, paragraph, table, paragraph in reading order", () => {
    for (const page of doc.pages) {
      expect(page.elements.map((e) => e.type), `page ${page.page_number}`).toEqual(["heading", "paragraph", "table", "paragraph"]);
      const truth = fixture.elements.filter((e) => e.page === page.page_number);
      // Paragraph text comes out whole, its lines in order.
      expect(page.elements[1]!.content).toBe(truth[1]!.text);
      expect(page.elements[3]!.content).toBe(truth[3]!.text);
    }
  });

  test("the sideways table's cells are read in the text's own orientation, ruled or not", () => {
    for (const page of doc.pages) expect(ofType(page.elements, "table")[0]!.content, `page ${page.page_number}`).toBe(SIDEWAYS_MARKDOWN);
    expect(doc.pages[1]!.elements[2]!.metadata).toMatchObject({ ruled: true });
  });

  test("boxes are of the page as shown: tall and narrow on the portrait pages, wide on the turned one", () => {
    for (const truth of fixture.elements) {
      const found = doc.pages[truth.page - 1]!.elements.filter((e) => e.type === truth.type);
      const best = Math.max(0, ...found.map((e) => iou(e.bounding_box, truth.box)));
      expect(best, `page ${truth.page} ${truth.type} "${truth.text.slice(0, 30)}"`).toBeGreaterThan(0.8);
    }
    const table = (n: number) => ofType(doc.pages[n]!.elements, "table")[0]!.bounding_box;
    expect(table(0).h).toBeGreaterThan(table(0).w);
    expect(table(2).w).toBeGreaterThan(table(2).h);
  });
});

describe("pages that mix text directions", () => {
  let fixture: LayoutFixture;
  let doc: DocumentContent;
  beforeAll(async () => {
    fixture = await mixedPdf();
    doc = await readDocument(fixture.bytes, "pdf", { ocr: noOcr });
  });

  test("a sideways table under upright text, and upright header and page number on a sideways page, are each read in their own direction", () => {
    expect(doc.pages[0]!.elements.map((e) => e.type)).toEqual(["heading", "paragraph", "table"]);
    expect(doc.pages[1]!.elements.map((e) => e.type)).toEqual(["paragraph", "heading", "paragraph", "table", "paragraph"]);
    for (const page of doc.pages) expect(ofType(page.elements, "table")[0]!.content, `page ${page.page_number}`).toBe(SIDEWAYS_MARKDOWN);
    expect(doc.pages[1]!.elements[0]!.content).toBe("Annual report 2025, appendix B, output tables");
    expect(doc.pages[1]!.elements.at(-1)!.content).toBe("17");
  });

  test("every element's box is where it was drawn on the page", () => {
    for (const truth of fixture.elements) {
      const found = doc.pages[truth.page - 1]!.elements.filter((e) => e.type === truth.type);
      const best = Math.max(0, ...found.map((e) => iou(e.bounding_box, truth.box)));
      expect(best, `page ${truth.page} ${truth.type} "${truth.text.slice(0, 30)}"`).toBeGreaterThan(0.8);
    }
  });
});

describe("right-to-left text from a PDF", () => {
  test("a lam-alef ligature drawn as one glyph keeps its letters in order; the same letters drawn apart keep theirs", async () => {
    const doc = await readDocument(await lamAlefPdf(), "pdf", { ocr: noOcr });
    // سلام (seen, lam, alef, meem), then الم (alef, lam, meem): pdf.js alone gives سالم for the first.
    expect(doc.pages[0]!.elements.map((e) => e.content)).toEqual(["\u0633\u0644\u0627\u0645 \u0627\u0644\u0645"]);
    expect(doc.text).toContain("\u0633\u0644\u0627\u0645");
  });
});

describe("the parts on their own", () => {
  const style: LayoutStyle = { body: 10, headingSizes: [], headingRatio: 1.2, monoIsCode: true };
  const run = (text: string, x0: number, baseline: number, extra: Partial<Run> = {}): Run => ({ text, x0, x1: x0 + text.length * 5, baseline, size: 10, ...extra });

  test("page orientation: most characters sideways turn the page, a sideways label on running text does not; boxes turn back", () => {
    const portrait: Matrix = [1, 0, 0, -1, 0, 842];
    const item = (str: string, a: number, b: number) => ({ str, transform: [a * 10, b * 10, -b * 10, a * 10, 100, 100] });
    const body = Array.from({ length: 20 }, () => item("a line of running text set upright", 1, 0));
    expect(pageTurn([...body, item("sideways margin label", 0, 1)], portrait)).toBe(0);
    // Running up the page (PDF +y) reads after a clockwise quarter turn; running down, after three.
    expect(pageTurn([...body.slice(0, 2), ...Array.from({ length: 20 }, () => item("sideways table cell text", 0, 1))], portrait)).toBe(1);
    expect(pageTurn(Array.from({ length: 5 }, () => item("sideways", 0, -1)), portrait)).toBe(3);
    // A diagonal watermark says nothing.
    expect(pageTurn([item("DRAFT COPY DRAFT COPY", Math.SQRT1_2, Math.SQRT1_2)], portrait)).toBe(0);
    // A few sideways labels (vertical column headers over a table's upright cells) stay with the page's text,
    // and so would more of them (lines of one short cell each); a block set apart that reads as rows is a region.
    const at = (str: string, a: number, b: number, x: number, y: number) => ({ str, width: str.length * 5, height: 10, transform: [a * 10, b * 10, -b * 10, a * 10, x, y] });
    const headers = ["Brian Calley", "Jim Hines", "Sue Allor"].map((name, i) => at(name, 0, 1, 200 + i * 30, 700));
    const cells = Array.from({ length: 12 }, (_, i) => at(String(100 + i), 1, 0, 190 + (i % 3) * 30, 680 - Math.floor(i / 3) * 14));
    const below = Array.from({ length: 6 }, (_, r) => ["North pit", "12,480", "1,920"].map((cell, c) => at(cell, 0, 1, 100 + r * 14, 100 + c * 80))).flat();
    expect(textRegions([...body.map((b, i) => ({ ...b, width: 150, height: 10, transform: [10, 0, 0, 10, 60, 800 - i * 3] })), ...headers, ...cells], portrait, 0)).toEqual([]);
    const names = Array.from({ length: 12 }, (_, i) => ({ text: `Candidate ${i}`, x0: 100, x1: 160, baseline: 100 + i * 30, size: 8 }));
    expect(readsApart(buildLines(names))).toBe(false);
    const [region] = textRegions([...cells, ...below], portrait, 0);
    expect(region?.turn).toBe(1);
    expect(region?.items.size).toBe(below.length);
    for (const turn of [1, 2, 3] as const) {
      const frame = frameOf(turn, 595, 842);
      // The frame's top-left corner: where the text starts, at the page's bottom left (turn 1), bottom right (2), top right (3).
      const corner = boxToPage(frame, { x: 0, y: 0, w: 0.1, h: 0.2 });
      expect(corner).toEqual(
        turn === 1 ? { x: 0, y: 0.9, w: 0.2, h: 0.1 } : turn === 2 ? { x: 0.9, y: 0.8, w: 0.1, h: 0.2 } : { x: 0.8, y: 0, w: 0.2, h: 0.1 },
      );
    }
  });

  test("right-to-left lines read right to left, Latin words and numbers inside keep their order", () => {
    // Visual order on the page, left to right: "PDF 2024" sits at the left end of an Arabic line.
    const items = [
      { text: "PDF", x0: 10, x1: 30, size: 10 },
      { text: "2024", x0: 35, x1: 55, size: 10 },
      { text: "ملف", x0: 60, x1: 80, size: 10, rtl: true },
      { text: "هذا", x0: 85, x1: 105, size: 10, rtl: true },
    ];
    expect(logicalText(items)).toBe("هذا ملف PDF 2024");
    expect(rightToLeft("هذا ملف PDF")).toBe(true);
    expect(rightToLeft("This is a PDF ملف")).toBe(false);
    // The lam-alef ligature (one presentation-form code point) becomes its two letters, in order.
    expect(logicalText([{ text: "\uFEFB", x0: 0, x1: 10, size: 10, rtl: true }])).toBe("\u0644\u0627");
    // Whole lines: cells right to left.
    const line = buildLines([run("שלום", 300, 100, { rtl: true }), run("עולם", 200, 100, { rtl: true })])[0]!;
    expect(line.text).toBe("שלום עולם");
  });

  test("fonts named bold or italic, and pdf.js's flags", () => {
    expect(fontInfo("AAEWKY+NimbusRomNo9L-Medi", {})).toMatchObject({ name: "NimbusRomNo9L-Medi", bold: true, italic: false });
    expect(fontInfo("Arial-BoldItalicMT", {})).toMatchObject({ bold: true, italic: true });
    expect(fontInfo("VTLCUN+NimbusRomNo9L-ReguItal", {})).toMatchObject({ bold: false, italic: true });
    expect(fontInfo("CMBX10", {})).toMatchObject({ bold: true });
    expect(fontInfo("Helvetica", { bold: true })).toMatchObject({ bold: true });
    expect(fontInfo("TimesNewRomanPSMT", {})).toMatchObject({ bold: false, italic: false });
  });

  test("an operator list's strokes and thin fills become rules; other paths shapes; images boxes with their resolution", () => {
    const ops = Object.fromEntries(
      ["save", "restore", "transform", "paintFormXObjectBegin", "paintFormXObjectEnd", "beginGroup", "endGroup", "paintImageXObject", "paintInlineImageXObject", "paintImageMaskXObject", "paintSolidColorImageMask", "paintImageXObjectRepeat", "paintImageMaskXObjectRepeat", "constructPath", "stroke", "closeStroke", "fill", "eoFill", "fillStroke", "eoFillStroke", "closeFillStroke", "closeEOFillStroke", "setLineWidth", "setFillRGBColor", "setStrokeRGBColor"].map((k, i) => [k, i + 1]),
    ) as unknown as Ops;
    const path = (...n: number[]) => [new Float32Array(n)];
    const list = {
      fnArray: [ops.constructPath, ops.constructPath, ops.constructPath, ops.save, ops.transform, ops.paintImageXObject, ops.restore],
      argsArray: [
        [ops.stroke, path(0, 10, 800, 1, 200, 800), null], // a horizontal line at y 800 (PDF space)
        [ops.fill, path(0, 100, 700, 1, 100.5, 700, 1, 100.5, 600, 1, 100, 600, 4), null], // a thin filled rectangle: a vertical rule
        [ops.fill, path(0, 300, 300, 1, 400, 300, 1, 350, 380, 4), null], // a triangle
        null,
        [50, 0, 0, 40, 20, 20],
        ["img_1", 100, 80], // 100 px shown 50 pt wide: 144 dpi
        null,
      ],
    };
    // The viewport of an A4 page: y flips.
    const g = pageGraphics(ops, list, [1, 0, 0, -1, 0, 842], { width: 595, height: 842 });
    expect(g.horizontal).toEqual([{ x0: 10, x1: 200, y0: 42, y1: 42 }]);
    expect(g.vertical).toEqual([{ x0: 100.25, x1: 100.25, y0: 142, y1: 242 }]);
    expect(g.shapes).toEqual([{ x0: 300, y0: 462, x1: 400, y1: 542 }]);
    expect(g.images).toEqual([{ x0: 20, y0: 782, x1: 70, y1: 822, dpi: 144 }]);
  });

  test("a grid with a missing inner rule merges the two cells it separated", () => {
    // Two rows by three columns; the rule between columns 2 and 3 stops at the first row's bottom.
    const h = [0, 20, 40].map((y) => ({ x0: 0, x1: 300, y0: y, y1: y }));
    const v = [
      { x0: 0, x1: 0, y0: 0, y1: 40 },
      { x0: 100, x1: 100, y0: 0, y1: 40 },
      { x0: 200, x1: 200, y0: 20, y1: 40 },
      { x0: 300, x1: 300, y0: 0, y1: 40 },
    ];
    const runs = [run("Name", 5, 15), run("Reading", 120, 15), run("Pump", 5, 35), run("4.1", 105, 35), run("OK", 205, 35)];
    const [table] = ruledTables(runs, h, v);
    expect(table!.rows).toEqual([
      ["Name", "Reading", ""],
      ["Pump", "4.1", "OK"],
    ]);
    expect(table!.spans).toEqual([{ row: 0, col: 1, rowspan: 1, colspan: 2 }]);
  });

  test("a grid with vertical rules only in its header: body rows whose text stands apart in the header's columns keep those columns", () => {
    // Rules across under every row; inner vertical rules only through the header band (0-20).
    const h = [0, 20, 40, 60, 80].map((y) => ({ x0: 0, x1: 400, y0: y, y1: y }));
    const v = [0, 100, 200, 300, 400].map((x) => ({ x0: x, x1: x, y0: 0, y1: x % 400 ? 20 : 80 }));
    const runs = [
      ...["Country", "Domestic", "Imported", "Total"].map((t, i) => run(t, 5 + i * 100, 15)),
      ...["Austria", "92.9", "7.1", "5,821"].map((t, i) => run(t, 5 + i * 100, 35)),
      ...["Belgium", "0", "100.0", "5,906"].map((t, i) => run(t, 5 + i * 100, 55)),
      // A note across the whole width: one cell still.
      run("Source: national reports of the member states", 5, 75),
    ];
    const [table] = ruledTables(runs, h, v);
    expect(table!.rows).toEqual([
      ["Country", "Domestic", "Imported", "Total"],
      ["Austria", "92.9", "7.1", "5,821"],
      ["Belgium", "0", "100.0", "5,906"],
      ["Source: national reports of the member states", "", "", ""],
    ]);
  });

  test("a ruled header whose cells wrap side by side stays one row; a band of rows in a grid ruled only around it is split", () => {
    const h = [0, 60, 110].map((y) => ({ x0: 0, x1: 300, y0: y, y1: y }));
    const v = [0, 100, 200, 300].map((x) => ({ x0: x, x1: x, y0: 0, y1: 110 }));
    const header = [
      ["", "Reclassification", "Reclassification"],
      ["", "from fair value", "from available"],
      ["", "through profit", "for sale to"],
      ["", "to loans", "receivables"],
    ].flatMap((cells, i) => cells.map((c, k) => (c ? run(c, 5 + k * 100, 12 + i * 12) : null)).filter((r): r is Run => r !== null));
    const body = [
      ["Kerala", "5738", "6633"],
      ["Tamil Nadu", "7387", "10217"],
      ["Karnataka", "6453", "8138"],
    ].flatMap((cells, i) => cells.map((c, k) => run(c, 5 + k * 100, 75 + i * 12)));
    expect(ruledTables([...header, ...body], h, v)[0]!.rows).toEqual([
      ["", "Reclassification from fair value through profit to loans", "Reclassification from available for sale to receivables"],
      ["Kerala", "5738", "6633"],
      ["Tamil Nadu", "7387", "10217"],
      ["Karnataka", "6453", "8138"],
    ]);
  });

  test("rows split from one ruled band: a label that goes on in lower case on the values' line starts that row", () => {
    const h = [0, 20, 110].map((y) => ({ x0: 0, x1: 300, y0: y, y1: y }));
    const v = [0, 150, 300].map((x) => ({ x0: x, x1: x, y0: 0, y1: 110 }));
    const runs = [
      run("Offense", 5, 14),
      run("Total", 160, 14),
      ...[run("Violent crime", 5, 35), run("467.9", 160, 35)],
      run("Murder and nonnegligent", 8, 47),
      ...[run("manslaughter . . . .", 10, 59), run("10.0", 160, 59)],
      ...[run("Forcible rape . . . .", 8, 71), run("17.5", 160, 71)],
    ];
    expect(ruledTables(runs, h, v)[0]!.rows).toEqual([
      ["Offense", "Total"],
      ["Violent crime", "467.9"],
      ["Murder and nonnegligent manslaughter . . . .", "10.0"],
      ["Forcible rape . . . .", "17.5"],
    ]);
  });

  test("a ruled header whose words are stacked and centred in their cells stays one row", () => {
    const h = [0, 60, 110].map((y) => ({ x0: 0, x1: 300, y0: y, y1: y }));
    const v = [0, 100, 200, 300].map((x) => ({ x0: x, x1: x, y0: 0, y1: 110 }));
    const header = [run("Murder /", 110, 12), run("Non-", 110, 24), run("Motor", 210, 24), run("Negligent", 110, 36), run("Vehicle", 210, 36), run("Manslaughter", 110, 48)];
    const body = [["2005", "28", "11,890"], ["2006", "25", "9,811"], ["2007", "66", "8,744"]].flatMap((cells, i) => cells.map((c, k) => run(c, 5 + k * 100, 75 + i * 12)));
    expect(ruledTables([...header, ...body], h, v)[0]!.rows[0]).toEqual(["", "Murder / Non- Negligent Manslaughter", "Motor Vehicle"]);
  });

  test("a ruled column holding several columns of text is split at their gutter; a header over them spans; bullets stay with their items", () => {
    // Rules frame the table, cross under the header and under the group's title; one vertical rule between "Item" and the group.
    const h = [...[0, 40, 100].map((y) => ({ x0: 0, x1: 400, y0: y, y1: y })), { x0: 150, x1: 400, y0: 22, y1: 22 }];
    const v = [0, 150, 400].map((x) => ({ x0: x, x1: x, y0: 0, y1: 100 }));
    const runs = [
      run("Item", 5, 15),
      run("Count of items", 200, 15),
      run("Male", 170, 32),
      run("Female", 300, 32),
      ...["Pumps", "Valves", "Seals"].flatMap((t, i) => [run(t, 5, 55 + i * 15), run(String(10 + i), 170, 55 + i * 15), run(String(20 + i), 300, 55 + i * 15)]),
    ];
    const [table] = ruledTables(runs, h, v);
    expect(table!.rows).toEqual([
      ["Item", "Count of items", ""],
      ["", "Male", "Female"],
      ["Pumps", "10", "20"],
      ["Valves", "11", "21"],
      ["Seals", "12", "22"],
    ]);
    // A list in a cell: its bullets set apart from the items are no column.
    const bullets = ["First point", "Second point", "Third point"].flatMap((t, i) => [run("•", 160, 55 + i * 15), run(t, 180, 55 + i * 15), run(`Row ${i}`, 5, 55 + i * 15)]);
    expect(ruledTables([run("Item", 5, 15), run("Notes", 160, 15), ...bullets], h, v)[0]!.rows).toEqual([
      ["Item", "Notes"],
      ["Row 0", "• First point"],
      ["Row 1", "• Second point"],
      ["Row 2", "• Third point"],
    ]);
  });

  test("aligned numbers with signs and ± are a table; a display formula on two baselines is not", () => {
    const row = (y: number, cells: string[]) => cells.map((c, i) => run(c, 50 + i * 120, y));
    const data = buildLines([...row(100, ["Site", "Mean", "Range"]), ...row(114, ["North", "−3.2", "4.1 ± 0.2"]), ...row(128, ["South", "−1.0", "2.2 ± 0.3"])]);
    expect(unruledTables(data).map((t) => t.rows)).toEqual([
      [
        ["Site", "Mean", "Range"],
        ["North", "−3.2", "4.1 ± 0.2"],
        ["South", "−1.0", "2.2 ± 0.3"],
      ],
    ]);
    const formula = buildLines([run("∂w", 100, 100), run("2", 220, 100), run("∂t", 100, 112), run("= γu + δv − w", 220, 112)]);
    expect(unruledTables(formula)).toEqual([]);
  });

  test("a frame around a paragraph is not a table", () => {
    const h = [0, 40].map((y) => ({ x0: 0, x1: 300, y0: y, y1: y }));
    const v = [0, 300].map((x) => ({ x0: x, x1: x, y0: 0, y1: 40 }));
    expect(ruledTables([run("Only one cell of text here", 5, 20)], h, v)).toEqual([]);
  });

  test("reading order: a column that ends early is read before the other, a full-width block breaks the columns", () => {
    const atom = (name: string, x0: number, y0: number, x1: number, y1: number) => ({ name, x0, y0, x1, y1, chars: 40 });
    const atoms = [
      atom("title", 50, 10, 540, 30),
      ...[0, 1, 2, 3].map((i) => atom(`L${i}`, 50, 50 + i * 14, 280, 60 + i * 14)),
      ...[0, 1].map((i) => atom(`R${i}`, 310, 50 + i * 14, 540, 60 + i * 14)),
      atom("table", 50, 120, 540, 200),
      atom("after", 50, 210, 540, 220),
    ];
    const order = readingOrder(atoms, 595).flat().map((a) => a.name);
    expect(order).toEqual(["title", "L0", "L1", "L2", "L3", "R0", "R1", "table", "after"]);
  });

  test("reading order: an equation number at the left column's right edge stays in the left column, whatever gap the formula leaves", () => {
    const atom = (name: string, x0: number, y0: number, x1: number, y1: number, chars = 40) => ({ name, x0, y0, x1, y1, chars });
    const atoms = [
      ...[0, 1].map((i) => atom(`L${i}`, 50, 50 + i * 14, 290, 60 + i * 14)),
      ...[0, 1, 2, 3, 4].map((i) => atom(`R${i}`, 310, 50 + i * 14, 550, 60 + i * 14)),
      // A formula on the left, a wide gap, then its number just left of the gutter; on the right column's third line.
      atom("formula", 90, 76, 200, 86, 14),
      atom("(1)", 270, 78, 290, 86, 3),
      atom("L2", 50, 92, 290, 102),
    ];
    const order = readingOrder(atoms, 595).flat().map((a) => a.name);
    expect(order.indexOf("(1)")).toBeLessThan(order.indexOf("R0"));
  });

  test("reading order: three columns are read one after the other, through stretches where one of them is empty", () => {
    const atom = (name: string, x0: number, y0: number, x1: number) => ({ name, x0, y0, x1, y1: y0 + 10, chars: 40 });
    const cols = [50, 220, 390];
    const atoms = [
      ...[0, 1, 2, 3].flatMap((i) => cols.map((x, c) => atom(`C${c}.${i}`, x, 50 + i * 14, x + (c === 1 && i === 3 ? 90 : 150)))),
      // Column 1 pauses (a heading's space) while the others go on; the middle one ends early.
      ...[4, 5].flatMap((i) => [atom(`C1.${i}`, 220, 50 + i * 14, 370), atom(`C2.${i}`, 390, 50 + i * 14, 540)]),
      ...[6, 7].flatMap((i) => [atom(`C0.${i}`, 50, 50 + i * 14, 200), atom(`C2.${i}`, 390, 50 + i * 14, 540)]),
    ];
    const order = readingOrder(atoms, 595).flat().map((a) => a.name);
    const column = order.map((n) => n.slice(0, 2));
    expect(column).toEqual([...Array(6).fill("C0"), ...Array(6).fill("C1"), ...Array(8).fill("C2")]);
  });

  test("an unruled table: rows further apart with the same columns stay one table; row labels wrapped around their values are one cell", () => {
    const row = (y: number, cells: string[]) => cells.map((c, i) => run(c, i ? 200 + i * 60 : 50, y));
    const lines = buildLines([
      ...row(100, ["Measure", "1997", "1998"]),
      ...row(112, ["Median income", "$49,497", "$51,295"]),
      // 3.2 em further down: the next group of rows.
      ...row(144, ["Income inequality", "0.4590", "0.4560"]),
      run("Between-state inequality", 50, 160),
      ...row(165, ["", "0.0628", "0.0636"]).slice(1),
      run("(Gini index)", 50, 170),
      run("Premature mortality (years of", 50, 182),
      ...row(187, ["", "7108.3", "6960.6"]).slice(1),
      run("life lost before age 75)", 50, 192),
    ]);
    expect(unruledTables(lines).map((t) => t.rows)).toEqual([
      [
        ["Measure", "1997", "1998"],
        ["Median income", "$49,497", "$51,295"],
        ["Income inequality", "0.4590", "0.4560"],
        ["Between-state inequality (Gini index)", "0.0628", "0.0636"],
        ["Premature mortality (years of life lost before age 75)", "7108.3", "6960.6"],
      ],
    ]);
  });

  test("lines of body text beside a column of smaller footnote text are not a table", () => {
    const lines = buildLines(
      [0, 1, 2].flatMap((i) => [run("had a severe disability", 50, 100 + i * 12), run("are based on a sample", 220, 100 + i * 12, { size: 7 }), run("of daily living", 390, 100 + i * 12)]),
    );
    expect(unruledTables(lines)).toEqual([]);
  });

  test("a page laid out from runs: bold body-size line is a heading, numbered Korean heading too", () => {
    const runs = [
      run("Overview", 50, 50, { bold: true }),
      run("The first paragraph has enough words to read as prose on its line.", 50, 64),
      run("1 들어가며", 50, 90),
      run("Another paragraph follows the numbered heading in plain text.", 50, 104),
    ];
    const elements = layoutPage(runs, 595, 842, style);
    expect(elements.map((e) => [e.type, e.content.slice(0, 12)])).toEqual([
      ["heading", "Overview"],
      ["paragraph", "The first pa"],
      ["heading", "1 들어가며"],
      ["paragraph", "Another para"],
    ]);
  });

  test("headings against lists: an italic lettered title over its paragraph, a numbered title wrapped and centred; a bold lead-in is a paragraph", () => {
    const prose = "the text of the paragraph goes on for the whole width of the column here";
    const runs = [
      run("The section before ends on this line of its own text.", 50, 40),
      run("A. Discrete-time Baseband Transmitter", 50, 52, { italic: true }),
      run("We encode complex block samples in the usual way, and", 60, 64),
      run(prose, 50, 76),
      run("2. Clones of analytic and ordered maps, counting superpositions", 50, 110),
      run("Banach's claim", 165, 124),
      run("Keywords.", 50, 160, { bold: true }),
      run("heat kernel, manifolds", 100, 160),
    ];
    const elements = layoutPage(runs, 595, 842, style);
    expect(elements.map((e) => [e.type, e.content.slice(0, 12)])).toEqual([
      ["paragraph", "The section "],
      ["heading", "A. Discrete-"],
      ["paragraph", "We encode co"],
      ["heading", "2. Clones of"],
      ["paragraph", "Keywords. he"],
    ]);
  });

  test("a diagram in parts joined by their small labels, with its thumbnails, is one figure; a heading beside it stays text", () => {
    // Two columns of boxes 24 pt apart, each with size labels at its right (6 pt type), small images on top.
    const boxes = [80, 150].flatMap((x) => [0, 1, 2, 3, 4, 5].map((i) => ({ x0: x, x1: x + 45, y0: 100 + i * 20, y1: 112 + i * 20 })));
    const labels = [80, 150].flatMap((x) => [0, 1, 2, 3, 4, 5].map((i) => run("17×30", x + 48, 108 + i * 20, { size: 6, x1: x + 66 })));
    const thumbnails = [80, 150].map((x) => ({ x0: x, x1: x + 44, y0: 70, y1: 94 }));
    const body = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => run("Body text of the page runs along here at its usual size.", 300, 100 + i * 12));
    const heading = run("B. Dataset", 80, 240, { size: 10 });
    // A caption in small type right under the boxes: not a label.
    const caption = [run("Fig. 3.", 80, 220, { size: 6 }), run("Three instances", 105, 220, { size: 6 })];
    const figures = findFigures(thumbnails, boxes, [], [], [...labels, ...body, heading, ...caption], { width: 595, height: 842 });
    expect(figures.map((f) => f.rect)).toEqual([{ x0: 80, y0: 70, x1: 216, y1: 212 }]);
    expect(figures[0]!.runs.length).toBe(12);
  });

  test("rows of sentences between rules under a 'Table 4:' caption are a one-column table; without the caption they are text", () => {
    const rules = [100, 140, 180, 220].map((y) => ({ x0: 50, x1: 300, y0: y, y1: y }));
    const sentence = (y: number, label: string) => [run(`${label}: the summary begins with a pronoun that`, 52, y), run("refers to a previous sentence it left out of it.", 52, y + 12)];
    const rows = [...sentence(115, "Reference"), ...sentence(155, "Without"), ...sentence(195, "With")];
    const [table] = booktabsTables([run("Table 4: Examples of extracted summary.", 90, 96), ...rows], rules, [], new Set());
    expect(table!.rows).toEqual([
      ["Reference: the summary begins with a pronoun that refers to a previous sentence it left out of it."],
      ["Without: the summary begins with a pronoun that refers to a previous sentence it left out of it."],
      ["With: the summary begins with a pronoun that refers to a previous sentence it left out of it."],
    ]);
    expect(table!.runs.size).toBe(6);
    expect(booktabsTables([run("Examples of extracted summary.", 90, 96), ...rows], rules, [], new Set())).toEqual([]);
  });

  test("rows of sentences whose words OCR set apart (justified lines of a scan) are still the captioned one-column table", () => {
    const rules = [100, 140, 180, 220].map((y) => ({ x0: 50, x1: 300, y0: y, y1: y }));
    // One run per word, 4 pt apart: each line reads as split into pieces, as a row of cells would.
    const words = (text: string, y: number) => {
      let x = 52;
      return text.split(" ").map((word) => {
        const piece = run(word, x, y);
        x = piece.x1 + 4;
        return piece;
      });
    };
    const sentence = (y: number, label: string) => [...words(`${label}: the summary begins with a pronoun`, y), ...words("that refers to a sentence it left out.", y + 12)];
    const rows = [...sentence(115, "Reference"), ...sentence(155, "Without"), ...sentence(195, "With")];
    const [table] = booktabsTables([run("Table 4: Examples of extracted summary.", 90, 96), ...rows], rules, [], new Set());
    expect(table!.rows).toEqual(
      ["Reference", "Without", "With"].map((label) => [`${label}: the summary begins with a pronoun that refers to a sentence it left out.`]),
    );
  });

  test("a display formula set on several baselines is one element, not a heading and loose pieces", () => {
    const runs = [
      run("In the case of a low density we want to save on the rare words, in this way.", 50, 80),
      run("∑k−1", 200, 104, { size: 7 }),
      run("# params. = α V = δE k V", 120, 114),
      run("j=0", 200, 122, { size: 7 }),
      run("0 B", 200, 131, { size: 7 }),
      run("and numerically solving for α the equation above, which we do here.", 50, 150),
    ];
    const elements = layoutPage(runs, 595, 842, style);
    expect(elements.map((e) => [e.type, e.content])).toEqual([
      ["paragraph", "In the case of a low density we want to save on the rare words, in this way."],
      ["paragraph", "∑k−1 # params. = α V = δE k V j=0 0 B"],
      ["paragraph", "and numerically solving for α the equation above, which we do here."],
    ]);
  });

  test("markers that make no list: sub-figure captions side by side, formula fragments", () => {
    const runs = [run("(a) Original image. (b) Modified image.", 80, 50), run("- ′ + −4", 80, 90)];
    expect(layoutPage(runs, 595, 842, style).map((e) => e.type)).toEqual(["paragraph", "paragraph"]);
  });
});

/** An RGBA raster, white, with black rectangles [x0, y0, x1, y1) painted on it. */
function raster(width: number, height: number, marks: [number, number, number, number][]) {
  const data = new Uint8ClampedArray(width * height * 4).fill(255);
  for (const [x0, y0, x1, y1] of marks) for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) data.fill(0, (y * width + x) * 4, (y * width + x) * 4 + 3);
  return { width, height, data };
}

describe("rules of a scanned page", () => {

  test("long thin runs of ink are rules, in points; words, short strokes and filled bars are not", () => {
    const word = Array.from({ length: 40 }, (_, i) => [20 + i * 12, 300, 28 + i * 12, 320] as [number, number, number, number]);
    const { horizontal, vertical } = rasterRules(
      raster(800, 600, [
        [100, 100, 700, 103], // a rule 3 px thick, 600 px long
        [100, 150, 180, 152], // too short (40 pt at 2 px a point)
        [100, 400, 700, 460], // a filled bar, 30 pt thick
        [50, 50, 52, 250], // a vertical rule, 100 pt
        ...word, // letters 8 px wide, 4 px apart: a line of text
      ]),
      2,
    );
    expect(horizontal).toEqual([{ x0: 50, y0: 50.75, x1: 350, y1: 50.75 }]);
    expect(vertical).toEqual([{ x0: 25.5, y0: 25, x1: 25.5, y1: 125 }]);
  });

  test("a vertical rule broken where a table's sections meet is one rule; stacked letters and pieces further apart are none", () => {
    // 2 px a point: three 27 pt pieces 2.5 pt apart (a fully ruled table's sections), each under the 30 pt minimum.
    const sections = [0, 1, 2].map((i) => [100, 100 + i * 59, 102, 154 + i * 59] as [number, number, number, number]);
    // Ten 7 pt strokes 4 pt apart ("l" or "1" in consecutive lines); three 27 pt pieces 4 pt apart.
    const letters = Array.from({ length: 10 }, (_, i) => [300, 100 + i * 22, 302, 114 + i * 22] as [number, number, number, number]);
    const apart = [0, 1, 2].map((i) => [500, 100 + i * 62, 502, 154 + i * 62] as [number, number, number, number]);
    const { vertical } = rasterRules(raster(700, 400, [...sections, ...letters, ...apart]), 2);
    expect(vertical).toEqual([{ x0: 50.5, y0: 50, x1: 50.5, y1: 136 }]);
  });

  test("a frayed rule (gaps of a pixel or two) is one rule", () => {
    const dashes = Array.from({ length: 30 }, (_, i) => [100 + i * 20, 100, 118 + i * 20, 102] as [number, number, number, number]);
    const { horizontal } = rasterRules(raster(800, 300, dashes), 2);
    expect(horizontal).toEqual([{ x0: 50, y0: 50.5, x1: 349, y1: 50.5 }]);
  });

  test("a scanned grid whose columns stand closer than a word gap: the drawn rules make it a table", async () => {
    // The page: 595 x 396 pt, drawn at 200 dpi for OCR. Grid lines at these fractions of the page.
    const xs = [0.1, 0.4, 0.6, 0.9];
    const ys = [0.2, 0.3, 0.4, 0.5];
    const [w, h] = [1654, 1100];
    const lines = [
      ...xs.map((x) => `<line x1="${x * w}" y1="${ys[0]! * h}" x2="${x * w}" y2="${ys.at(-1)! * h}" stroke="black" stroke-width="3"/>`),
      ...ys.map((y) => `<line x1="${xs[0]! * w}" y1="${y * h}" x2="${xs.at(-1)! * w}" y2="${y * h}" stroke="black" stroke-width="3"/>`),
    ];
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect width="100%" height="100%" fill="white"/>${lines.join("")}</svg>`;
    const pdf = await PDFDocument.create();
    pdf.addPage([595, 396]).drawImage(await pdf.embedPng(await sharp(Buffer.from(svg)).png().toBuffer()), { x: 0, y: 0, width: 595, height: 396 });
    // Each cell's text fills its cell up to 0.005 of the page from the rule: the next cell's text starts ~6 pt on, under a word gap at this size.
    const rows = [
      ["Vessel name", "Tonnes", "Destination port"],
      ["Northern Light", "12,400", "Rotterdam Europoort"],
      ["Sea Harvest II", "9,950", "Hamburg Waltershof"],
    ];
    const word = (text: string, x: number, y: number, width: number) => ({ text, bounding_box: { x_min: x, y_min: y, x_max: x + width, y_max: y + 0.04 } });
    const regions = rows.map((cells, r) => {
      const y = ys[r]! + 0.03;
      const words = cells.flatMap((cell, c) => {
        const parts = cell.split(" ");
        const span = (xs[c + 1]! - xs[c]! - 0.01) / parts.length;
        return parts.map((p, i) => word(p, xs[c]! + 0.005 + i * span, y, span - 0.008));
      });
      return { text: cells.join(" "), bounding_box: { x_min: words[0]!.bounding_box.x_min, y_min: y, x_max: words.at(-1)!.bounding_box.x_max, y_max: y + 0.04 }, words };
    });
    const fake: OcrLike = { recognize: async () => ({ text: "", regions }) };
    const page = (await readDocument(await pdf.save(), "pdf", { ocr: fake })).pages[0]!;
    expect(page.elements.map((e) => e.type)).toEqual(["table"]);
    expect(page.elements[0]!.content).toBe(["| Vessel name | Tonnes | Destination port |", "|---|---|---|", "| Northern Light | 12,400 | Rotterdam Europoort |", "| Sea Harvest II | 9,950 | Hamburg Waltershof |"].join("\n"));
    expect(page.elements[0]!.metadata).toMatchObject({ ruled: true, ocr: true });
    const box = page.elements[0]!.bounding_box;
    expect([box.x, box.y, box.x + box.w, box.y + box.h].map((v) => Math.round(v * 100) / 100)).toEqual([0.1, 0.2, 0.9, 0.5]);
  });

  test("an OCR line whose words stand on two rows (OCR merged two lines of small print) is read as two lines", async () => {
    const word = (text: string, x: number, y: number) => ({ text, bounding_box: { x_min: x, y_min: y, x_max: x + 0.085, y_max: y + 0.03 } });
    // One line as OCR gave it: two lines' words, the second line's a line lower and a third of a word to the right.
    const upper = ["alpha", "beta", "gamma", "delta", "epsilon"].map((t, i) => word(t, 0.1 + i * 0.1, 0.3));
    const lower = ["one", "two", "three", "four", "five"].map((t, i) => word(t, 0.13 + i * 0.1, 0.34));
    const merged = { text: "", bounding_box: { x_min: 0.1, y_min: 0.3, x_max: 0.61, y_max: 0.37 }, words: [...upper, ...lower] };
    const fake: OcrLike = { recognize: async () => ({ text: "", regions: [merged] }) };
    const page = (await readDocument(await scannedPdf(), "pdf", { ocr: fake })).pages[0]!;
    expect(page.text.split("\n").filter(Boolean)).toEqual(["alpha beta gamma delta epsilon", "one two three four five"]);
  });
});

describe("pictures of a scanned page", () => {
  /** An RGBA raster, white, with grey or black rectangles painted on it. */
  const raster = (width: number, height: number, marks: [number, number, number, number, number][]) => {
    const data = new Uint8ClampedArray(width * height * 4).fill(255);
    for (const [x0, y0, x1, y1, grey] of marks) for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) data.fill(grey, (y * width + x) * 4, (y * width + x) * 4 + 3);
    return { width, height, data };
  };

  test("ink outside OCR's lines and rules comes out as shapes; a photo fills its box, specks are dropped", () => {
    // Scale 2 px a point: a 100 x 60 pt photo, a line of text, a rule, a speck.
    const grid = inkGrid(
      raster(600, 400, [
        [100, 100, 300, 220, 90], // photo at (50, 50)-(150, 110) pt
        [100, 300, 500, 320, 0], // a line of text at y 150-160 pt (OCR read it)
        [100, 360, 500, 362, 0], // a rule at y 180 pt
        [560, 20, 562, 22, 0], // a speck
      ]),
      2,
    );
    const shapes = inkShapes(grid, [{ x0: 50, y0: 150, x1: 250, y1: 160 }], [{ x0: 50, y0: 180.5, x1: 250, y1: 180.5 }]);
    expect(shapes).toEqual([{ x0: 48, y0: 48, x1: 150, y1: 111, fill: 1 }]);
  });

  test("rules inside a picture are its edges, not a table's; rules elsewhere stay", () => {
    const photo = { x0: 48, y0: 48, x1: 150, y1: 111, fill: 0.9 };
    const drawing = { x0: 200, y0: 48, x1: 300, y1: 111, fill: 0.1 };
    const inside = { x0: 60, y0: 80, x1: 140, y1: 80 };
    const table = { x0: 40, y0: 150, x1: 400, y1: 150 };
    const inDrawing = { x0: 210, y0: 80, x1: 290, y1: 80 };
    const marks = scanMarks([photo, drawing], { horizontal: [inside, table, inDrawing], vertical: [] });
    expect(marks.horizontal).toEqual([table, inDrawing]);
    expect(marks.shapes).toEqual([photo, drawing].map(({ x0, y0, x1, y1 }) => ({ x0, y0, x1, y1 })));
  });

  test("a scanned page's photo is a figure, with its caption after it, the text around it paragraphs", async () => {
    const [w, h] = [1654, 1100]; // 595 x 396 pt at 200 dpi
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect width="100%" height="100%" fill="white"/>
      <rect x="${0.3 * w}" y="${0.3 * h}" width="${0.4 * w}" height="${0.35 * h}" fill="#5a6e3c"/><circle cx="${0.5 * w}" cy="${0.45 * h}" r="${0.08 * h}" fill="#e8d070"/></svg>`;
    const pdf = await PDFDocument.create();
    pdf.addPage([595, 396]).drawImage(await pdf.embedPng(await sharp(Buffer.from(svg)).png().toBuffer()), { x: 0, y: 0, width: 595, height: 396 });
    const line = (text: string, y: number, x0 = 0.1) => {
      const words = text.split(" ");
      const step = 0.8 / words.length;
      const boxes = words.map((t, i) => ({ text: t, bounding_box: { x_min: x0 + i * step, y_min: y, x_max: x0 + i * step + step * 0.8, y_max: y + 0.03 } }));
      return { text, bounding_box: { x_min: x0, y_min: y, x_max: boxes.at(-1)!.bounding_box.x_max, y_max: y + 0.03 }, words: boxes };
    };
    const fake: OcrLike = {
      recognize: async () => ({
        text: "",
        regions: [line("The survey team photographed the north field before the harvest began this year", 0.15), line("Figure 1. The north field in June", 0.68, 0.3)],
      }),
    };
    const page = (await readDocument(await pdf.save(), "pdf", { ocr: fake })).pages[0]!;
    expect(page.elements.map((e) => e.type)).toEqual(["paragraph", "figure", "paragraph"]);
    const figure = page.elements[1]!;
    const b = figure.bounding_box;
    expect([b.x, b.y, b.x + b.w, b.y + b.h].map((v) => Math.round(v * 50) / 50)).toEqual([0.3, 0.3, 0.7, 0.66]);
    expect(figure.metadata).toMatchObject({ ocr: true, caption: "Figure 1. The north field in June" });
  });

  test("a drawing box holding a line of ten words is prose on a shaded box, also when the words come one by one", () => {
    const runs = "the crew logged every delivery at the north gate before noon".split(" ").map((text, i) => ({ text, x0: 110 + i * 30, x1: 135 + i * 30, baseline: 150, size: 10 }));
    const box = { x0: 100, y0: 100, x1: 480, y1: 200 };
    expect(findFigures([], [box], [], [], runs, { width: 595, height: 842 })).toEqual([]);
    expect(findFigures([], [box], [], [], runs.slice(0, 4), { width: 595, height: 842 })).toHaveLength(1);
  });

  test("a row of a diagram's labels side by side is no prose: the diagram stays a figure", () => {
    // Three boxes' labels and their sizes across one row, as OCR gives them word by word.
    const words = "2x2 Max-pooling 8x15 2048 2x2 Max-pooling 17x30 1024 2x2 Max-pooling 17x30 1024".split(" ");
    const runs = words.map((text, i) => ({ text, x0: 110 + i * 30, x1: 135 + i * 30, baseline: 150, size: 10 }));
    const box = { x0: 100, y0: 100, x1: 480, y1: 200 };
    expect(findFigures([], [box], [], [], runs, { width: 595, height: 842 })).toHaveLength(1);
    // Prose words far apart on one baseline (two columns' lines) are two stretches, neither of ten words.
    const apart = "the crew logged every delivery then the clerk filed each report".split(" ").map((text, i) => ({ text, x0: 110 + i * 22 + (i >= 5 ? 60 : 0), x1: 130 + i * 22 + (i >= 5 ? 60 : 0), baseline: 150, size: 10 }));
    expect(findFigures([], [box], [], [], apart, { width: 595, height: 842 })).toHaveLength(1);
  });
});

/** A line as OCR gives it: its words 0.012 of the page wide a letter, 0.01 apart, from `x0`. */
function ocrLine(text: string, y: number, { x0 = 0.1, height = 0.03 } = {}) {
  let x = x0;
  const words = text.split(" ").map((t) => {
    const box = { text: t, bounding_box: { x_min: x, y_min: y, x_max: x + t.length * 0.012, y_max: y + height } };
    x += t.length * 0.012 + 0.01;
    return box;
  });
  return { text, bounding_box: { x_min: x0, y_min: y, x_max: x - 0.01, y_max: y + height }, words };
}

describe("headings of a scanned page", () => {
  test("a large line reads as a heading when it reads like a title, not when it is run-on words, a formula or a sentence's tail", async () => {
    const line = (text: string, y: number, h: number) => ocrLine(text, y, { height: h });
    const body = (y: number) => line("Their tools were checked and logged before the shift", y, 0.03);
    const fake: OcrLike = {
      recognize: async () => ({
        text: "",
        regions: [
          line("Results of the Field Trial", 0.05, 0.05),
          body(0.12),
          body(0.16),
          line("thecoherencerewardachieveshigher scores", 0.25, 0.05),
          body(0.32),
          body(0.36),
          line("{Y} = {X1 * X2} + 4", 0.45, 0.05),
          body(0.52),
          body(0.56),
          line("and the crew went home", 0.65, 0.05),
          body(0.72),
          body(0.76),
        ],
      }),
    };
    const page = (await readDocument(await scannedPdf(), "pdf", { ocr: fake })).pages[0]!;
    const headings = page.elements.filter((e) => e.type === "heading").map((e) => e.content);
    expect(headings).toEqual(["Results of the Field Trial"]);
    expect(page.text).toContain("thecoherencerewardachieveshigher scores");
  });
});

describe("lists of a scanned page", () => {
  test("bullets OCR misread as a symbol or a small letter still start list items; a line starting with a real word does not", async () => {
    const line = (text: string, y: number, x0 = 0.15) => ocrLine(text, y, { x0 });
    const fake: OcrLike = {
      recognize: async () => ({
        text: "",
        regions: [
          line("The crew checked three things before the shift began today", 0.1, 0.1),
          line("° Pumps were primed and tested", 0.16),
          line("e Valves were closed on the north line", 0.22),
          line("« Gauges were read and logged", 0.28),
          line("o Seals were replaced where worn", 0.34),
          line("e mail was sent to the office after the checks", 0.42, 0.1),
        ],
      }),
    };
    const page = (await readDocument(await scannedPdf(), "pdf", { ocr: fake })).pages[0]!;
    const list = page.elements.find((e) => e.type === "list");
    expect(list?.content).toBe(["- Pumps were primed and tested", "- Valves were closed on the north line", "- Gauges were read and logged", "- Seals were replaced where worn"].join("\n"));
    expect(page.text).toContain("e mail was sent");
  });
});

describe("bullets OCR left out of a scanned line", () => {
  // A line whose first word starts at x = 200 px, baseline at y = 100, set at 20 px to the em.
  const line = { x: 200, baseline: 100, em: 20 };
  const ring: [number, number, number, number][] = [[180, 88, 189, 90], [180, 96, 189, 98], [180, 88, 182, 98], [187, 88, 189, 98]];

  test("a solid dot at the maths axis, half an em before the word, is a bullet", () => {
    expect(bulletBefore(raster(400, 200, [[180, 90, 188, 98]]), line)).toEqual({ x0: 180, y0: 90, x1: 188, y1: 98 });
  });

  test("a full stop on the baseline, a hollow letter, two marks, and ink cut by the window's edge are not", () => {
    for (const marks of [
      [[184, 97, 187, 100]], // a full stop: small, on the baseline
      ring, // an "o": its box mostly paper
      [[170, 90, 176, 98], [180, 90, 188, 98]], // two marks: letters of a word in the column before
      [[150, 90, 188, 98]], // a bar reaching past where a bullet would be looked for
      [[180, 70, 188, 78]], // a dot a line above
    ] as [number, number, number, number][][]) {
      expect(bulletBefore(raster(400, 200, marks), line)).toBeNull();
    }
  });
});
