/**
 * Page layout from positioned text: text runs (a PDF's text items, or OCR lines) → lines (by
 * baseline) → cells (split at wide horizontal gaps) → regions in reading order (layout/columns.ts)
 * → blocks (split at wide vertical gaps, font size and weight changes, breaks in alignment) →
 * typed elements. Tables drawn with rules (layout/ruled-tables.ts) and figures (images and vector
 * drawings) are taken out first and placed in the reading order as blocks; unruled tables
 * (layout/unruled-tables.ts) are found on the page's lines before the columns are cut. Running
 * headers and footers (layout/furniture.ts) are given here already found, and come last, marked.
 * Coordinates are page units with the origin top-left (a PDF viewport at scale 1); boxes come
 * out normalized 0-1.
 *
 * Heuristics:
 *  - body size: the most common font size, weighted by characters, over the whole document;
 *  - heading: a block whose font size is at least 1.2x the body size (level = rank of its size
 *    among the document's distinct heading sizes, largest = 1); a short block set wholly in bold;
 *    or a lone short line numbered like a section ("2.1 Scope", "3 Results", "IV. RESULTS",
 *    "1 들어가며") or in capitals: those are one level under the smallest large size, deeper
 *    by their numbering;
 *  - list: lines starting with a bullet (including checkbox and dingbat glyphs) or "1." "1)" "a)";
 *    indented lines continue the item; small-print blocks numbered "1)" at a page's foot are
 *    footnotes (paragraphs), a line of sub-figure captions "(a) ... (b) ..." and formula
 *    fragments with no word are paragraphs; a numbered line in italic or bold over a plain line,
 *    or a numbered title wrapped onto a centred second line, is a heading;
 *  - key_value: every line of the block shaped "Label: value", or form rows (a bold label or one
 *    ending in a colon, its value in a second column);
 *  - paragraph: lines of a block, split where a line is indented after one that ended a sentence
 *    short of the right edge;
 *  - code: lines in a monospace font (when the document's body is not monospace), kept line by line;
 *  - lists and code spaced apart by less than two lines stay one element (key-value lines by less
 *    than a blank line: a form's groups of fields stay apart); so do
 *    the pieces of a display formula (few characters, or symbols with no word) and what they touch;
 *  - captions ("Figure 2:", "Table 1.") next to a figure or table are named in its metadata.
 */
import { GLYPH_BULLET, isBullet, joinLines, keyValue, keyValueDraft, listDraft, round4, singleSpaced, splitBullet, tableDraft, type Draft } from "./reader-common.ts";
import type { BoundingBox, DocElement } from "./types.ts";
import { logicalText, rightToLeft } from "./layout/bidi.ts";
import { readingOrder, type Atom } from "./layout/columns.ts";
import type { Figure } from "./layout/figures.ts";
import { union, type Rect } from "./layout/geometry.ts";
import { boldHeading, looksLikeTitle, numberingDepth } from "./layout/headings.ts";
import type { FoundTable } from "./layout/ruled-tables.ts";
import { unruledTables } from "./layout/unruled-tables.ts";
import { confirmedBy, gridOfLines, regionAt, type ModelRegion } from "./layout/model-regions.ts";

/** A piece of text on one baseline: a PDF text item or an OCR line. */
export interface Run {
  text: string;
  x0: number;
  x1: number;
  baseline: number;
  size: number;
  /** Top of the run when known (OCR boxes); else from the ascent. */
  top?: number;
  /** Font ascent and descent as fractions of the size (pdf.js styles), when known. */
  ascent?: number;
  descent?: number;
  /** Set in a monospace font. */
  mono?: boolean;
  /** Set in a bold / italic face (from the font's name and flags). */
  bold?: boolean;
  italic?: boolean;
  /** Right-to-left text (pdf.js's direction of the item). */
  rtl?: boolean;
}

export interface Cell {
  text: string;
  x0: number;
  x1: number;
  runs: Run[];
}

export interface Line {
  cells: Cell[];
  text: string;
  baseline: number;
  top: number;
  bottom: number;
  x0: number;
  x1: number;
  size: number;
  /** Every run of the line is monospace. */
  mono: boolean;
  /** Most of the line's characters are bold. */
  bold: boolean;
}

export interface LayoutStyle {
  /** Body font size of the document. */
  body: number;
  /** Distinct heading sizes of the document (size keys), largest first. */
  headingSizes: number[];
  /** Heading threshold relative to the body size (1.2 for text layers; OCR sizes are noisier). */
  headingRatio: number;
  /** Monospace blocks are code (false when the document itself is set in a monospace font). */
  monoIsCode: boolean;
  /** Most of the document's body text is bold: bold says nothing then. */
  boldBody?: boolean;
  /** The text was read by OCR: its sizes come from ink boxes, and a misread line can look large. */
  ocr?: boolean;
}

/** What a page holds besides its text runs. */
export interface PageShapes {
  /** Ruled tables (layout/ruled-tables.ts); their runs are left out of the text. */
  tables?: FoundTable[];
  /** Figures: images and vector drawings (layout/figures.ts), with the runs inside drawings. */
  figures?: Figure[];
  /** Runs of running headers and footers (layout/furniture.ts). */
  furniture?: Set<Run>;
  /** The lines of all the runs, when already built (used when no run is taken out). */
  lines?: Line[];
  /**
   * Regions a layout model found (layout/model-regions.ts): each becomes one element of its kind
   * from the lines whose pieces lie in it, and unruled tables are looked for only inside its table
   * regions. Text outside every region is laid out by the rules alone.
   */
  regions?: ModelRegion[];
}

export const sizeKey = (size: number) => Math.round(size * 2) / 2;

/**
 * Gaps of at least this many ems split a line into cells (table columns, the two sides of a
 * gutter: IEEE's two columns are 1.2 em apart). Word spaces, even stretched, stay under it.
 */
