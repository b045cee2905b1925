/**
 * PDF extraction with pdf.js. Per page: the text layer's items (with their fonts' weight and
 * style) become lines, blocks and typed elements (page-layout.ts); the operator list gives what
 * else the page draws (layout/graphics.ts): ruling lines become tables (layout/ruled-tables.ts for
 * grids, layout/booktabs.ts for horizontal rules only),
 * images and vector drawings figures (layout/figures.ts). A page with (almost) no text layer but
 * an image on it is a scan: it is rendered at 200 dpi and read by OCR. Heading levels, the body
 * size and running headers and footers (layout/furniture.ts) are judged over the whole document,
 * so pages are laid out after all of them were read. Text printed sideways (a landscape table on a
 * portrait page) is laid out in its own upright frame (layout/orientation.ts), a whole page or a
 * region of it set apart from text of the other direction (layout/text-regions.ts); boxes come out
 * on the page as shown.
 *
 * Images over DOCUMENT_LIMITS.pdf.maxImagePixels are never decoded (pdf.js leaves them out of the
 * page); a file whose only content is such an image fails with that reason.
 *
 * Speed: pdf.js is imported once, pages are never rendered unless they need OCR, and the next page
 * is read while the current one is laid out. The operator list (fonts' names, rules, drawings,
 * images) costs about as much again as the text layer: it is read when the file holds images at
 * all, or the page's text shows structure it could serve (mayHoldStructure), or the page has no
 * text, or it holds right-to-left text (whose ligature glyphs only the operator list shows); plain
 * running text goes without.
 */
import { createRequire } from "node:module";
import { completedPage, documentText, failedPage, interrupted } from "./reader-common.ts";
import { bodySize, boldBody, buildLines, headingSizes, layoutPage, mayHoldStructure, monoIsCode, type LayoutStyle, type Line, type Run } from "./page-layout.ts";
import { findFigures } from "./layout/figures.ts";
import { findFurniture } from "./layout/furniture.ts";
import { fixLigatures, ligatureFixes } from "./layout/bidi.ts";
import { fontInfo, pageGraphics, type FontInfo, type Matrix, type PageGraphics, type Segment } from "./layout/graphics.ts";
import { ruledTables } from "./layout/ruled-tables.ts";
import { booktabsTables } from "./layout/booktabs.ts";
import { boxToPage, frameOf, frameViewport, graphicsBetween, pageTurn, rectBetween, type Frame } from "./layout/orientation.ts";
import { readsApart, textRegions } from "./layout/text-regions.ts";
import { centreInside, type Rect } from "./layout/geometry.ts";
import { confirmedBy, type ModelRegion } from "./layout/model-regions.ts";
import type { LayoutRegionFinder } from "./layout-model/layout-detector.ts";
import type { Segmentation } from "../ocr/ocr.ts";
import type { OcrBox, ReadOptions } from "./read-document.ts";
import { inkGrid, inkShapes, SCAN_DRAWING_GAP, scanMarks, type InkGrid } from "./layout/raster-marks.ts";
import { bulletBefore } from "./layout/raster-bullets.ts";
import { rasterRules, type Raster } from "./layout/raster-rules.ts";
import { DOCUMENT_LIMITS } from "./document-limits.ts";
import { loadPdfJs, openPdf, type PdfDocument, type PdfJs, type PdfPage } from "./pdfjs.ts";
import { DocumentReadError, type DocElement, type DocPage, type DocumentContent } from "./types.ts";
import { errorMessage } from "../errors.ts";

/** Pages with fewer characters than this in their text layer are scans when an image is painted on them. */
const SCANNED_MAX_CHARS = 10;
/** An image this big (share of the page) on a page without text makes it a scan. */
const MIN_SCAN_AREA = 0.02;
/** Scans are rendered at 200 dpi, capped so huge pages stay within memory. */
const OCR_SCALE = 200 / 72;
const OCR_MAX_SIDE = DOCUMENT_LIMITS.pdf.ocrRenderMaxSide;
/** pdf.js skips (never decodes) images of more pixels than this. */
const MAX_IMAGE_PIXELS = DOCUMENT_LIMITS.pdf.maxImagePixels;
/** Pages read concurrently: pdf.js interleaves their parsing, which hides its message-passing latency. */
const READ_AHEAD = 2;

interface ImageObjects {
  /** The file holds image XObjects at all. */
  any: boolean;
  /** The largest one over MAX_IMAGE_PIXELS, by the /Width and /Height of its dictionary. */
  oversize: { width: number; height: number } | null;
}

/**
 * The file's image XObjects: their dictionaries can never sit in compressed object streams (they
 * are streams), so "/Image" followed by a delimiter shows in the raw bytes (/ImageB, /ImageMask...
 * do not count), with /Width and /Height nearby when they are direct numbers. Inline images hide
 * in compressed content streams; pages without text are checked anyway.
 */
