/**
 * PDF extraction with pdf.js: per page, text items become lines (by baseline) and lines become
 * blocks (by vertical gaps, font size and shape), typed as headings (font size well above the
 * document's body size; levels by the document's distinct heading sizes), tables (rows of cells
 * at aligned columns), lists, key-value blocks and paragraphs; images painted on the page become
 * figures. A page with no text layer is a scan: its largest image is read by OCR (pdf.js decodes
 * the image; no page rendering needed). Boxes are normalized to the page, origin top-left.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { classifyLines } from "./extract-text.ts";
import type { ExtractOptions } from "./extract.ts";
import { DocumentExtractionError, type BoundingBox, type DocElement, type DocPage, type ExtractedDocument } from "./types.ts";

type PdfJs = typeof import("pdfjs-dist/legacy/build/pdf.mjs");
type PdfPage = Awaited<ReturnType<Awaited<ReturnType<PdfJs["getDocument"]>["promise"]>["getPage"]>>;
type Matrix = [number, number, number, number, number, number];

let pdfjsLoad: Promise<PdfJs> | null = null;
const loadPdfJs = () => (pdfjsLoad ??= import("pdfjs-dist/legacy/build/pdf.mjs"));
const standardFonts = () => `${join(dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json")), "standard_fonts")}/`;

/** Pages with fewer characters than this in their text layer count as scanned. */
const SCANNED_MAX_CHARS = 10;

interface Run {
  text: string;
  x0: number;
  x1: number;
}

interface Line {
  cells: Run[];
  text: string;
  top: number;
  bottom: number;
  x0: number;
  x1: number;
  size: number;
  bold: boolean;
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;
const multiply = (m: Matrix, n: Matrix): Matrix => [
  m[0] * n[0] + m[2] * n[1], m[1] * n[0] + m[3] * n[1],
  m[0] * n[2] + m[2] * n[3], m[1] * n[2] + m[3] * n[3],
  m[0] * n[4] + m[2] * n[5] + m[4], m[1] * n[4] + m[3] * n[5] + m[5],
];
const apply = (m: Matrix, x: number, y: number): [number, number] => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];

function box(x0: number, top: number, x1: number, bottom: number, width: number, height: number): BoundingBox {
  const cx = (v: number, max: number) => Math.min(1, Math.max(0, v / max));
  const x = cx(Math.min(x0, x1), width);
  const y = cx(Math.min(top, bottom), height);
  return { x: round(x), y: round(y), w: round(cx(Math.max(x0, x1), width) - x), h: round(cx(Math.max(top, bottom), height) - y) };
}

/** Text items → lines in reading order, each split into cells at wide horizontal gaps. */
function buildLines(items: { str: string; transform: number[]; width: number; height: number; fontName: string }[], viewport: Matrix, styles: Record<string, { fontFamily?: string }>): Line[] {
  const glyphs = items
    .filter((i) => i.str.trim())
    .map((i) => {
      const t = i.transform as Matrix;
      const size = Math.hypot(t[2], t[3]) || i.height || 10;
      const [x0, baseline] = apply(viewport, t[4], t[5]);
      const [x1] = apply(viewport, t[4] + i.width, t[5]);
      const family = `${i.fontName} ${styles[i.fontName]?.fontFamily ?? ""}`;
      return { text: i.str, x0, x1, baseline, size, bold: /bold|black|heavy/i.test(family) };
    })
    .sort((a, b) => a.baseline - b.baseline || a.x0 - b.x0);

  const lines: Line[] = [];
  let group: typeof glyphs = [];
  const close = () => {
    if (!group.length) return;
    group.sort((a, b) => a.x0 - b.x0);
    const size = Math.max(...group.map((g) => g.size));
    const cells: Run[] = [];
    for (const g of group) {
      const last = cells.at(-1);
      const gap = last ? g.x0 - last.x1 : Infinity;
      if (last && gap < size * 1.5) {
        last.text += gap > size * 0.15 && !last.text.endsWith(" ") && !g.text.startsWith(" ") ? ` ${g.text}` : g.text;
        last.x1 = Math.max(last.x1, g.x1);
      } else cells.push({ text: g.text, x0: g.x0, x1: g.x1 });
    }
    for (const c of cells) c.text = c.text.replace(/\s+/g, " ").trim();
    const baseline = group[0]!.baseline;
    lines.push({
      cells,
      text: cells.map((c) => c.text).join(" "),
      top: baseline - size * 0.85,
      bottom: baseline + size * 0.25,
      x0: cells[0]!.x0,
      x1: Math.max(...cells.map((c) => c.x1)),
      size,
      bold: group.every((g) => g.bold),
    });
    group = [];
  };
  for (const g of glyphs) {
    if (group.length && Math.abs(g.baseline - group[0]!.baseline) > g.size * 0.35) close();
    group.push(g);
  }
  close();
  return lines;
}