const CELL_GAP = 0.9;

/** Runs → lines, top to bottom; each line's runs left to right, merged into cells at gaps under CELL_GAP em. */
export function buildLines(runs: Run[]): Line[] {
  const sorted = runs.filter((r) => r.text.trim()).sort((a, b) => a.baseline - b.baseline || a.x0 - b.x0);
  const lines: Line[] = [];
  let group: Run[] = [];
  const close = () => {
    if (group.length) lines.push(makeLine(group));
    group = [];
  };
  for (const run of sorted) {
    const first = group[0];
    // Within 0.45 em of the line's first baseline: superscripts and subscripts stay on their line.
    if (first && Math.abs(run.baseline - first.baseline) > Math.max(run.size, first.size) * 0.45) close();
    group.push(run);
  }
  close();
  return lines.map(visualToLogical);
}

function makeLine(group: Run[]): Line {
  group.sort((a, b) => a.x0 - b.x0);
  const size = Math.max(...group.map((g) => g.size));
  const cells: Cell[] = [];
  let previous: Run | null = null;
  for (const run of group) {
    // Fake bold: the same string drawn twice a hair apart.
    if (previous && previous.text === run.text && Math.abs(previous.x0 - run.x0) < run.size * 0.3) continue;
    const last = cells.at(-1);
    const gap = last ? run.x0 - last.x1 : Infinity;
    if (last && gap < size * CELL_GAP) {
      const space = gap > size * 0.15 && !/\s$/.test(last.text) && !/^\s/.test(run.text);
      last.text += space ? ` ${run.text}` : run.text;
      last.x1 = Math.max(last.x1, run.x1);
      last.runs.push(run);
    } else cells.push({ text: run.text, x0: run.x0, x1: run.x1, runs: [run] });
    previous = run;
  }
  // One pass each over cells and runs: this runs for every line of every page (its spreads and
  // maps were a tenth of a text PDF's layout time). The cells are this line's own: tidied in place.
  const kept: Cell[] = [];
  let x0 = Infinity;
  let x1 = -Infinity;
  for (const c of cells) {
    c.text = singleSpaced(c.text).trim();
    if (!c.text) continue;
    kept.push(c);
    x0 = Math.min(x0, c.x0);
    x1 = Math.max(x1, c.x1);
  }
  let baselines = 0;
  let top = Infinity;
  let bottom = -Infinity;
  let chars = 0;
  let boldChars = 0;
  for (const g of group) {
    baselines += g.baseline;
    top = Math.min(top, g.top ?? g.baseline - g.size * (g.ascent ?? 0.8));
    bottom = Math.max(bottom, g.baseline + g.size * Math.abs(g.descent ?? 0.22));
    chars += g.text.length;
    if (g.bold) boldChars += g.text.length;
  }
  return {
    cells: kept,
    text: kept.map((c) => c.text).join(" "),
    baseline: baselines / group.length,
    top,
    bottom,
    x0,
    x1,
    size,
    mono: group.every((g) => g.mono === true),
    bold: boldChars >= chars * 0.6,
  };
}

/** A line with right-to-left text reads in logical order (layout/bidi.ts): cells right to left, runs within a cell too. */
function visualToLogical(line: Line): Line {
  if (!line.cells.some((c) => c.runs.some((r) => r.rtl))) return line;
  const runs = line.cells.flatMap((c) => c.runs);
  if (!rightToLeft(runs.map((r) => r.text).join(" "))) return line;
  const cells = [...line.cells].reverse().map((c) => ({ ...c, text: logicalText(c.runs).replace(/\s+/g, " ").trim() }));
  return { ...line, cells, text: cells.map((c) => c.text).join(" ") };
}

/**
 * Whether a page's text may hold what the operator list tells (so it is worth reading): lines
 * split into cells (tables, columns, forms) or into pieces set apart a little (narrow table
 * columns), a caption, or a short line standing apart at about the page's usual size (a heading
 * only its bold face would tell).
 */
export function mayHoldStructure(lines: Line[]): boolean {
  if (!lines.length) return false;
  if (lines.some((l) => l.cells.length > 1 || /^(?:fig(?:ure)?|table|tab|chart|graph|abbildung|tabelle|exhibit)\.?\s*[\p{N}IVX]/iu.test(l.text))) return true;
  // Pieces of text 0.6 em or more apart inside one cell (pdf.js keeps them as separate items): columns closer than a cell gap, as in a table ruled only across.
  const narrow = (l: Line) => l.cells.some((c) => c.runs.some((r, i) => i > 0 && r.x0 - c.runs[i - 1]!.x1 >= l.size * 0.6));
  if (lines.filter(narrow).length >= 2) return true;
  const sizes = lines.map((l) => l.size).sort((a, b) => a - b);
  const usual = sizes[Math.floor(sizes.length / 2)]!;
  const widest = Math.max(...lines.map((l) => l.x1 - l.x0));
  return lines.some((l, i) => {
    if (Math.abs(l.size - usual) > usual * 0.15 || l.text.length > 100 || /[.,;:]$/.test(l.text) || l.x1 - l.x0 > widest * 0.7) return false;
    const prev = lines[i - 1];
    return !prev || l.baseline - prev.baseline > l.size * 1.6;
  });
}

/** The most common font size, weighted by characters (the mean of the sizes rounded into the winning half point). */
export function bodySize(lines: Line[]): number {
  const weight = new Map<number, { chars: number; sum: number }>();
  for (const l of lines) {
    const w = weight.get(sizeKey(l.size)) ?? { chars: 0, sum: 0 };
    w.chars += l.text.length;
    w.sum += l.size * l.text.length;
    weight.set(sizeKey(l.size), w);
  }
  let best: { key: number; chars: number; sum: number } | null = null;
  for (const [key, w] of weight) if (!best || w.chars > best.chars || (w.chars === best.chars && key < best.key)) best = { key, ...w };
  return best && best.chars ? best.sum / best.chars : 10;
}