function imageObjects(bytes: Uint8Array): ImageObjects {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const found: ImageObjects = { any: false, oversize: null };
  for (let at = buf.indexOf("/Image"); at >= 0; at = buf.indexOf("/Image", at + 6)) {
    const next = buf[at + 6];
    if (next !== undefined && /[A-Za-z0-9_.#-]/.test(String.fromCharCode(next))) continue;
    found.any = true;
    // The dictionary runs from its object header to its stream keyword.
    const from = Math.max(0, buf.lastIndexOf("obj", at), at - 4096);
    const stream = buf.indexOf("stream", at);
    const dict = buf.toString("latin1", from, stream < 0 ? Math.min(buf.length, at + 4096) : Math.min(stream, at + 4096));
    const width = Number(/\/Width\s+(\d+)/.exec(dict)?.[1] ?? 0);
    const height = Number(/\/Height\s+(\d+)/.exec(dict)?.[1] ?? 0);
    if (width * height > MAX_IMAGE_PIXELS && width * height > (found.oversize ? found.oversize.width * found.oversize.height : 0)) found.oversize = { width, height };
  }
  return found;
}

interface TextItemLike {
  str: string;
  transform: number[];
  width: number;
  height: number;
  fontName: string;
  dir?: string;
}

/** Symbol fonts whose glyphs pdf.js reads as letters ("q" for a box in ZapfDingbats, "o" in Wingdings). */
const DINGBATS = /dingbat|wingding|webding/i;
/** ZapfDingbats' and Wingdings' box glyphs (checkboxes) and ticks; other single glyphs are bullets. */
function dingbat(font: string, text: string): string {
  if (/zapf|dingbat/i.test(font)) return /^[n-r]$/.test(text) ? "☐" : /^[34]$/.test(text) ? "✓" : "•";
  return /^[oqp¨]$/.test(text) ? "☐" : text === "þ" ? "☑" : text === "ý" ? "☒" : "•";
}

const apply = (m: Matrix, x: number, y: number): [number, number] => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];

/** Text items → runs in the page's top-left coordinates (points at scale 1). */
function runsOf(items: TextItemLike[], viewport: Matrix, styles: Record<string, { fontFamily?: string; ascent?: number; descent?: number }>, fonts: Map<string, FontInfo>, ligatures: Map<string, string> = new Map()): Run[] {
  const runs: Run[] = [];
  for (const item of items) {
    if (!item.str.trim()) continue;
    const t = item.transform;
    const size = Math.hypot(t[2]!, t[3]!) || item.height || 10;
    // The text direction in PDF space, so rotated pages read upright in the viewport.
    const len = Math.hypot(t[0]!, t[1]!) || 1;
    const [x0, baseline] = apply(viewport, t[4]!, t[5]!);
    const [x1] = apply(viewport, t[4]! + (t[0]! / len) * item.width, t[5]! + (t[1]! / len) * item.width);
    const style = styles[item.fontName];
    const font = fonts.get(item.fontName);
    // pdf.js reports 0 for fonts it knows no metrics of; keep the defaults then.
    const ascent = style?.ascent && style.ascent > 0.3 && style.ascent < 1.3 ? style.ascent : undefined;
    const descent = style?.descent && style.descent < 0 && style.descent > -0.6 ? -style.descent : undefined;
    const text = font && DINGBATS.test(font.name) && item.str.trim().length === 1 ? dingbat(font.name, item.str.trim()) : item.dir === "rtl" ? fixLigatures(item.str, ligatures) : item.str;
    runs.push({
      text,
      x0: Math.min(x0, x1),
      x1: Math.max(x0, x1, Math.min(x0, x1) + 0.01),
      baseline,
      size,
      ascent,
      descent,
      mono: style?.fontFamily === "monospace",
      bold: font?.bold ?? false,
      italic: font?.italic ?? false,
      rtl: item.dir === "rtl",
    });
  }
  return runs;
}

/** The page's fonts by pdf.js's id, once the operator list has loaded them into commonObjs. */
function pageFonts(page: PdfPage, ids: Iterable<string>): Map<string, FontInfo> {
  const fonts = new Map<string, FontInfo>();
  for (const id of ids) {
    try {
      if (!page.commonObjs.has(id)) continue;
      const f = page.commonObjs.get(id) as { name?: string; bold?: boolean; black?: boolean; italic?: boolean } | null;
      if (f) fonts.set(id, fontInfo(f.name ?? "", f));
    } catch {
      // A font pdf.js failed to load: no weight or style known.
    }
  }
  return fonts;
}

const NO_GRAPHICS: PageGraphics = { images: [], horizontal: [], vertical: [], shapes: [] };

interface Operators {
  graphics: PageGraphics;
  /** Right-to-left words whose ligature glyphs pdf.js's text layer reverses → the words read right (layout/bidi.ts). */
  ligatures: Map<string, string>;
}

const NO_OPERATORS: Operators = { graphics: NO_GRAPHICS, ligatures: new Map() };

/** A TJ adjustment this wide (thousandths of an em) is a word space: pdf.js's text layer puts a space there too. */
const TJ_WORD_SPACE = 100;

/**
 * The glyphs of each text-showing operation that holds a glyph of several characters (a ligature),
 * as drawn; pdf.js's normalization applied as its text layer does, so the words compare.
 */
function shownLigatures(pdfjs: PdfJs, list: { fnArray: number[]; argsArray: unknown[] }): string[][] {
  const shown: string[][] = [];
  list.fnArray.forEach((fn, i) => {
    if (fn !== pdfjs.OPS.showText) return;
    const glyphs = (list.argsArray[i] as unknown[] | null)?.[0];
    if (!Array.isArray(glyphs) || !glyphs.some((g) => typeof g?.unicode === "string" && g.unicode.length > 1)) return;
    shown.push(glyphs.map((g) => (typeof g === "number" ? (Math.abs(g) >= TJ_WORD_SPACE ? " " : "") : pdfjs.normalizeUnicode(typeof g?.unicode === "string" ? g.unicode : ""))).filter((g) => g !== ""));
  });
  return shown;
}

/** What the page draws (rules, images, shapes) from its operator list, and its ligature glyphs; nothing when pdf.js cannot list it. */
async function readOperators(pdfjs: PdfJs, page: PdfPage, viewport: Matrix, size: { width: number; height: number }, rtl: boolean): Promise<Operators> {
  try {
    const list = await page.getOperatorList({ annotationMode: pdfjs.AnnotationMode.DISABLE });
    return { graphics: pageGraphics(pdfjs.OPS, list, viewport, size), ligatures: rtl ? ligatureFixes(shownLigatures(pdfjs, list)) : new Map() };
  } catch {
    return NO_OPERATORS;
  }
}

interface CanvasLike {
  width: number;
  height: number;
  encode(format: "png"): Promise<Buffer>;
  getContext(kind: "2d"): unknown;
}

interface CanvasTarget {
  canvas: CanvasLike;
  context: unknown;
}

interface CanvasFactory {
  create(width: number, height: number): CanvasTarget;
  destroy(target: CanvasTarget): void;
}

/**
 * The canvas factory pdf.js renders with in Node, or else one over the @napi-rs/canvas that
 * pdf.js itself resolves (its own nested copy when it has one): canvases and Path2D objects from
 * two copies of the package do not mix.
 */
export function canvasFactory(doc: PdfDocument): CanvasFactory {
  const own = (doc as unknown as { canvasFactory?: CanvasFactory }).canvasFactory;
  if (own && typeof own.create === "function") return own;
  const fromPdfJs = createRequire(createRequire(import.meta.url).resolve("pdfjs-dist/package.json"));
  const { createCanvas } = fromPdfJs("@napi-rs/canvas") as { createCanvas(w: number, h: number): CanvasLike };
  return {
    create: (width, height) => {
      const canvas = createCanvas(width, height);
      return { canvas, context: canvas.getContext("2d") };
    },
    destroy: (target) => {
      target.canvas.width = 0;
      target.canvas.height = 0;
    },
  };
}

/** Draws the page at `scale` on a white background; `encode` gets the canvas before it is freed. */
async function renderPage<T>(doc: PdfDocument, page: PdfPage, scale: number, encode: (canvas: CanvasLike, raster: Raster) => Promise<T>): Promise<T> {
  const viewport = page.getViewport({ scale });
  const factory = canvasFactory(doc);
  const [width, height] = [Math.max(1, Math.ceil(viewport.width)), Math.max(1, Math.ceil(viewport.height))];
  const target = factory.create(width, height);
  try {
    await page.render({ canvas: target.canvas as never, canvasContext: target.context as never, viewport, background: "white" }).promise;
    const pixels = (target.context as { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } }).getImageData(0, 0, width, height);
    return await encode(target.canvas, { width, height, data: pixels.data });
  } finally {
    factory.destroy(target);
  }
}

