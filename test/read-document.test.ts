/**
 * Document extraction on real files built in the suite: a laid-out PDF, a scan read by the real
 * OCR engine, broken and encrypted PDFs, a DOCX, Markdown and plain text.
 */
import { afterAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { readDocument, type OcrLike } from "../src/documents/read-document.ts";
import { DocumentReadError, type DocElement, type DocumentContent } from "../src/documents/types.ts";
import { OcrEngine } from "../src/ocr/ocr.ts";
import { zip } from "./support/fixtures.ts";
import {
  A4,
  COLUMN_TEXT,
  REPORT_FIGURE,
  REPORT_FINDINGS,
  REPORT_PARAGRAPHS,
  corruptPdf,
  encryptedPdf,
  mixedPdf,
  reportDocx,
  reportPdf,
  sampleMd,
  sampleTxt,
  SCAN_LINES,
  scanImage,
  scanPdfOf,
  scannedPdf,
  truncatedPdf,
  twoColumnPdf,
  SCAN_DIAGRAM_LABELS,
  SCAN_LEFT_COLUMN,
  SCAN_LIST_ITEMS,
  SCAN_RIGHT_COLUMN,
  scannedBulletList,
  scannedColumnsBesideDiagram,
} from "./support/documents.ts";

const engine = new OcrEngine();
afterAll(() => engine.close());

/** For documents that must not reach OCR. */
const noOcr: OcrLike = {
  recognize: () => Promise.reject(new Error("OCR should not run for this document")),
};

const utf8 = (s: string) => new TextEncoder().encode(s);
const ofType = (elements: DocElement[], type: DocElement["type"]) => elements.filter((e) => e.type === type);

function expectValidBoxes(doc: DocumentContent) {
  for (const page of doc.pages) {
    for (const e of page.elements) {
      const b = e.bounding_box;
      const ok = b.x >= 0 && b.y >= 0 && b.w > 0 && b.h > 0 && b.x + b.w <= 1.0001 && b.y + b.h <= 1.0001;
      expect(ok, `${page.page_number} ${e.type} ${JSON.stringify(b)}`).toBe(true);
    }
  }
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected the promise to reject");
}

describe("PDF with a text layer", () => {
  let doc: DocumentContent;
  const progress: [number, number][] = [];
  const bytes = reportPdf();

  test("reads both pages with their title and author", async () => {
    const input = await bytes;
    const before = input.byteLength;
    doc = await readDocument(input, "pdf", { ocr: noOcr, onPage: (done, total) => progress.push([done, total]) });
    expect(input.byteLength).toBe(before); // the caller's buffer is not handed to pdf.js
    expect(doc.document_type).toBe("pdf");
    expect(doc.page_count).toBe(2);
    expect(doc.pages.map((p) => [p.page_number, p.status, p.error_message, p.ocr])).toEqual([
      [1, "completed", null, false],
      [2, "completed", null, false],
    ]);
    expect(doc.metadata).toEqual({ title: "Annual Safety Report", author: "Quarry Safety Office" });
    expect(progress).toEqual([
      [1, 2],
      [2, 2],
    ]);
  });

  test("headings get levels by font size: the 24 pt title is 1, the 16 pt headings 2", () => {
    const headings = doc.pages.flatMap((p) => ofType(p.elements, "heading")).map((h) => [h.content, h.metadata?.level]);
    expect(headings).toEqual([
      ["Annual Safety Report", 1],
      ["1. Introduction", 2],
      ["2. Findings", 2],
    ]);
  });

  test("wrapped lines join into paragraphs, in reading order", () => {
    const paragraphs = ofType(doc.pages[0]!.elements, "paragraph").map((p) => p.content);
    expect(paragraphs).toEqual(REPORT_PARAGRAPHS);
    expect(ofType(doc.pages[1]!.elements, "paragraph").map((p) => p.content)).toEqual([REPORT_FINDINGS]);
  });

  test("bulleted lines become one list, key-value lines one key_value element", () => {
    const [list, ...moreLists] = ofType(doc.pages[0]!.elements, "list");
    expect(moreLists).toEqual([]);
    expect(list!.content).toBe("- Inspect valves weekly\n- Replace worn conveyor belts\n- Log every pressure test");
    expect(list!.metadata).toMatchObject({ ordered: false, items: 3 });
    const [kv, ...moreKv] = ofType(doc.pages[0]!.elements, "key_value");
    expect(moreKv).toEqual([]);
    expect(kv!.content).toBe("Site: North Quarry\nInspector: J. Alvarez");
    expect(kv!.metadata).toMatchObject({ pairs: 2 });
  });

  test("text at fixed column positions becomes a Markdown table", () => {
    const [table, ...more] = ofType(doc.pages[0]!.elements, "table");
    expect(more).toEqual([]);
    expect(table!.content).toBe(["| Item | Count | Status |", "|---|---|---|", "| Pumps | 12 | OK |", "| Valves | 48 | Replaced |", "| Belts | 7 | OK |"].join("\n"));
    expect(table!.metadata).toMatchObject({ rows: 4, columns: 3 });
  });

  test("the embedded picture is a figure where it was drawn", () => {
    const [figure, ...more] = ofType(doc.pages[0]!.elements, "figure");
    expect(more).toEqual([]);
    const expected = {
      x: REPORT_FIGURE.x / A4.width,
      y: (A4.height - REPORT_FIGURE.y - REPORT_FIGURE.height) / A4.height,
      w: REPORT_FIGURE.width / A4.width,
      h: REPORT_FIGURE.height / A4.height,
    };
    for (const key of ["x", "y", "w", "h"] as const) expect(Math.abs(figure!.bounding_box[key] - expected[key]), key).toBeLessThan(0.05);
    expect(figure!.content).toBe("");
    expect(ofType(doc.pages[1]!.elements, "figure")).toEqual([]);
  });

  test("boxes are normalized, elements run top to bottom, text boxes sit where the text is", () => {
    expectValidBoxes(doc);
    for (const page of doc.pages) {
      const ys = page.elements.map((e) => e.bounding_box.y);
      expect(ys).toEqual([...ys].sort((a, b) => a - b));
    }
    const title = doc.pages[0]!.elements[0]!;
    expect(title.content).toBe("Annual Safety Report");
    // Drawn at x = 50 pt with its baseline at 780 pt from the bottom.
    expect(title.bounding_box.x).toBeCloseTo(50 / A4.width, 2);
    expect(Math.abs(title.bounding_box.y + title.bounding_box.h - (A4.height - 780) / A4.height)).toBeLessThan(0.01);
    expect(title.metadata?.font_size).toBe(24);
  });

  test("page and document text hold everything in reading order", () => {
    expect(doc.pages[1]!.text).toContain("VX-4471");
    expect(doc.pages[0]!.text).not.toContain("VX-4471");
    const order = ["Annual Safety Report", "1. Introduction", REPORT_PARAGRAPHS[0]!, REPORT_PARAGRAPHS[1]!, "- Inspect valves weekly", "Site: North Quarry", "| Item | Count | Status |", "2. Findings", "valve VX-4471 was replaced"];
    const at = order.map((s) => doc.text.indexOf(s));
    for (const [i, position] of at.entries()) expect(position, order[i]).toBeGreaterThanOrEqual(0);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(doc.text).toBe(`${doc.pages[0]!.text}\n\n${doc.pages[1]!.text}`);
  });

  test("maxPages stops reading early but page_count reports the whole file", async () => {
    const input = Buffer.from(await reportPdf());
    const copy = Buffer.from(input);
    const short = await readDocument(input, "pdf", { ocr: noOcr, maxPages: 1 });
    expect(input.equals(copy)).toBe(true); // a Buffer (a view on a shared pool) is copied, not detached
    expect(short.page_count).toBe(2);
    expect(short.pages.map((p) => p.page_number)).toEqual([1]);
    expect(short.text).not.toContain("VX-4471");
  });

  test("an aborted signal stops extraction", async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await rejection(readDocument(await reportPdf(), "pdf", { ocr: noOcr, signal: controller.signal }));
    expect(err.message).toContain("interrupted");
    expect(err).not.toBeInstanceOf(DocumentReadError);
  });

  test("two columns of prose are read column by column, not as a table", async () => {
    const page = (await readDocument(await twoColumnPdf(), "pdf", { ocr: noOcr })).pages[0]!;
    expect(ofType(page.elements, "table")).toEqual([]);
    expect(page.elements[0]).toMatchObject({ type: "heading", content: "Two Column Bulletin", metadata: { level: 1 } });
    const left = page.text.indexOf("Left column prose");
    const leftEnd = page.text.lastIndexOf("rather than a table of short cells.");
    const right = page.text.indexOf("Right column prose");
    expect(left).toBeGreaterThan(0);
    expect(leftEnd).toBeLessThan(right);
    expect(page.text).toContain(`${COLUMN_TEXT.right} ${COLUMN_TEXT.right}`);
  });
});