/** Whether most of the text is bold (then bold marks nothing out). */
export function boldBody(lines: Line[]): boolean {
  let bold = 0;
  let all = 0;
  for (const l of lines) {
    all += l.text.length;
    if (l.bold) bold += l.text.length;
  }
  return bold > all * 0.5;
}

/** At least `ratio` times the body size, with 1.5% slack for sizes like 11.955 over 9.963 (LaTeX's 12 over 10). */
const isLarge = (size: number, body: number, ratio: number) => size >= body * ratio * 0.985;

/** Whether monospace text is a minority (code in a proportional document) rather than the document's own type. */
export function monoIsCode(lines: Line[]): boolean {
  let mono = 0;
  let all = 0;
  for (const l of lines) {
    all += l.text.length;
    if (l.mono) mono += l.text.length;
  }
  return mono < all * 0.4;
}

/** Sizes of lines that read as headings, largest first; sizes within 0.5 pt are one level, at most 6 levels. */
export function headingSizes(lines: Line[], body: number, ratio: number): number[] {
  const sizes = [...new Set(lines.filter((l) => isLarge(l.size, body, ratio) && l.text.length <= 200 && /[\p{L}\p{N}].*[\p{L}\p{N}]/u.test(l.text)).map((l) => sizeKey(l.size)))];
  return sizes.sort((a, b) => b - a).slice(0, 6);
}

function headingLevel(size: number, style: LayoutStyle): number {
  const key = sizeKey(size);
  let index = style.headingSizes.findIndex((s) => Math.abs(s - key) <= 0.5);
  if (index < 0) index = style.headingSizes.filter((s) => s > key).length;
  return Math.min(6, index + 1);
}

const overlaps = (a: { x0: number; x1: number }, b: { x0: number; x1: number }) => Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0) > 0;

/** The usual baseline-to-baseline step of consecutive lines, as a multiple of their font size. */
function leading(lines: Line[]): number {
  const counts = new Map<number, number>();
  for (let i = 1; i < lines.length; i++) {
    const a = lines[i - 1]!;
    const b = lines[i]!;
    if (sizeKey(a.size) !== sizeKey(b.size) || !overlaps(a, b)) continue;
    const ratio = Math.round(((b.baseline - a.baseline) / a.size) * 10) / 10;
    if (ratio > 0.8 && ratio < 3) counts.set(ratio, (counts.get(ratio) ?? 0) + 1);
  }
  let best = 1.25;
  let most = 0;
  for (const [ratio, n] of counts) if (n > most || (n === most && ratio < best)) [best, most] = [ratio, n];
  return best;
}

/** Cells set well apart (2 em): a row of fields, not a line of prose with a wide space in it. */
const spread = (line: Line) => line.cells.some((c, i) => i > 0 && c.x0 - line.cells[i - 1]!.x1 > line.size * 2);

/** Lines of one region (a column, or a full-width stretch) → blocks. */
function buildBlocks(lines: Line[], style: LayoutStyle, lead: number): Line[][] {
  const blocks: Line[][] = [];
  let block: Line[] = [];
  for (const line of lines) {
    const prev = block.at(-1);
    const size = prev ? Math.max(prev.size, line.size) : line.size;
    const breaks =
      !prev ||
      line.baseline - prev.baseline > size * lead * 1.3 + 1 ||
      Math.abs(line.size - prev.size) > style.body * 0.15 ||
      spread(line) !== spread(prev) ||
      (!style.boldBody && line.bold !== prev.bold && (line.bold ? line : prev).text.length <= 150) ||
      (style.monoIsCode && line.mono !== prev.mono) ||
      !overlaps(line, prev);
    if (breaks && block.length) {
      blocks.push(block);
      block = [];
    }
    block.push(line);
  }
  if (block.length) blocks.push(block);
  return blocks;
}

function boxOf(lines: { x0: number; x1: number; top: number; bottom: number }[], width: number, height: number): BoundingBox {
  return normalizedBox(Math.min(...lines.map((l) => l.x0)), Math.min(...lines.map((l) => l.top)), Math.max(...lines.map((l) => l.x1)), Math.max(...lines.map((l) => l.bottom)), width, height);
}

export function normalizedBox(x0: number, top: number, x1: number, bottom: number, width: number, height: number): BoundingBox {
  const clamp = (v: number) => Math.min(1, Math.max(0, v));
  const x = clamp(Math.min(x0, x1) / width);
  const y = clamp(Math.min(top, bottom) / height);
  const right = clamp(Math.max(x0, x1) / width);
  const lower = clamp(Math.max(top, bottom) / height);
  return { x: round4(x), y: round4(y), w: round4(right - x), h: round4(lower - y) };
}

interface Part {
  draft: Draft;
  lines: Line[];
  /** A table or figure: its box in page units (lines are empty). */
  rect?: Rect;
}

/** Small print numbered "1)" "1." "*" "†": a footnote, not a list. */
const FOOTNOTE = /^\s*(?:\(?\d{1,3}\)|\d{1,3}\.?\s|[*†‡§¶])/u;

/**
 * A numbered section title set like the text around it ("1 들어가며", "2.3 Results", "IV. RESULTS",
 * "B. Setup"), followed by its first paragraph at the usual line spacing: the title is a block of
 * its own. ("B." and "iv." also mark list items: then the next line is not one.)
 */