/** Renders the page at 200 dpi (capped for huge pages) on a white background: a PNG for OCR, and the rules and ink its pixels show (in page units). */
async function renderScan(doc: PdfDocument, page: PdfPage): Promise<{ png: Buffer; raster: Raster; scale: number; rules: { horizontal: Segment[]; vertical: Segment[] }; ink: InkGrid }> {
  const base = page.getViewport({ scale: 1 });
  const scale = Math.min(OCR_SCALE, OCR_MAX_SIDE / Math.max(base.width, base.height));
  return renderPage(doc, page, scale, async (canvas, raster) => ({ png: await canvas.encode("png"), raster, scale, rules: rasterRules(raster, scale), ink: inkGrid(raster, scale) }));
}

/**
 * The regions the layout model finds on the page (ReadOptions.layout), in page units: on the
 * scan's own rendering, or on the page drawn at the model's input size. None when the model
 * fails on the page: the rules then lay it out alone.
 */
async function modelRegions(finder: LayoutRegionFinder, doc: PdfDocument, page: PdfPage, width: number, height: number, raster?: Raster): Promise<ModelRegion[] | undefined> {
  try {
    const image = raster ?? (await renderPage(doc, page, finder.imageSide / Math.max(width, height), async (_, r) => ({ ...r, data: new Uint8ClampedArray(r.data) })));
    return (await finder.regions(image)).map((d) => ({ kind: d.kind, score: d.score, x0: d.x0 * width, x1: d.x1 * width, y0: d.y0 * height, y1: d.y1 * height }));
  } catch {
    return undefined;
  }
}