describe("scanned PDF", () => {
  test("a page that is only an image is rendered and read by OCR", async () => {
    const doc = await readDocument(await scannedPdf(), "pdf", { ocr: engine });
    expect(doc.page_count).toBe(1);
    const page = doc.pages[0]!;
    expect([page.status, page.ocr, page.error_message]).toEqual(["completed", true, null]);
    expect(page.text.toUpperCase()).toContain("SCANNED MAINTENANCE LOG");
    expect(page.text).toContain("P-12");
    expect(doc.text).toBe(page.text);
    expect(page.elements.length).toBeGreaterThan(0);
    for (const e of page.elements) expect(e.metadata?.ocr).toBe(true);
    expectValidBoxes(doc);
    // The title line sits in the top quarter of the page, indented like the picture's text (x = 120 of 1654 px).
    const title = page.elements.find((e) => e.content.toUpperCase().includes("SCANNED MAINTENANCE LOG"))!;
    expect(title.bounding_box.y).toBeLessThan(0.25);
    expect(Math.abs(title.bounding_box.x - 120 / 1654)).toBeLessThan(0.03);
  }, 120_000);

  test("a scanned column beside a diagram is read line by line, with no marks of the drawing among its words", async () => {
    // Read as one block, OCR fits each row across both columns and reads the diagram's boxes and
    // arrows as letters ("i NB () i") on the column's lines: it must find the columns first.
    const page = (await readDocument(await scannedColumnsBesideDiagram(), "pdf", { ocr: engine })).pages[0]!;
    const paragraphs = page.elements.filter((e) => e.type === "paragraph").map((e) => e.content);
    expect(paragraphs).toContain(SCAN_LEFT_COLUMN.join(" "));
    expect(paragraphs).toContain(SCAN_RIGHT_COLUMN.join(" "));
    const drawn = new Set([...SCAN_LEFT_COLUMN, ...SCAN_RIGHT_COLUMN, ...SCAN_DIAGRAM_LABELS].flatMap((line) => line.split(" ")));
    expect(page.text.split(/\s+/).filter((word) => word && !drawn.has(word))).toEqual([]);
  }, 120_000);

  test("OCR segments a scan into columns and blocks from 150 dpi; a coarser scan is read as one block", async () => {
    const asked: (string | undefined)[] = [];
    const recording: OcrLike = {
      recognize: async (_image, options) => {
        asked.push(options?.segmentation);
        return { text: "", regions: [] };
      },
    };
    const scanAt = async (dpi: number) => scanPdfOf(await scanImage(SCAN_LINES, Math.round((595 * dpi) / 72), Math.round((396 * dpi) / 72)), [595, 396]);
    for (const dpi of [300, 200, 150, 100, 72]) await readDocument(await scanAt(dpi), "pdf", { ocr: recording });
    expect(asked).toEqual(["page", "page", "page", "block", "block"]);
  });

  test("a list whose bullets OCR drops as specks is still a list, between its paragraphs", async () => {
    const page = (await readDocument(await scannedBulletList(), "pdf", { ocr: engine })).pages[0]!;
    expect(page.elements.map((e) => e.type)).toEqual(["paragraph", "list", "paragraph"]);
    expect(page.elements[1]!.content).toBe(SCAN_LIST_ITEMS.map((item) => `- ${item}`).join("\n"));
  }, 120_000);

  test("OCR lines are laid out like text: headings, lists and key-value pairs", async () => {
    const seen: { width: number; height: number; format: string }[] = [];
    const line = (text: string, y: number, h = 0.02, x = 0.1) => ({ text, bounding_box: { x_min: x, y_min: y, x_max: x + 0.02 * text.length * (h / 0.02) * 0.5, y_max: y + h } });
    const fake: OcrLike = {
      recognize: async (image) => {
        const meta = await sharp(image).metadata();
        seen.push({ width: meta.width, height: meta.height, format: meta.format });
        return {
          text: "",
          regions: [
            line("Inspection Notes", 0.1, 0.05),
            line("Site: East Pit", 0.2),
            line("Crew: Team B", 0.23),
            line("• Check the pumps", 0.3),
            line("• Drain the sump", 0.33),
            line("The crew found the sump full after the storm and drained it before noon.", 0.42),
          ],
        };
      },
    };
    const page = (await readDocument(await scannedPdf(), "pdf", { ocr: fake })).pages[0]!;
    // Rendered at 200 dpi: 595 x 396 pt → about 1653 x 1100 px.
    expect(seen).toEqual([{ width: 1653, height: 1100, format: "png" }]);
    expect(page.elements.map((e) => [e.type, e.content])).toEqual([
      ["heading", "Inspection Notes"],
      ["key_value", "Site: East Pit\nCrew: Team B"],
      ["list", "- Check the pumps\n- Drain the sump"],
      ["paragraph", "The crew found the sump full after the storm and drained it before noon."],
    ]);
    expect(page.elements[0]!.bounding_box).toMatchObject({ x: 0.1, y: 0.1, h: 0.05 });
  });

  test("a page whose OCR fails is marked failed; the rest of the document is read", async () => {
    const failing: OcrLike = { recognize: () => Promise.reject(new Error("tesseract crashed")) };
    const doc = await readDocument(await mixedPdf(), "pdf", { ocr: failing });
    expect(doc.page_count).toBe(2);
    expect(doc.pages[0]).toMatchObject({ status: "completed", ocr: false, error_message: null });
    expect(doc.pages[0]!.text).toContain("Cover page with a real text layer.");
    expect(doc.pages[1]).toMatchObject({ page_number: 2, status: "failed", ocr: true, text: "", elements: [] });
    expect(doc.pages[1]!.error_message).toContain("tesseract crashed");
    expect(doc.text).toBe(doc.pages[0]!.text);
  });
});