function titleSplit(block: Line[]): Line[][] {
  const kind = (text: string) => (/^[IVX]{1,5}\.\s/.test(text) ? "roman" : /^[A-H]\.\s/.test(text) ? "letter" : isBullet(text) ? "other" : null);
  for (let i = 0; i < block.length; i++) {
    const line = block[i]!;
    const next = block[i + 1];
    const after = i === 0 || /[.!?:;]$/.test(block[i - 1]!.text);
    // "V. SIMULATION" over "A. Discrete-time model": a section and its first subsection, not a list (the markers differ in kind).
    const numbered = /^\d/.test(line.text) ? !isBullet(line.text) : kind(line.text) !== null && kind(line.text) !== "other" && (!next || kind(next.text) !== kind(line.text));
    // Set apart: it stops well short of the next line, the next line starts an item, or it is set
    // in another face (an italic or bold subsection title over its plain first paragraph).
    const apart = !next || line.x1 < next.x1 - line.size * 3 || kind(next.text) !== null || (emphasised(line) && !emphasised(next));
    if (after && numbered && apart && looksLikeTitle(line.text) && block.length > 1) {
      return [...(i ? [block.slice(0, i)] : []), [line], ...(next ? titleSplit(block.slice(i + 1)) : [])];
    }
  }
  return [block];
}

/** Most of a line's characters are bold or italic. */
function emphasised(line: Line): boolean {
  if (line.bold) return true;
  const runs = line.cells.flatMap((c) => c.runs);
  const chars = runs.reduce((n, r) => n + r.text.length, 0);
  return runs.reduce((n, r) => n + (r.italic ? r.text.length : 0), 0) >= chars * 0.8;
}

/**
 * A numbered section title that wraps onto a second line centred under the first ("2. Clones of
 * analytic maps, examples to" over "Banach's claim"), standing as a block of its own: a heading,
 * not a one-item list. A list item's second line starts at the item's text, not centred.
 */
function wrappedTitle(block: Line[], text: string): boolean {
  if (block.length !== 2 || text.length > 200 || /[.,;:]$/.test(text) || !/^(?:\d{1,2}(?:\.\d{1,2})*\.?|[IVX]{1,5}\.|[A-H]\.)\s+[\p{Lu}\p{Lo}]/u.test(text)) return false;
  const [a, b] = block as [Line, Line];
  const em = a.size;
  return b.x0 > a.x0 + em * 2 && Math.abs((a.x0 + a.x1) / 2 - (b.x0 + b.x1) / 2) < em * 2;
}

/**
 * Lines that start with markers but are not a list: sub-figure captions side by side on one line
 * ("(a) Original image.   (b) Modified image."), and fragments of a formula ("- ′ + −4") with no
 * word in them.
 */
function notAList(lines: Line[]): boolean {
  if (lines.length === 1 && (lines[0]!.text.match(/(?:^|\s)\((?:[a-h]|[ivx]{1,4})\)\s/g) ?? []).length >= 2) return true;
  return !lines.some((l) => /\p{L}{2}/u.test(splitBullet(l.text).text));
}

/**
 * Whether OCR's text of a large line (or the text of a layout model's title region) reads like a title. OCR sizes a line from its ink box, and
 * two rows misread as one (words run together), a formula's tall symbols or a sentence's wrapped
 * tail look large too: a title starts with no small letter, is mostly letters, and has no run-on
 * word of 18 letters or more, no bullet in front and no "=" (a list item in taller type, a formula).
 * (DocBank's pages read as scans: heading token F1 0.51 → 0.79.)
 */
function readsAsTitle(text: string): boolean {
  const chars = text.replace(/\s/g, "");
  const letters = chars.match(/\p{L}/gu)?.length ?? 0;
  return !/^\p{Ll}/u.test(text) && letters >= chars.length * 0.6 && !/\p{L}{18}/u.test(text) && !GLYPH_BULLET.test(text) && !text.includes("=");
}