/**
 * Cap height and x-height are shorter than the em: a line's box height is its tallest ascent
 * (capitals/digits/ascenders ~0.73 em, else x-height ~0.5 em) plus its deepest descent (~0.22 em),
 * so "SCANNED LOG" and "pump gasket" of one font size get one size estimate.
 */
function emOf(text: string, boxHeight: number): number {
  const ascent = /[\p{Lu}\p{N}bdfhklt]/u.test(text) ? 0.73 : 0.5;
  return boxHeight / (ascent + descentOf(text));
}

/** How far a text's letters reach below the baseline, in ems. */
const descentOf = (text: string) => (/[gjpqy,;()]/.test(text) ? 0.22 : 0);

/** The median height of OCR words' boxes (page fractions). */
function medianHeight(words: OcrWordBox[]): number {
  const heights = words.map((w) => w.bounding_box.y_max - w.bounding_box.y_min).sort((a, b) => a - b);
  return heights[Math.floor(heights.length / 2)]!;
}

/** OCR of a rendered scan → runs in page units (one per word, sized and placed on its line's baseline). */
/**
 * How OCR segments a scan of this resolution (ocr.ts, Segmentation). Tesseract finds a page's
 * columns from the shapes of its letters, which a coarse scan blurs together: PubLayNet's 72 dpi
 * page images lay out at element F1 0.44 read as one block against 0.34 as pages, while
 * DocBank's 200 dpi ones read better as pages (words F1 0.934 against 0.915; table tokens 0.74
 * against 0.67, word order 0.80 against 0.78). Unknown resolutions (inline images) count as fine.
 */
function segmentationFor(dpi: number): Segmentation {
  return dpi < MIN_PAGE_SEGMENTATION_DPI ? "block" : "page";
}

const MIN_PAGE_SEGMENTATION_DPI = 150;

async function ocrRead(doc: PdfDocument, page: PdfPage, width: number, height: number, segmentation: Segmentation, options: ReadOptions): Promise<{ runs: Run[]; graphics: PageGraphics; detected?: ModelRegion[] }> {
  const { png, raster, scale, rules, ink } = await renderScan(doc, page);
  interrupted(options.signal);
  const [result, detected] = await Promise.all([options.ocr.recognize(png, { segmentation }), options.layout ? modelRegions(options.layout, doc, page, width, height, raster) : undefined]);
  const runs = result.regions.flatMap((r) => {
    const words = bulletRead((r.words ?? []).filter((w) => w.text));
    // Word by word when OCR says where the words are, so wide gaps (a scanned table's columns) split the line into cells.
    const rows = words.length > 1 ? ocrRows(words) : [[{ text: r.text, bounding_box: r.bounding_box }]];
    return rows.flatMap((row) => withBullet(lineRuns(row, width, height), raster, scale));
  });
  // What OCR read as lines of words is text; the rest of the ink (pictures, charts) is shapes. A
  // line's box reaches a line's height past its ends: words OCR could not read on it (italics,
  // symbols, small print at its ends) are text too, not marks of a drawing.
  const lineBoxes = result.regions.map(({ bounding_box: b }) => {
    const reach = (b.y_max - b.y_min) * height;
    return { x0: b.x_min * width - reach, y0: b.y_min * height, x1: b.x_max * width + reach, y1: b.y_max * height };
  });
  const shapes = inkShapes(ink, lineBoxes, [...rules.horizontal, ...rules.vertical]);
  return { runs: evenSizes(runs), graphics: scanMarks(shapes, rules), detected };
}