describe("unreadable files fail the document with a message", () => {
  const cases: [string, () => Promise<Uint8Array> | Uint8Array, "pdf" | "docx" | "txt" | "md", RegExp][] = [
    ["corrupt PDF", corruptPdf, "pdf", /could not be read/],
    ["truncated PDF", truncatedPdf, "pdf", /could not be read/],
    ["encrypted PDF", encryptedPdf, "pdf", /^the PDF is encrypted; remove the password and upload again$/],
    ["text posing as a PDF", () => utf8("hello, I am not a PDF"), "pdf", /not a PDF/],
    ["empty PDF", () => new Uint8Array(0), "pdf", /empty/],
    ["empty DOCX", () => new Uint8Array(0), "docx", /empty/],
    ["empty text", () => new Uint8Array(0), "txt", /empty/],
    ["empty Markdown", () => new Uint8Array(0), "md", /empty/],
    ["DOCX that is not a ZIP", () => utf8("plain words, not a zip archive at all"), "docx", /not a DOCX/],
    ["ZIP that is not a DOCX", () => zip({ "hello.txt": "hi" }), "docx", /could not be read/],
    ["legacy .doc / protected DOCX", () => new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]), "docx", /password-protected DOCX or a legacy/],
    ["binary data as text", () => new Uint8Array(Array.from({ length: 400 }, (_, i) => i % 7)), "txt", /does not look like text/],
  ];
  for (const [name, make, type, message] of cases) {
    test(name, async () => {
      const err = await rejection(readDocument(await make(), type, { ocr: noOcr }));
      expect(err).toBeInstanceOf(DocumentReadError);
      expect(err.name).toBe("DocumentReadError");
      expect(err.message).toMatch(message);
    });
  }
});