function bodySize(lines: Line[]): number {
  const weight = new Map<number, number>();
  for (const l of lines) weight.set(Math.round(l.size * 2) / 2, (weight.get(Math.round(l.size * 2) / 2) ?? 0) + l.text.length);
  return [...weight.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 10;
}

const BULLET = /^\s*(?:[-*+•◦▪]|\d{1,3}[.)]|[a-z][.)])\s+/i;

/** Lines → blocks: a new block at a wide vertical gap, a change of size, shape (cells) or list-ness. */
function buildBlocks(lines: Line[], body: number): Line[][] {
  const blocks: Line[][] = [];
  let block: Line[] = [];
  for (const line of lines) {
    const prev = block.at(-1);
    const breaks =
      !prev ||
      line.top - prev.bottom > Math.max(prev.size, line.size) * 0.7 ||
      Math.abs(line.size - prev.size) > body * 0.15 ||
      (line.cells.length > 1) !== (prev.cells.length > 1) ||
      (BULLET.test(line.text) && !BULLET.test(prev.text)) ||
      (line.size >= body * 1.2 && prev.size >= body * 1.2);
    if (breaks && block.length) {
      blocks.push(block);
      block = [];
    }
    block.push(line);
  }
  if (block.length) blocks.push(block);
  return blocks;
}

function tableContent(block: Line[]): string {
  const columns = Math.max(...block.map((l) => l.cells.length));
  // Column starts from the widest row; other rows' cells go to the nearest column start.
  const starts = block.find((l) => l.cells.length === columns)!.cells.map((c) => c.x0);
  const rows = block.map((l) => {
    const cells = Array<string>(columns).fill("");
    for (const c of l.cells) {
      const col = starts.reduce((best, s, i) => (Math.abs(s - c.x0) < Math.abs(starts[best]! - c.x0) ? i : best), 0);
      cells[col] = cells[col] ? `${cells[col]} ${c.text}` : c.text;
    }
    return `| ${cells.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`;
  });
  return [rows[0]!, `|${" --- |".repeat(columns)}`, ...rows.slice(1)].join("\n");
}

const sizeKey = (size: number) => Math.round(size * 2) / 2;

function headingSizesOf(lines: Line[], body: number): number[] {
  return [...new Set(lines.filter((l) => l.size >= body * 1.2).map((l) => sizeKey(l.size)))].sort((a, b) => b - a);
}

function textElements(lines: Line[], width: number, height: number, body: number, headingSizes: number[]): DocElement[] {
  const blocks = buildBlocks(lines, body);
  return blocks.map((block) => {
    const first = block[0]!;
    const bounds = box(Math.min(...block.map((l) => l.x0)), first.top, Math.max(...block.map((l) => l.x1)), block.at(-1)!.bottom, width, height);
    const fontSize = Math.round(first.size * 10) / 10;
    if (first.size >= body * 1.2 || (first.bold && block.length === 1 && first.text.length <= 80 && !/[.:]$/.test(first.text) && first.cells.length === 1)) {
      const level = first.size >= body * 1.2 ? headingSizes.indexOf(sizeKey(first.size)) + 1 : headingSizes.length + 1;
      return { type: "heading", content: block.map((l) => l.text).join(" "), bounding_box: bounds, metadata: { level, font_size: fontSize } };
    }
    if (block.length >= 2 && block.every((l) => l.cells.length >= 2)) {
      return { type: "table", content: tableContent(block), bounding_box: bounds, metadata: { rows: block.length, columns: Math.max(...block.map((l) => l.cells.length)) } };
    }
    const draft = classifyLines(block.map((l) => l.text))!;
    if (draft.type === "paragraph") draft.content = block.map((l) => l.text).join("\n").replace(/(\w)-\n(\w)/g, "$1$2").replace(/\n/g, " ");
    return { ...draft, bounding_box: bounds, metadata: { ...draft.metadata, font_size: fontSize } };
  });
}