/**
 * Sizes read from ink boxes vary by 10-20 % between lines of one paragraph (a line of small
 * letters, a word misread taller): sizes within SIZE_NOISE of the page's body size (its
 * characters' median) are taken as the body size, so noise neither breaks blocks nor makes a
 * table's cells look set in different type. Measured on PubLayNet's pages read as scans
 * (bench:digitization, before rules and pictures were read from the pixels): element F1 0.27
 * without, 0.26 at 15 %, 0.31 at 25 %.
 */
const SIZE_NOISE = 0.25;

function evenSizes(runs: Run[]): Run[] {
  const bySize = [...runs].sort((a, b) => a.size - b.size);
  const half = bySize.reduce((n, r) => n + r.text.length, 0) / 2;
  let seen = 0;
  const body = bySize.find((r) => (seen += r.text.length) >= half)?.size;
  if (!body) return runs;
  return runs.map((r) => (Math.abs(r.size - body) <= body * SIZE_NOISE ? { ...r, size: body } : r));
}

type OcrWordBox = { text: string; bounding_box: OcrBox };

/** A row's runs with the bullet OCR left out in front of them (layout/raster-bullets.ts), when the pixels show one. */
function withBullet(row: Run[], raster: Raster, scale: number): Run[] {
  const first = row[0];
  if (!first || first.text === "•") return row;
  const bullet = bulletBefore(raster, { x: first.x0 * scale, baseline: first.baseline * scale, em: first.size * scale });
  return bullet ? [{ ...first, text: "•", x0: bullet.x0 / scale, x1: bullet.x1 / scale }, ...row] : row;
}

/**
 * Tesseract reads a bullet "•" as a symbol or a small letter ("°", "«", "©", "e", "eo"): a line
 * of three words or more that starts with one, then a capital, a digit or a bracket, starts with a
 * bullet (its list is then found as a list).
 */