/** One block of same-shape lines → one or more elements (a block can hold a paragraph then a list). */
function blockParts(whole: Line[], style: LayoutStyle): Part[] {
  const split = whole.length > 1 ? titleSplit(whole) : [whole];
  if (split.length > 1) return split.flatMap((b) => blockParts(b, style));
  const block = whole;
  const first = block[0]!;
  const font = { font_size: Math.round(first.size * 10) / 10 };
  if (style.monoIsCode && block.every((l) => l.mono)) {
    return [{ draft: { type: "paragraph", content: block.map((l) => l.text).join("\n"), metadata: { code: true, ...font } }, lines: block }];
  }
  // Headings are at most three lines: longer blocks skip joining their text just to test it.
  if (block.length <= 3) {
    const text = joinLines(block.map((l) => l.text));
    // Large type makes a heading when it is short: a big-print paragraph is still a paragraph.
    if (isLarge(first.size, style.body, style.headingRatio) && text.length <= 200 && /[\p{L}\p{N}].*[\p{L}\p{N}]/u.test(text) && (!style.ocr || readsAsTitle(text))) {
      return [{ draft: { type: "heading", content: text, metadata: { level: headingLevel(first.size, style), ...font } }, lines: block }];
    }
    const bodyLevel = Math.min(6, style.headingSizes.length + 1);
    if (!style.boldBody && boldHeading(block, text, style.body)) {
      return [{ draft: { type: "heading", content: text, metadata: { level: Math.min(6, bodyLevel + Math.max(0, numberingDepth(text) - 1)), bold: true, ...font } }, lines: block }];
    }
    if ((block.length === 1 && looksLikeTitle(text)) || wrappedTitle(block, text)) {
      return [{ draft: { type: "heading", content: text, metadata: { level: Math.min(6, bodyLevel + Math.max(0, numberingDepth(text) - 1)), ...font } }, lines: block }];
    }
  }
  // Whether each line starts with a list marker, tested once per line (the passes below ask again and again).
  const bullets = new Map(block.map((l) => [l, isBullet(l.text)]));
  if (first.size < style.body * 0.92 && FOOTNOTE.test(first.text) && !block.every((l) => bullets.get(l) && !/^\s*\(?\d/.test(l.text))) {
    return paragraphs(block).map((lines) => ({ draft: { type: "paragraph", content: joinLines(lines.map((l) => l.text)), metadata: { footnote: true, ...font } }, lines }));
  }
  // Runs of list items (a bulleted line plus the indented lines under it) and of other lines.
  const parts: Part[] = [];
  let run: Line[] = [];
  let listRun = false;
  // The last bulleted line of the current run: a line indented past it continues its item.
  let item: Line | undefined;
  const flush = () => {
    if (!run.length) return;
    if (listRun && notAList(run)) listRun = false;
    if (listRun) {
      const items: { marker: string; text: string; lines: string[] }[] = [];
      for (const l of run) {
        if (bullets.get(l)) items.push({ ...splitBullet(l.text), lines: [] });
        else items.at(-1)!.lines.push(l.text);
      }
      const draft = listDraft(items.map((i) => ({ marker: i.marker, text: joinLines([i.text, ...i.lines]) })));
      parts.push({ draft: { ...draft, metadata: { ...draft.metadata, ...font } }, lines: run });
    } else {
      // Stops at the first line that is not "Label: value" (most runs are prose).
      const pairs: [string, string][] = [];
      for (const l of run) {
        const pair = keyValue(l.text);
        if (!pair) break;
        pairs.push(pair);
      }
      if (pairs.length === run.length) parts.push({ draft: { ...keyValueDraft(pairs), metadata: { pairs: pairs.length, ...font } }, lines: run });
      else for (const lines of paragraphs(run)) parts.push({ draft: { type: "paragraph", content: joinLines(lines.map((l) => l.text)), metadata: font }, lines });
    }
    run = [];
    item = undefined;
  };
  for (const line of block) {
    const bullet = bullets.get(line)!;
    const continues = listRun && !bullet && item !== undefined && line.x0 > item.x0 + line.size * 0.5;
    if (bullet) {
      if (!listRun) flush();
      listRun = true;
    } else if (!continues) {
      if (listRun) flush();
      listRun = false;
    }
    run.push(line);
    if (bullet) item = line;
  }
  flush();
  return parts;
}

/**
 * Lines of prose → paragraphs: a new one starts where a line is indented (a first-line indent)
 * after a line that ended a sentence, or after a line that stopped well short of the right edge.
 */
function paragraphs(lines: Line[]): Line[][] {
  if (lines.length < 2) return [lines];
  const left = Math.min(...lines.map((l) => l.x0));
  const right = Math.max(...lines.map((l) => l.x1));
  const atLeft = (l: Line | undefined) => l === undefined || l.x0 <= left + l.size * 0.3;
  const out: Line[][] = [[lines[0]!]];
  for (let i = 1; i < lines.length; i++) {
    const prev = lines[i - 1]!;
    const line = lines[i]!;
    const em = line.size;
    const ended = /[.!?:;。"”')\]]$/u.test(prev.text);
    // A first-line indent, with the lines after it back at the left edge.
    const indented = line.x0 > left + em * 0.7 && line.x0 < left + em * 5 && atLeft(lines[i + 1]) && (ended || prev.x1 < right - em * 2);
    // Unindented paragraphs: the line before ended a sentence far short of the right edge.
    const broken = atLeft(line) && ended && prev.x1 < right - Math.max(em * 6, (right - left) * 0.25) && /^[\p{Lu}\p{Lo}\d"“(]/u.test(line.text);
    if (indented || broken) out.push([line]);
    else out.at(-1)!.push(line);
  }
  return out;
}

/** Lines in reading order (regions from layout/columns.ts), each region's lines top to bottom. */
export function layoutPage(runs: Run[], width: number, height: number, style: LayoutStyle, shapes: PageShapes = {}, extra: Record<string, unknown> = {}): DocElement[] {
  const furniture = shapes.furniture ?? new Set<Run>();
  const tables = shapes.tables ?? [];
  const figures = shapes.figures ?? [];
  const taken = new Set<Run>(furniture);
  for (const t of tables) for (const i of t.runs) taken.add(runs[i]!);
  for (const f of figures) for (const r of f.runs) taken.add(r);
  const lines = taken.size === 0 && shapes.lines ? shapes.lines : buildLines(runs.filter((r) => !taken.has(r)));
  const lead = leading(lines);
  // A table region where the rules read a ruled table is that table: the lines left in it are laid out by the rules.
  const regions = shapes.regions?.filter((r) => r.kind !== "table" || !tables.some((t) => confirmedBy([r], "table", t.rect)));
  const model = regions ? regionParts(lines, regions, figures, style) : null;

  // Unruled tables on the whole page, before the columns are cut (their columns are not columns of
  // text); with a layout model, only in its table regions (regionParts).
  const unruled = model ? [] : unruledTables(lines);
  const inTable = new Set(unruled.flatMap((t) => t.lines));
  const blocks: (Atom & { part: Part })[] = [...(model?.blocks ?? [])];
  for (const t of tables) {
    blocks.push({ ...t.rect, chars: 0, block: true, part: { draft: tableDraft(t.rows, t.spans.length ? { spans: t.spans, ruled: true } : { ruled: true }), lines: [], rect: t.rect } });
  }
  for (const t of unruled) {
    const rect = { x0: Math.min(...t.lines.map((l) => l.x0)), y0: Math.min(...t.lines.map((l) => l.top)), x1: Math.max(...t.lines.map((l) => l.x1)), y1: Math.max(...t.lines.map((l) => l.bottom)) };
    const draft: Draft = t.keyValue ? keyValueDraft(t.rows.map((r) => [r[0]!.replace(/\s*:$/, ""), r.slice(1).filter(Boolean).join(" ")] as [string, string])) : tableDraft(t.rows);
    blocks.push({ ...rect, chars: 0, block: true, part: { draft, lines: t.lines } });
  }
  for (const f of figures) {
    if (model?.drawn.has(f)) continue;
    const content = f.runs.length ? buildLines(f.runs).map((l) => l.text).join("\n") : "";
    blocks.push({ ...f.rect, chars: 0, block: true, part: { draft: { type: "figure", content, metadata: { source: f.source } }, lines: [], rect: f.rect } });
  }
  type TextAtom = Atom & { line: Line; cell: Cell };
  const atoms: (TextAtom | (Atom & { part: Part }))[] = [...blocks];
  for (const line of lines) {
    if (inTable.has(line)) continue;
    for (const cell of line.cells) if (!model?.placed.has(cell)) atoms.push({ x0: cell.x0, x1: cell.x1, y0: line.top, y1: line.bottom, chars: cell.text.length, line, cell });
  }

  const parts: Part[] = [];
  for (const region of readingOrder(atoms, width)) {
    // Text atoms of one line that fell into one region make that line again (in the region).
    const byLine = new Map<Line, Cell[]>();
    const items: ({ y: number; line: Line } | { y: number; part: Part })[] = [];
    for (const a of region) {
      if ("part" in a) items.push({ y: a.y0, part: a.part });
      else {
        const cells = byLine.get(a.line);
        if (cells) cells.push(a.cell);
        else {
          byLine.set(a.line, [a.cell]);
          items.push({ y: a.line.top, line: a.line });
        }
      }
    }
    items.sort((a, b) => a.y - b.y);
    let pending: Line[] = [];
    const flushLines = () => {
      for (const block of buildBlocks(pending, style, lead)) {
        for (const part of blockParts(block, style)) {
          const last = parts.at(-1);
          if (last && continues(last, part, lead)) parts[parts.length - 1] = mergeParts(last, part);
          else parts.push(part);
        }
      }
      pending = [];
    };
    for (const item of items) {
      if ("part" in item) {
        flushLines();
        const last = parts.at(-1);
        if (last && regionGoesOn(last, item.part, lead)) parts[parts.length - 1] = mergeParts(last, item.part);
        else parts.push(item.part);
      } else {
        const cells = byLine.get(item.line)!.sort((a, b) => item.line.cells.indexOf(a) - item.line.cells.indexOf(b));
        pending.push(subLine(item.line, cells));
      }
    }
    flushLines();
  }
  attachCaptions(parts);
  const elements: DocElement[] = parts.map((part) => ({
    ...part.draft,
    bounding_box: part.rect ? normalizedBox(part.rect.x0, part.rect.y0, part.rect.x1, part.rect.y1, width, height) : boxOf(part.lines, width, height),
    metadata: { ...part.draft.metadata, ...extra },
  }));
  // Running headers and footers: kept, marked, after the page's own content (out of its reading order).
  const furnitureLines = buildLines(runs.filter((r) => furniture.has(r)));
  for (const line of furnitureLines) {
    elements.push({ type: "paragraph", content: line.text, bounding_box: boxOf([line], width, height), metadata: { furniture: line.top < height / 2 ? "header" : "footer", ...extra } });
  }
  for (const { lines: held, kind } of model?.furniture ?? []) {
    elements.push({ type: "paragraph", content: joinLines(held.map((l) => l.text)), bounding_box: boxOf(held, width, height), metadata: { furniture: kind, ...extra } });
  }
  return elements;
}

/**
 * Text a title region may hold: short, no caption, reading as a title (readsAsTitle). OCR of a
 * coarse scan misreads a title's letters often (a small letter first, words run together), so
 * there only its shape counts: mostly letters and no "=".
 */
function titleLike(text: string, ocr: boolean): boolean {
  if (text.length > 200 || CAPTION.test(text)) return false;
  if (!ocr) return readsAsTitle(text);
  const chars = text.replace(/\s/g, "");
  return (chars.match(/\p{L}/gu)?.length ?? 0) >= chars.length * 0.6 && !text.includes("=");
}

const boxOfLines = (lines: Line[]): Rect => ({ x0: Math.min(...lines.map((l) => l.x0)), y0: Math.min(...lines.map((l) => l.top)), x1: Math.max(...lines.map((l) => l.x1)), y1: Math.max(...lines.map((l) => l.bottom)) });

/** A layout model's element, as regionParts makes it: the kind of region it came from. */
const regionKind = (p: Part) => p.draft.metadata?.region as string | undefined;

/**
 * A layout model marks each list item apart, and often each "Label: value" line: items that
 * follow each other (less than two lines apart, overlapping across) are one list, and key-value
 * lines one group, as the rules read them.
 */
function regionGoesOn(a: Part, b: Part, lead: number): boolean {
  if (!regionKind(a) || !regionKind(b) || !a.lines.length || !b.lines.length) return false;
  if (a.draft.type === "key_value" && b.draft.type === "key_value") return continues(a, b, lead);
  if (regionKind(a) !== "list_item" || regionKind(b) !== "list_item") return false;
  const last = a.lines.at(-1)!;
  const first = b.lines[0]!;
  const across = Math.min(...a.lines.map((l) => l.x1)) > first.x0 && Math.max(...b.lines.map((l) => l.x1)) > Math.min(...a.lines.map((l) => l.x0));
  return across && first.top - last.bottom < Math.max(first.size, last.size) * 2;
}

/**
 * The elements of a layout model's regions (PageShapes.regions): each piece of a line (cell) goes
 * to the region holding its centre; each region's pieces, line by line, make one element of the
 * region's kind, placed in the page's reading order as a block. Table regions are read by the
 * unruled table finder, or else as a grid of their lines' cells (model-regions.ts); a figure
 * region keeps the text inside it as its content; running headers and footers are set aside.
 * Regions holding no text (a figure's picture aside) make nothing: the rules' tables and figures
 * the caller kept stand there.
 */
function regionParts(lines: Line[], regions: ModelRegion[], figures: Figure[], style: LayoutStyle): { blocks: (Atom & { part: Part })[]; placed: Set<Cell>; furniture: { kind: "header" | "footer"; lines: Line[] }[]; drawn: Set<Figure> } {
  const held = regions.map(() => new Map<Line, Cell[]>());
  const placed = new Set<Cell>();
  for (const line of lines) {
    for (const cell of line.cells) {
      const k = regionAt(regions, { x0: cell.x0, x1: cell.x1, y0: line.top, y1: line.bottom });
      if (k < 0) continue;
      placed.add(cell);
      const cells = held[k]!.get(line);
      if (cells) cells.push(cell);
      else held[k]!.set(line, [cell]);
    }
  }
  const blocks: (Atom & { part: Part })[] = [];
  const furniture: { kind: "header" | "footer"; lines: Line[] }[] = [];
  const drawnTaken = new Set<Figure>();
  const block = (part: Part, rect: Rect, solid: boolean) => blocks.push({ ...rect, chars: solid ? 0 : part.draft.content.length, block: solid, part });
  regions.forEach((region, k) => {
    const own = [...held[k]!].map(([line, cells]) => subLine(line, cells.sort((a, b) => line.cells.indexOf(a) - line.cells.indexOf(b)))).sort((a, b) => a.top - b.top);
    const box = own.length ? boxOfLines(own) : null;
    const font = own.length ? { font_size: Math.round(own[0]!.size * 10) / 10 } : {};
    const meta = { region: region.kind, region_score: Math.round(region.score * 100) / 100, ...font };
    if (region.kind === "figure") {
      // A figure the rules drew from the page's images or drawings stands as they found it (its
      // box is the drawing's); the region's text is its labels, unless it holds none.
      const drawn = figures.find((f) => confirmedBy([region], "figure", f.rect));
      if (drawn && !own.length) return;
      const frame = drawn?.rect ?? region;
      const rect = box ? union(frame, box) : { x0: frame.x0, y0: frame.y0, x1: frame.x1, y1: frame.y1 };
      const labels = [...(drawn?.runs.length ? buildLines(drawn.runs).map((l) => l.text) : []), ...own.map((l) => l.text)];
      if (drawn) drawnTaken.add(drawn);
      block({ draft: { type: "figure", content: labels.join("\n"), metadata: { source: drawn?.source ?? "layout_model", ...meta } }, lines: [], rect }, rect, true);
      return;
    }
    if (!own.length || !box) return;
    if (region.kind === "header" || region.kind === "footer") {
      furniture.push({ kind: region.kind, lines: own });
      return;
    }
    if (region.kind === "table") {
      const found = unruledTables(own);
      const whole = found.length === 1 && found[0]!.lines.length === own.length ? found[0]! : null;
      const rect = { x0: Math.min(region.x0, box.x0), y0: Math.min(region.y0, box.y0), x1: Math.max(region.x1, box.x1), y1: Math.max(region.y1, box.y1) };
      // Form rows (a label, its value in a second column) that the model takes for a table are key-value pairs, as the rules read them.
      const draft = whole?.keyValue ? keyValueDraft(whole.rows.map((r) => [r[0]!.replace(/\s*:$/, ""), r.slice(1).filter(Boolean).join(" ")] as [string, string])) : tableDraft(whole ? whole.rows : gridOfLines(own));
      block({ draft: { ...draft, metadata: { ...draft.metadata, ...meta } }, lines: [], rect }, rect, true);
      return;
    }
    // A title region whose text reads as no title (a formula, a caption, a paragraph) is text.
    const kind = region.kind === "title" && !titleLike(joinLines(own.map((l) => l.text)), style.ocr === true) ? "text" : region.kind;
    // A text region may hold a heading the rules read (the model drew one box round a title and
    // the paragraph before or after it): the heading stands apart, the rest is the region's text.
    // Not on scans: sizes from OCR boxes make headings of wrapped lines there.
    for (const piece of kind === "text" && !style.ocr ? splitAtHeadings(own, style) : [own]) {
      const text = joinLines(piece.map((l) => l.text));
      let draft: Draft;
      let rulesSay: Draft | null;
      if (kind === "title") {
        const bodyLevel = Math.min(6, style.headingSizes.length + 1);
        const level = isLarge(piece[0]!.size, style.body, style.headingRatio) ? headingLevel(piece[0]!.size, style) : Math.min(6, bodyLevel + Math.max(0, numberingDepth(text) - 1));
        draft = { type: "heading", content: text, metadata: { level, ...meta } };
      } else if (kind === "list_item") {
        const { marker, text: item } = splitBullet(text);
        const list = listDraft([{ marker, text: item }]);
        draft = { ...list, metadata: { ...list.metadata, ...meta } };
      } else if (kind === "text" && (rulesSay = ruledAs(piece, style))) {
        // A short text region the rules read as a heading (large, bold or numbered type), or a
        // text region of bulleted lines: the model's nano weights miss both often.
        draft = { ...rulesSay, metadata: { ...rulesSay.metadata, ...meta } };
      } else {
        const marks = kind === "footnote" ? { footnote: true } : kind === "caption" ? { caption: true } : kind === "formula" ? { formula: true } : {};
        draft = { type: "paragraph", content: kind === "formula" ? piece.map((l) => l.text).join("\n") : text, metadata: { ...marks, ...meta } };
      }
      block({ draft, lines: piece }, boxOfLines(piece), false);
    }
  });
  return { blocks, placed, furniture, drawn: drawnTaken };
}

/** The rules' reading of a text region's lines when it is one heading, one list or one group of key-value lines; null otherwise. */
function ruledAs(lines: Line[], style: LayoutStyle): Draft | null {
  const parts = blockParts(lines, style);
  const only = parts.length === 1 ? parts[0]!.draft : null;
  return only && ((only.type === "heading" && lines.length <= 3) || only.type === "list" || only.type === "key_value") ? only : null;
}

/**
 * A text region's lines cut around the headings the rules read in it (up to three lines each,
 * among other lines): each heading a piece, the lines between them a piece.
 */
function splitAtHeadings(lines: Line[], style: LayoutStyle): Line[][] {
  if (lines.length < 2) return [lines];
  const parts = buildBlocks(lines, style, leading(lines)).flatMap((b) => blockParts(b, style));
  const heading = (p: Part) => p.draft.type === "heading" && p.lines.length <= 3;
  if (parts.length < 2 || !parts.some(heading)) return [lines];
  const pieces: Line[][] = [];
  let text: Line[] = [];
  for (const part of parts) {
    if (!heading(part)) {
      text.push(...part.lines);
      continue;
    }
    if (text.length) pieces.push(text);
    pieces.push(part.lines);
    text = [];
  }
  if (text.length) pieces.push(text);
  return pieces;
}

/** The part of a line that fell into one region: measured again from its own runs (size, weight, extent). */
function subLine(line: Line, cells: Cell[]): Line {
  if (cells.length === line.cells.length) return line;
  return visualToLogical(makeLine(cells.flatMap((c) => c.runs)));
}

/** A caption's start: "Figure 2:", "Fig. 3.", "Table 1". */
const CAPTION = /^(?:fig(?:ure)?\.?|table|tab\.|abbildung|tabelle|chart|graph|exhibit|plate|scheme)\s*[\p{N}IVX]+[.:\s]/iu;

/** A caption right above or below a figure or table is named in its metadata. */
function attachCaptions(parts: Part[]) {
  const rectOf = (p: Part): Rect | null =>
    p.rect ?? (p.lines.length ? { x0: Math.min(...p.lines.map((l) => l.x0)), y0: Math.min(...p.lines.map((l) => l.top)), x1: Math.max(...p.lines.map((l) => l.x1)), y1: Math.max(...p.lines.map((l) => l.bottom)) } : null);
  for (const p of parts) {
    if (p.draft.type !== "paragraph" || !CAPTION.test(p.draft.content)) continue;
    const c = rectOf(p)!;
    let best: { part: Part; distance: number } | null = null;
    for (const q of parts) {
      if (q.draft.type !== "figure" && q.draft.type !== "table") continue;
      const r = rectOf(q);
      if (!r || Math.min(c.x1, r.x1) - Math.max(c.x0, r.x0) <= 0) continue;
      const distance = c.y0 >= r.y1 ? c.y0 - r.y1 : r.y0 >= c.y1 ? r.y0 - c.y1 : 0;
      if (distance < 40 && (!best || distance < best.distance)) best = { part: q, distance };
    }
    if (best && !best.part.draft.metadata?.caption) best.part.draft = { ...best.part.draft, metadata: { ...best.part.draft.metadata, caption: p.draft.content } };
  }
}

/** A piece of a display formula: a few characters (a sub- or superscript, a sum's limits), or symbols with no word in them. */
const fragment = (p: Part) => {
  const text = p.draft.content.replace(/\s/g, "");
  return p.draft.type === "paragraph" && !p.draft.metadata?.code && !p.draft.metadata?.footnote && (text.length <= 6 || (text.length <= 40 && !/\p{L}{4}/u.test(text)));
};

/**
 * List items (key-value lines, code lines) spaced apart are still one element: same kind, same
 * left edge, a gap under two lines. The pieces of a display formula set on several baselines
 * (lines a size change split apart) are one element with what they touch.
 */
function continues(a: Part, b: Part, lead: number): boolean {
  if (a.rect || b.rect || !a.lines.length || !b.lines.length) return false;
  if (a.draft.type === "paragraph" && b.draft.type === "paragraph" && (fragment(a) || fragment(b))) {
    const above = { x0: Math.min(...a.lines.map((l) => l.x0)), x1: Math.max(...a.lines.map((l) => l.x1)), bottom: Math.max(...a.lines.map((l) => l.bottom)) };
    const below = { x0: Math.min(...b.lines.map((l) => l.x0)), x1: Math.max(...b.lines.map((l) => l.x1)), top: Math.min(...b.lines.map((l) => l.top)) };
    const em = Math.max(a.lines.at(-1)!.size, b.lines[0]!.size);
    if (below.x0 < above.x1 + em && above.x0 < below.x1 + em && below.top - above.bottom < em * 0.8) return true;
  }
  const code = a.draft.metadata?.code === true && b.draft.metadata?.code === true;
  if (a.draft.type !== b.draft.type || (a.draft.type !== "list" && a.draft.type !== "key_value" && !code)) return false;
  if (a.draft.type === "list" && a.draft.metadata?.ordered !== b.draft.metadata?.ordered) return false;
  const last = a.lines.at(-1)!;
  const first = b.lines[0]!;
  // Key-value lines go on across a line's gap at most: a blank line's space sets a new group of fields apart.
  const gap = a.draft.type === "key_value" ? 1.8 : 2.6;
  return Math.abs(first.x0 - a.lines[0]!.x0) < first.size && first.baseline - last.baseline < first.size * lead * gap;
}

function mergeParts(a: Part, b: Part): Part {
  if (a.draft.type === "paragraph" && !a.draft.metadata?.code) return { draft: { ...a.draft, content: `${a.draft.content} ${b.draft.content}` }, lines: [...a.lines, ...b.lines] };
  const content = `${a.draft.content}\n${b.draft.content}`;
  const count = content.split("\n").length;
  const metadata = a.draft.type === "list" ? { ...a.draft.metadata, items: count } : { ...a.draft.metadata, pairs: count };
  return { draft: { ...a.draft, content, metadata }, lines: [...a.lines, ...b.lines] };
}