/** Images painted on the page, from the operator list with the current transformation matrix tracked. */
interface Figure {
  box: BoundingBox;
  /** pdf.js object id of the image (null for inline images). */
  objId: string | null;
}

async function figures(pdfjs: PdfJs, page: PdfPage, viewport: Matrix, width: number, height: number): Promise<Figure[]> {
  const { OPS } = pdfjs;
  const ops = await page.getOperatorList();
  const boxes: Figure[] = [];
  const stack: Matrix[] = [];
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  for (let i = 0; i < ops.fnArray.length; i++) {
    const fn = ops.fnArray[i];
    if (fn === OPS.save) stack.push(ctm);
    else if (fn === OPS.restore) ctm = stack.pop() ?? ctm;
    else if (fn === OPS.transform) ctm = multiply(ctm, ops.argsArray[i] as Matrix);
    else if (fn === OPS.paintImageXObject || fn === OPS.paintInlineImageXObject || fn === OPS.paintImageMaskXObject) {
      const corners = [[0, 0], [1, 0], [0, 1], [1, 1]].map(([x, y]) => apply(viewport, ...apply(ctm, x!, y!)));
      const xs = corners.map((c) => c[0]);
      const ys = corners.map((c) => c[1]);
      const b = box(Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys), width, height);
      if (b.w * b.h >= 0.02) boxes.push({ box: b, objId: fn === OPS.paintImageXObject ? String((ops.argsArray[i] as unknown[])[0]) : null });
    }
  }
  return boxes;
}

/** The decoded pixels of an image object as PNG (pdf.js gives 1-bit gray, RGB or RGBA rows). */
async function imagePng(page: PdfPage, objId: string): Promise<Buffer> {
  const sharp = (await import("sharp")).default;
  const image = await new Promise<{ width: number; height: number; kind: number; data: Uint8Array }>((resolve) => page.objs.get(objId, resolve));
  const { width, height, kind } = image;
  if (kind === 1) {
    // 1 bit per pixel, rows padded to whole bytes.
    const rowBytes = (width + 7) >> 3;
    const gray = new Uint8Array(width * height);
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) gray[y * width + x] = (image.data[y * rowBytes + (x >> 3)]! >> (7 - (x & 7))) & 1 ? 255 : 0;
    return sharp(gray, { raw: { width, height, channels: 1 } }).png().toBuffer();
  }
  return sharp(image.data, { raw: { width, height, channels: kind === 3 ? 4 : 3 } }).png().toBuffer();
}

/**
 * A scanned page: OCR of its largest image, with line boxes mapped from the image onto the page
 * and lines grouped into blocks at vertical gaps wider than a line.
 */
async function ocrPage(page: PdfPage, scan: Figure, options: ExtractOptions): Promise<DocElement[]> {
  if (!scan.objId) throw new Error("the page has no text layer and its image cannot be read for OCR");
  const result = await options.ocr.recognize(await imagePng(page, scan.objId));
  const b = scan.box;
  const toPage = (r: { bounding_box: { x_min: number; y_min: number; x_max: number; y_max: number } }) => ({
    x0: b.x + r.bounding_box.x_min * b.w,
    y0: b.y + r.bounding_box.y_min * b.h,
    x1: b.x + r.bounding_box.x_max * b.w,
    y1: b.y + r.bounding_box.y_max * b.h,
  });
  const elements: DocElement[] = [];
  let group: typeof result.regions = [];
  const flush = () => {
    if (!group.length) return;
    const draft = classifyLines(group.map((r) => r.text))!;
    const boxes = group.map(toPage);
    const bounds = box(Math.min(...boxes.map((q) => q.x0)), Math.min(...boxes.map((q) => q.y0)), Math.max(...boxes.map((q) => q.x1)), Math.max(...boxes.map((q) => q.y1)), 1, 1);
    elements.push({ ...draft, bounding_box: bounds, metadata: { ...draft.metadata, ocr: true } });
    group = [];
  };
  for (const region of result.regions) {
    const prev = group.at(-1);
    const lineHeight = prev ? prev.bounding_box.y_max - prev.bounding_box.y_min : 0;
    if (prev && region.bounding_box.y_min - prev.bounding_box.y_max > lineHeight * 0.9) flush();
    group.push(region);
  }
  flush();
  return elements;
}