function bulletRead(words: OcrWordBox[]): OcrWordBox[] {
  if (words.length < 3 || !BULLET_MISREAD.test(words[0]!.text) || !/^[\p{Lu}\p{N}([]/u.test(words[1]!.text)) return words;
  return [{ ...words[0]!, text: "•" }, ...words.slice(1)];
}

const BULLET_MISREAD = /^(?:[°º«»©®¢•·*]|e|eo|o)$/;

/**
 * A line of OCR split into the rows its words stand on. Tesseract sometimes reads two rows as one
 * line (two columns whose lines are offset by half a line, on scans of small print): its words
 * then sit at two heights, and one line's size and baseline would fit neither.
 */
function ocrRows(words: OcrWordBox[]): OcrWordBox[][] {
  const centre = (w: OcrWordBox) => (w.bounding_box.y_min + w.bounding_box.y_max) / 2;
  const wordHeight = medianHeight(words);
  const byCentre = [...words].sort((a, b) => centre(a) - centre(b));
  const rows: OcrWordBox[][] = [[byCentre[0]!]];
  for (let i = 1; i < byCentre.length; i++) {
    // Within a row, centres differ by ascenders and descenders (a fraction of a word's height).
    if (centre(byCentre[i]!) - centre(byCentre[i - 1]!) > wordHeight * 0.6) rows.push([]);
    rows.at(-1)!.push(byCentre[i]!);
  }
  return rows.map((row) => row.sort((a, b) => a.bounding_box.x_min - b.bounding_box.x_min));
}

/** Runs of one row of OCR words, all on the row's baseline and of the row's size. */
function lineRuns(words: OcrWordBox[], width: number, height: number): Run[] {
  const text = words.map((w) => w.text).join(" ");
  // A word box over 1.5 times the row's median height reaches into the next row (OCR misreading
  // two rows as one word): it does not set the row's extent.
  const median = medianHeight(words);
  const sized = words.filter((w) => w.bounding_box.y_max - w.bounding_box.y_min <= median * 1.5);
  const top = Math.min(...sized.map((w) => w.bounding_box.y_min)) * height;
  const bottom = Math.max(...sized.map((w) => w.bounding_box.y_max)) * height;
  const size = Math.max(1, emOf(text, bottom - top));
  // The box is the ink: its bottom is the baseline unless letters descend below it.
  const descent = descentOf(text);
  const line = { baseline: bottom - size * descent, size, top, descent };
  return words.map((w) => ({ text: w.text, x0: w.bounding_box.x_min * width, x1: w.bounding_box.x_max * width, ...line }));
}

/** A scanned page whose rendering or OCR failed. */
class OcrPageError extends Error {}

interface PageRead {
  width: number;
  height: number;
  runs: Run[];
  lines: Line[];
  graphics: PageGraphics;
  /** Lines read by OCR: the page is a scan, laid out on its own (its sizes are not the text layer's). */
  ocr: boolean;
  /** The frame the page was laid out in (turned when its text is printed sideways); width and height are the frame's. */
  frame: Frame;
  /** Text of another direction set apart (layout/text-regions.ts), laid out in its own frame; its runs are not in `runs`. */
  regions: RegionRead[];
  /** What the layout model found on the page (page units), when one ran: upright pages without text set apart only. */
  detected?: ModelRegion[];
}

interface RegionRead {
  frame: Frame;
  runs: Run[];
  /** Where its text stands, in the page's frame (`PageRead.frame`) coordinates. */
  hulls: Rect[];
}

/** Whether the lines hold fewer than SCANNED_MAX_CHARS characters besides whitespace (counting stops there). */
function fewChars(lines: Line[]): boolean {
  let n = 0;
  const nonSpace = /\S/g;
  for (const line of lines) {
    nonSpace.lastIndex = 0;
    while (nonSpace.exec(line.text)) if (++n >= SCANNED_MAX_CHARS) return false;
  }
  return true;
}

async function readPage(pdfjs: PdfJs, doc: PdfDocument, n: number, withImages: boolean, options: ReadOptions): Promise<PageRead> {
  const page = await doc.getPage(n);
  try {
    const view = page.getViewport({ scale: 1 });
    const content = await page.getTextContent();
    const items = content.items.filter((i): i is (typeof content.items)[number] & TextItemLike => "str" in i);
    const styles = content.styles as Record<string, { fontFamily?: string; ascent?: number; descent?: number }>;
    const shown = view.transform as Matrix;
    // Text printed sideways is placed in its own upright frame (layout/orientation.ts): runs and
    // graphics alike, so lines, tables and rules line up as the reader of that text sees them.
    const frame = frameOf(pageTurn(items, shown), view.width, view.height);
    const viewport = frameViewport(frame, shown);
    const size = { width: frame.width, height: frame.height };
    // Text of another direction standing apart (a sideways table among upright text, an upright
    // header on a sideways page) gets a frame of its own; the rest reads in the page's.
    const regions = textRegions(items, shown, frame.turn).filter((region) => {
      if (frame.turn !== 0) return true;
      // On an upright page, sideways text goes apart only when it reads as lines or rows of its own.
      const regionFrame = frameOf(region.turn, view.width, view.height);
      return readsApart(buildLines(runsOf(items.filter((_, i) => region.items.has(i)), frameViewport(regionFrame, shown), styles, new Map())));
    });
    const apart = new Set(regions.flatMap((r) => [...r.items]));
    const own = apart.size ? items.filter((_, i) => !apart.has(i)) : items;
    let graphics = NO_GRAPHICS;
    // After the text: the operator list reuses the fonts the text layer loaded, and names them. It
    // costs as much again, so plain running text (no image in the file, no cells, captions or
    // short isolated lines that could be bold headings, no right-to-left text whose ligatures the
    // glyphs tell) goes without. When it is read anyway (images in the file, right-to-left text),
    // the lines are built once, with the fonts, not first without them to look for structure.
    const rtl = items.some((i) => i.dir === "rtl");
    const listed = withImages || rtl;
    let runs = listed ? [] : runsOf(own, viewport, styles, new Map());
    let lines = listed ? [] : buildLines(runs);
    let fonts = new Map<string, FontInfo>();
    let ligatures = new Map<string, string>();
    if (listed || regions.length || mayHoldStructure(lines)) {
      const operators = await readOperators(pdfjs, page, viewport, size, rtl);
      graphics = operators.graphics;
      fonts = pageFonts(page, new Set(items.map((i) => i.fontName)));
      ligatures = operators.ligatures;
      runs = runsOf(own, viewport, styles, fonts, ligatures);
      lines = buildLines(runs);
    }
    const pageFrame = frameOf(0, view.width, view.height);
    const regionReads = regions.map((region): RegionRead => {
      const regionFrame = frameOf(region.turn, view.width, view.height);
      const regionItems = items.filter((_, i) => region.items.has(i));
      return { frame: regionFrame, runs: runsOf(regionItems, frameViewport(regionFrame, shown), styles, fonts, ligatures), hulls: region.hulls.map((h) => rectBetween(pageFrame, frame, h)) };
    });
    const few = fewChars(lines);
    if (few && graphics === NO_GRAPHICS) graphics = (await readOperators(pdfjs, page, viewport, size, false)).graphics;
    const scans = graphics.images.filter((r) => (r.x1 - r.x0) * (r.y1 - r.y0) >= size.width * size.height * MIN_SCAN_AREA);
    if (few && scans.length) {
      interrupted(options.signal);
      const dpi = Math.max(0, ...scans.map((r) => r.dpi ?? Infinity));
      const scanned = await ocrRead(doc, page, view.width, view.height, segmentationFor(dpi), options).catch((err: unknown) => {
        if (options.signal?.aborted) throw err;
        const reason = errorMessage(err);
        throw new OcrPageError(/^OCR\b/i.test(reason) ? reason : `OCR failed: ${reason}`, { cause: err });
      });
      // OCR reads the page as rendered, upright or not.
      return { width: view.width, height: view.height, runs: scanned.runs, lines: buildLines(scanned.runs), graphics: scanned.graphics, ocr: true, frame: frameOf(0, view.width, view.height), regions: [], detected: scanned.detected };
    }
    const detected = options.layout && frame.turn === 0 && !regionReads.length && lines.length ? await modelRegions(options.layout, doc, page, view.width, view.height) : undefined;
    return { ...size, runs, lines, graphics, ocr: false, frame, regions: regionReads, detected };
  } finally {
    page.cleanup();
  }
}

/** A PDF whose only content is an image too large to decode fails with that reason, not as an empty document. */
function oversizeError({ width, height }: { width: number; height: number }): DocumentReadError {
  const megapixels = (n: number) => `${Math.round(n / 1e6).toLocaleString("en-US")} megapixels`;
  return new DocumentReadError(
    `the PDF was not read: it holds an image of ${width.toLocaleString("en-US")} x ${height.toLocaleString("en-US")} pixels (${megapixels(width * height)}), ` +
      `more than the ${megapixels(MAX_IMAGE_PIXELS)} Mediabox decodes, and no text besides`,
  );
}

function openError(err: unknown): DocumentReadError {
  const name = (err as { name?: string } | null)?.name;
  if (name === "PasswordException") return new DocumentReadError("the PDF is encrypted; remove the password and upload again");
  const reason = errorMessage(err);
  return new DocumentReadError(`the PDF could not be read (corrupt or not a PDF): ${reason}`);
}

export async function readPdf(bytes: Uint8Array, options: ReadOptions): Promise<DocumentContent> {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 1024));
  if (!head.includes("%PDF-")) throw new DocumentReadError("the file is not a PDF (no %PDF header)");
  const pdfjs = await loadPdfJs();
  const images = imageObjects(bytes);
  const { task, close } = await openPdf(bytes);
  try {
    let doc: PdfDocument;
    try {
      doc = await task.promise;
    } catch (err) {
      throw openError(err);
    }
    const total = Math.min(doc.numPages, Math.max(1, Math.floor(options.maxPages ?? DOCUMENT_LIMITS.maxPages)));
    // Reads one page; never rejects, so the page read ahead can fail on its own.
    const read = (n: number) => readPage(pdfjs, doc, n, images.any, options).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
    const reads: (PageRead | Error)[] = [];
    const ahead: Promise<PageRead | Error>[] = [];
    let requested = 0;
    for (let n = 1; n <= total; n++) {
      interrupted(options.signal);
      while (requested < total && ahead.length < READ_AHEAD) ahead.push(read(++requested));
      reads.push(await ahead.shift()!);
      options.onPage?.(n, total);
    }
    interrupted(options.signal);

    const textLines = reads.flatMap((r) => (r instanceof Error || r.ocr ? [] : r.lines));
    const body = bodySize(textLines);
    const style: LayoutStyle = { body, headingSizes: headingSizes(textLines, body, 1.2), headingRatio: 1.2, monoIsCode: monoIsCode(textLines), boldBody: boldBody(textLines) };
    const textPages = reads.filter((r): r is PageRead => !(r instanceof Error) && !r.ocr);
    const furniture = new Map(findFurniture(textPages).map((runs, i) => [textPages[i]!, runs]));
    const pages: DocPage[] = reads.map((r, i) => {
      if (r instanceof Error) return failedPage(i + 1, r, r instanceof OcrPageError);
      try {
        return completedPage(i + 1, pageAndRegions(r, style, furniture.get(r)), r.ocr);
      } catch (err) {
        return failedPage(i + 1, err, r.ocr);
      }
    });
    const text = documentText(pages);
    if (!text && images.oversize) throw oversizeError(images.oversize);
    const info = ((await doc.getMetadata().catch(() => null))?.info ?? {}) as { Title?: unknown; Author?: unknown };
    const str = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : null);
    const firstHeading = pages[0]?.elements.find((e) => e.type === "heading")?.content ?? null;
    return {
      document_type: "pdf",
      page_count: doc.numPages,
      pages,
      text,
      metadata: { title: str(info.Title) ?? firstHeading, author: str(info.Author) },
    };
  } finally {
    await close();
  }
}