describe("DOCX", () => {
  let doc: DocumentContent;
  test("one logical page of typed elements, title and author from the core properties", async () => {
    doc = await readDocument(Buffer.from(await reportDocx()), "docx", { ocr: noOcr });
    expect(doc.document_type).toBe("docx");
    expect(doc.page_count).toBe(1);
    expect(doc.pages[0]).toMatchObject({ page_number: 1, status: "completed", ocr: false, error_message: null });
    expect(doc.metadata).toEqual({ title: "Quarterly Operations Review", author: "Site Engineering" });
  });

  test("Title, Heading 1 and Heading 2 become heading levels 1, 2 and 3", () => {
    const headings = ofType(doc.pages[0]!.elements, "heading").map((h) => [h.content, h.metadata?.level]);
    expect(headings).toEqual([
      ["Quarterly Operations Review", 1],
      ["Summary", 2],
      ["Maintenance", 3],
      ["Next steps", 3],
    ]);
  });

  test("lists, key-value paragraphs, tables and pictures", () => {
    const elements = doc.pages[0]!.elements;
    expect(elements.map((e) => e.type)).toEqual(["heading", "heading", "paragraph", "heading", "list", "heading", "list", "key_value", "table", "figure"]);
    const [bullets, steps] = ofType(elements, "list");
    expect(bullets!.content).toBe("- Gearbox G-220 rebuilt\n- Screens re-tensioned\n- Dust filters changed");
    expect(bullets!.metadata).toMatchObject({ ordered: false, items: 3 });
    expect(steps!.content).toBe("1. Order spare bearings\n2. Schedule the audit");
    expect(steps!.metadata).toMatchObject({ ordered: true, items: 2 });
    expect(ofType(elements, "key_value")[0]).toMatchObject({ content: "Owner: Site Engineering\nReview date: 30 June", metadata: { pairs: 2 } });
    expect(ofType(elements, "table")[0]).toMatchObject({
      content: "| Asset | Hours | State |\n|---|---|---|\n| Crusher | 410 | Running |\n| Conveyor | 388 | Running |",
      metadata: { rows: 3, columns: 3 },
    });
    expect(ofType(elements, "figure")[0]!.content).toBe("Uptime chart");
    expect(ofType(elements, "paragraph")[0]!.content).toBe("The quarter closed with all crushers running and no lost-time incidents at either site.");
  });

  test("synthetic boxes: full width, stacked top to bottom", () => {
    expectValidBoxes(doc);
    let bottom = 0;
    for (const e of doc.pages[0]!.elements) {
      expect(e.bounding_box.x).toBe(0.05);
      expect(e.bounding_box.w).toBe(0.9);
      expect(e.bounding_box.y).toBeGreaterThanOrEqual(bottom - 0.0001);
      bottom = e.bounding_box.y + e.bounding_box.h;
    }
    expect(bottom).toBeLessThanOrEqual(0.9501);
  });
});