interface PageLayout {
  width: number;
  height: number;
  lines: Line[];
  figures: Figure[];
  /** Elements already read by OCR (scanned pages). */
  ocrElements: DocElement[] | null;
}

async function readPage(pdfjs: PdfJs, page: PdfPage, options: ExtractOptions): Promise<PageLayout> {
  const view = page.getViewport({ scale: 1 });
  const viewport = view.transform as Matrix;
  const content = await page.getTextContent();
  const items = content.items.filter((i): i is (typeof content.items)[number] & { str: string; transform: number[]; width: number; height: number; fontName: string } => "str" in i);
  const lines = buildLines(items, viewport, content.styles as Record<string, { fontFamily?: string }>);
  const found = await figures(pdfjs, page, viewport, view.width, view.height);
  const chars = lines.reduce((n, l) => n + l.text.length, 0);
  const largest = [...found].sort((a, b) => b.box.w * b.box.h - a.box.w * a.box.h)[0];
  const ocrElements = chars < SCANNED_MAX_CHARS && largest ? await ocrPage(page, largest, options) : null;
  return { width: view.width, height: view.height, lines, figures: found, ocrElements };
}

/** Headings are judged against the whole document: its body size and its distinct heading sizes. */
function pageElements(layout: PageLayout, body: number, headingSizes: number[]): DocElement[] {
  if (layout.ocrElements) return layout.ocrElements;
  const elements = textElements(layout.lines, layout.width, layout.height, body, headingSizes);
  for (const f of layout.figures) elements.push({ type: "figure", content: "", bounding_box: f.box, metadata: {} });
  return elements.sort((a, b) => a.bounding_box.y - b.bounding_box.y || a.bounding_box.x - b.bounding_box.x);
}

export async function extractPdf(bytes: Uint8Array, options: ExtractOptions): Promise<ExtractedDocument> {
  const pdfjs = await loadPdfJs();
  const task = pdfjs.getDocument({
    data: new Uint8Array(bytes), // pdf.js transfers (detaches) the buffer it is given
    standardFontDataUrl: standardFonts(),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  });
  try {
    let doc;
    try {
      doc = await task.promise;
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name === "PasswordException") throw new DocumentExtractionError("the PDF is encrypted; remove the password and upload again");
      throw new DocumentExtractionError(`the PDF could not be read: ${err instanceof Error ? err.message : String(err)}`);
    }
    const total = Math.min(doc.numPages, options.maxPages ?? 2000);
    const layouts: (PageLayout | Error)[] = [];
    for (let n = 1; n <= total; n++) {
      if (options.signal?.aborted) throw new Error("extraction interrupted");
      try {
        const page = await doc.getPage(n);
        layouts.push(await readPage(pdfjs, page, options));
        page.cleanup();
      } catch (err) {
        layouts.push(err instanceof Error ? err : new Error(String(err)));
      }
      options.onPage?.(n, total);
    }
    const allLines = layouts.flatMap((l) => (l instanceof Error ? [] : l.lines));
    const body = bodySize(allLines);
    const headingSizes = headingSizesOf(allLines, body);
    const pages: DocPage[] = layouts.map((layout, i) => {
      if (layout instanceof Error) return { page_number: i + 1, status: "failed", error_message: layout.message, ocr: false, text: "", elements: [] };
      const elements = pageElements(layout, body, headingSizes);
      const text = elements.map((e) => e.content).filter(Boolean).join("\n\n");
      return { page_number: i + 1, status: "completed", error_message: null, ocr: layout.ocrElements !== null, text, elements };
    });
    const info = ((await doc.getMetadata().catch(() => null))?.info ?? {}) as { Title?: string; Author?: string };
    return {
      document_type: "pdf",
      page_count: doc.numPages,
      pages,
      text: pages.map((p) => p.text).filter(Boolean).join("\n\n"),
      metadata: { title: info.Title?.trim() || null, author: info.Author?.trim() || null },
    };
  } finally {
    await task.destroy();
  }
}