/** Rules, images and drawings within this many points of a region's text are laid out with it, not with the page's. */
const REGION_SLACK = 15;

/**
 * The page's elements, and its regions' (text set apart in another direction), each laid out in
 * its own frame and boxed on the page as drawn. A region above the page's own text comes before
 * it (an upright header over a sideways table), any other after.
 */
function pageAndRegions(r: PageRead, style: LayoutStyle, furniture: Set<Run> | undefined): DocElement[] {
  const toPage = (frame: Frame) => (e: DocElement): DocElement => ({ ...e, bounding_box: boxToPage(frame, e.bounding_box) });
  if (!r.regions.length) return pageElements(r, style, furniture).map(toPage(r.frame));
  const hulls = r.regions.flatMap((g) => g.hulls);
  const inRegion = (s: Rect, among: Rect[]) => among.some((h) => centreInside(s, h, REGION_SLACK));
  const keep = (g: PageGraphics, among: Rect[], inside: boolean): PageGraphics => ({
    images: g.images.filter((s) => inRegion(s, among) === inside),
    horizontal: g.horizontal.filter((s) => inRegion(s, among) === inside),
    vertical: g.vertical.filter((s) => inRegion(s, among) === inside),
    shapes: g.shapes.filter((s) => inRegion(s, among) === inside),
  });
  const main = pageElements({ ...r, graphics: keep(r.graphics, hulls, false) }, style, furniture).map(toPage(r.frame));
  const before: DocElement[] = [];
  const after: DocElement[] = [];
  const top = r.lines.length ? Math.min(...main.map((e) => e.bounding_box.y)) : 1;
  for (const g of r.regions) {
    const graphics = graphicsBetween(r.frame, g.frame, keep(r.graphics, g.hulls, true));
    const read: PageRead = { width: g.frame.width, height: g.frame.height, runs: g.runs, lines: buildLines(g.runs), graphics, ocr: false, frame: g.frame, regions: [] };
    const elements = pageElements(read, style, undefined).map(toPage(g.frame));
    const above = Math.max(...elements.map((e) => e.bounding_box.y + e.bounding_box.h)) <= top;
    (above ? before : after).push(...elements);
  }
  return [...before, ...main, ...after];
}