describe("Markdown", () => {
  let doc: DocumentContent;
  test("a form feed starts a second logical page", async () => {
    doc = await readDocument(utf8(sampleMd()), "md", { ocr: noOcr });
    expect(doc.page_count).toBe(2);
    expect(doc.pages.map((p) => p.page_number)).toEqual([1, 2]);
    expect(doc.metadata).toEqual({ title: "Pump Handbook", author: null });
    expectValidBoxes(doc);
  });

  test("ATX and setext headings with their levels", () => {
    expect(doc.pages.map((p) => ofType(p.elements, "heading").map((h) => [h.content, h.metadata?.level]))).toEqual([
      [
        ["Pump Handbook", 1],
        ["Checks", 2],
      ],
      [
        ["Appendix", 1],
        ["Setext Heading", 2],
      ],
    ]);
  });

  test("lists, a normalized pipe table, code, an image and readable inline text", () => {
    const elements = doc.pages[0]!.elements;
    expect(elements.map((e) => e.type)).toEqual(["heading", "paragraph", "heading", "list", "list", "table", "paragraph", "figure"]);
    const [bullets, steps] = ofType(elements, "list");
    expect(bullets!.content).toBe("- Listen for cavitation\n- Check the seal for drips and wipe it dry\n- Record the flow");
    expect(steps).toMatchObject({ content: "1. Stop the pump\n2. Close the valve", metadata: { ordered: true, items: 2 } });
    expect(ofType(elements, "table")[0]).toMatchObject({
      content: "| Pump | Flow | Head |\n|---|---|---|\n| P-12 | 40 m3/h | 30 m |\n| P-14 | 25 m3/h | 18 m |",
      metadata: { rows: 3, columns: 3 },
    });
    expect(elements[6]).toMatchObject({ type: "paragraph", content: "pumpctl reset --all", metadata: { code: true, language: "sh" } });
    expect(elements[7]).toMatchObject({ type: "figure", content: "Pump cross-section" });
    expect(elements[1]!.content).toBe("Centrifugal pumps move water out of the quarry floor after heavy rain. See the manual and run pumpctl status.");
    expect(ofType(doc.pages[1]!.elements, "key_value")[0]!.content).toBe("Serial: PX-99812\nRated: 40 m3/h");
  });
});

describe("plain text", () => {
  test("pages, caps and underlined headings, key-value lines, lists and a spaced table", async () => {
    const doc = await readDocument(utf8(sampleTxt()), "txt", { ocr: noOcr });
    expect(doc.page_count).toBe(2);
    expectValidBoxes(doc);
    expect(doc.pages[0]!.elements.map((e) => [e.type, e.content])).toEqual([
      ["heading", "SITE NOTES"],
      ["paragraph", "The haul road was graded on Monday and the dust suppression sprays were serviced."],
      ["key_value", "Shift lead: R. Okafor\nWeather: dry"],
      ["list", "- refuel the loader\n- inspect the tyres on both axles"],
    ]);
    expect(doc.pages[1]!.elements.map((e) => [e.type, e.content])).toEqual([
      ["heading", "Daily Checklist"],
      ["list", "1. Walk the bench edges\n2. Test the radios"],
      ["table", "| Truck | Loads | Tonnes |\n|---|---|---|\n| T-01 | 14 | 560 |\n| T-02 | 11 | 440 |"],
    ]);
    expect(doc.pages[1]!.elements[0]!.metadata?.level).toBe(1);
    expect(doc.text).toBe(`${doc.pages[0]!.text}\n\n${doc.pages[1]!.text}`);
    expect(doc.metadata.title).toBe("SITE NOTES");
  });

  test("Windows-1252 text and CRLF line ends are decoded", async () => {
    const bytes = new Uint8Array([...utf8("Caf"), 0xe9, ...utf8(" menu\r\n\r\nPrice: 3 "), 0x80]);
    const doc = await readDocument(bytes, "txt", { ocr: noOcr });
    expect(doc.pages[0]!.elements.map((e) => e.content)).toEqual(["Café menu", "Price: 3 €"]);
  });
});