/** A scan's sizes are estimates from OCR boxes: its own body size, and a higher bar for headings. */
function scanStyle(lines: Line[]): LayoutStyle {
  const body = bodySize(lines);
  return { body, headingSizes: headingSizes(lines, body, 1.4), headingRatio: 1.4, monoIsCode: false, ocr: true };
}

/** A page's elements: tables and figures from its rules, images and drawings (a scan's rules from its pixels), then its text laid out. */
function pageElements(r: PageRead, documentStyle: LayoutStyle, furniture: Set<Run> | undefined): DocElement[] {
  const style = r.ocr ? scanStyle(r.lines) : documentStyle;
  const text = furniture ? r.runs.filter((run) => !furniture.has(run)) : r.runs;
  const grids = ruledTables(text, r.graphics.horizontal, r.graphics.vertical);
  const tables = [...grids, ...booktabsTables(text, r.graphics.horizontal, grids.map((t) => t.rect), new Set(grids.flatMap((t) => [...t.runs])))];
  const inTables = new Set(tables.flatMap((t) => [...t.runs].map((i) => text[i]!)));
  const tableRects = tables.map((t) => t.rect);
  const outside = (s: { x0: number; y0: number; x1: number; y1: number }) => !tableRects.some((t) => s.x0 >= t.x0 - 3 && s.x1 <= t.x1 + 3 && s.y0 >= t.y0 - 3 && s.y1 <= t.y1 + 3);
  const rules = [...r.graphics.horizontal, ...r.graphics.vertical].filter(outside);
  const figures = findFigures(r.graphics.images, r.graphics.shapes, rules, tableRects, text.filter((run) => !inTables.has(run)), r, r.ocr ? SCAN_DRAWING_GAP : undefined);
  // Table run indexes refer to `text`; layoutPage takes the page's runs, so they are mapped back.
  const index = new Map(r.runs.map((run, i) => [run, i]));
  const mapped = tables.map((t) => ({ ...t, runs: new Set([...t.runs].map((i) => index.get(text[i]!)!)) }));
  const extra = r.ocr ? { ocr: true } : {};
  if (!r.detected) return layoutPage(r.runs, r.width, r.height, style, { tables: mapped, figures, furniture, lines: r.lines }, extra);
  // With a layout model, the rules' figures stand only where it saw a figure; tables drawn with
  // rules stand wherever they are (unruled tables are looked for in its table regions only).
  const regions = r.detected;
  return layoutPage(r.runs, r.width, r.height, style, { tables: mapped, figures: figures.filter((f) => confirmedBy(regions, "figure", f.rect)), furniture, lines: r.lines, regions }, extra);
}
