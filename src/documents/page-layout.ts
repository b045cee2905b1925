/**
 * Page layout from positioned text: text runs (a PDF's text items, or OCR lines) → lines (by
 * baseline) → cells (split at wide horizontal gaps) → blocks (split at wide vertical gaps, font
 * size changes and breaks in alignment) → typed elements in reading order. Coordinates are page
 * units with the origin top-left (a PDF viewport at scale 1); boxes come out normalized 0-1.
 *
 * Heuristics:
 *  - body size: the most common font size, weighted by characters, over the whole document;
 *  - heading: a block whose font size is at least 1.2x the body size (level = rank of its size
 *    among the document's distinct heading sizes, largest = 1), or a lone short line numbered like
 *    a section ("2.1 Scope", "3. Results") or in capitals;
 *  - table: at least 2 consecutive lines that each split into at least 2 cells, and whose cells
 *    fall into the same columns (columns = overlapping x ranges of the cells of all rows);
 *  - list: lines starting with a bullet or "1." "1)" "a)"; indented lines continue the item;
 *  - key_value: every line of the block shaped "Label: value";
 *  - code: lines in a monospace font (when the document's body is not monospace), kept line by line;
 *  - lists, key-value lines and code spaced apart by less than two lines stay one element;
 *  - two columns of prose on a page (a vertical gutter no line crosses) are read column by column.
 * Bold type is not used: pdf.js's text layer does not name fonts, and the operator list that does
 * costs as much as the text itself.
 */
import { isBullet, joinLines, keyValue, keyValueDraft, listDraft, round4, splitBullet, tableDraft, type Draft } from "./reader-common.ts";
import type { BoundingBox, DocElement } from "./types.ts";

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
}

export interface Cell {
  text: string;
  x0: number;
  x1: number;
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
}

export const sizeKey = (size: number) => Math.round(size * 2) / 2;

/** Runs → lines, top to bottom; each line's runs left to right, merged into cells at gaps under 1.5 em. */
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
  return lines;
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
    if (last && gap < size * 1.5) {
      const space = gap > size * 0.15 && !/\s$/.test(last.text) && !/^\s/.test(run.text);
      last.text += space ? ` ${run.text}` : run.text;
      last.x1 = Math.max(last.x1, run.x1);
    } else cells.push({ text: run.text, x0: run.x0, x1: run.x1 });
    previous = run;
  }
  const kept = cells.map((c) => ({ ...c, text: c.text.replace(/\s+/g, " ").trim() })).filter((c) => c.text);
  const baseline = group.reduce((s, g) => s + g.baseline, 0) / group.length;
  const tops = group.map((g) => g.top ?? g.baseline - g.size * (g.ascent ?? 0.8));
  return {
    cells: kept,
    text: kept.map((c) => c.text).join(" "),
    baseline,
    top: Math.min(...tops),
    bottom: Math.max(...group.map((g) => g.baseline + g.size * Math.abs(g.descent ?? 0.22))),
    x0: Math.min(...kept.map((c) => c.x0)),
    x1: Math.max(...kept.map((c) => c.x1)),
    size,
    mono: group.every((g) => g.mono === true),
  };
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
  const sizes = [...new Set(lines.filter((l) => isLarge(l.size, body, ratio) && /[\p{L}\p{N}].*[\p{L}\p{N}]/u.test(l.text)).map((l) => sizeKey(l.size)))];
  return sizes.sort((a, b) => b - a);
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

/** Lines of one flow (a column, or the whole page) → blocks. */
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
      (line.cells.length > 1) !== (prev.cells.length > 1) ||
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

/**
 * Cells of several rows → columns: the x ranges of all cells, merged where they overlap. Null when
 * the rows do not share columns (a cell of some row spans what are columns in others, or a row has
 * two cells in one column).
 */
function tableRows(block: Line[]): string[][] | null {
  const spans = block
    .flatMap((l) => l.cells.map((c) => ({ x0: c.x0, x1: c.x1 })))
    .sort((a, b) => a.x0 - b.x0);
  const columns: { x0: number; x1: number }[] = [];
  for (const s of spans) {
    const last = columns.at(-1);
    if (last && s.x0 < last.x1) last.x1 = Math.max(last.x1, s.x1);
    else columns.push({ ...s });
  }
  if (columns.length < 2) return null;
  const rows: string[][] = [];
  let filled = 0;
  for (const line of block) {
    const row = Array<string>(columns.length).fill("");
    for (const cell of line.cells) {
      const index = columns.findIndex((c) => cell.x0 >= c.x0 && cell.x0 < c.x1 + 0.01);
      if (index < 0 || row[index]) return null;
      row[index] = cell.text;
      filled++;
    }
    rows.push(row);
  }
  // Mostly empty grids are scattered text, not tables.
  if (filled < rows.length * columns.length * 0.5) return null;
  return rows;
}

/** Prose cut into cells is two columns of text that happen to share baselines, not a table. */
function isProse(block: Line[]): boolean {
  const cells = block.flatMap((l) => l.cells);
  const long = cells.filter((c) => c.text.length >= 30 && c.text.split(" ").length >= 5).length;
  return long >= cells.length * 0.6;
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

/** A short line on its own that reads like a section title even at body size: "2.1 Scope", "3. Results", "SAFETY NOTES". */
function looksLikeTitle(text: string): boolean {
  if (text.length > 60 || /[.,;:!?]$/.test(text) || keyValue(text)) return false;
  const words = text.split(" ").length;
  if (/^\d+(?:\.\d+)+\.?\s+\p{Lu}/u.test(text)) return words <= 10;
  if (/^\d+\.\s+\p{Lu}/u.test(text)) return words <= 6;
  // Capitals: two words or more, or one long word ("INTRODUCTION"), so code keywords like BEGIN stay text.
  const letters = text.replace(/[^\p{L}]/gu, "");
  return (words >= 2 ? letters.length >= 4 : letters.length >= 6) && letters === letters.toUpperCase() && letters !== letters.toLowerCase() && words <= 8;
}

interface Part {
  draft: Draft;
  lines: Line[];
}

/** One block of same-shape lines → one or more elements (a block can hold a paragraph then a list). */
function blockParts(block: Line[], style: LayoutStyle): Part[] {
  const first = block[0]!;
  const text = joinLines(block.map((l) => l.text));
  const font = { font_size: Math.round(first.size * 10) / 10 };
  if (style.monoIsCode && block.every((l) => l.mono)) {
    return [{ draft: { type: "paragraph", content: block.map((l) => l.text).join("\n"), metadata: { code: true, ...font } }, lines: block }];
  }
  // Large type makes a heading when it is short: a big-print paragraph is still a paragraph.
  if (isLarge(first.size, style.body, style.headingRatio) && block.length <= 3 && text.length <= 200 && /[\p{L}\p{N}].*[\p{L}\p{N}]/u.test(text)) {
    return [{ draft: { type: "heading", content: text, metadata: { level: headingLevel(first.size, style), ...font } }, lines: block }];
  }
  if (block.length >= 2 && block.every((l) => l.cells.length >= 2)) {
    const rows = tableRows(block);
    if (rows) return [{ draft: tableDraft(rows, font), lines: block }];
  }
  if (block.length === 1 && looksLikeTitle(text)) {
    return [{ draft: { type: "heading", content: text, metadata: { level: Math.min(6, style.headingSizes.length + 1), ...font } }, lines: block }];
  }
  // Runs of list items (a bulleted line plus the indented lines under it) and of other lines.
  const parts: Part[] = [];
  let run: Line[] = [];
  let listRun = false;
  const flush = () => {
    if (!run.length) return;
    if (listRun) {
      const items: { marker: string; text: string; lines: string[] }[] = [];
      for (const l of run) {
        if (isBullet(l.text)) items.push({ ...splitBullet(l.text), lines: [] });
        else items.at(-1)!.lines.push(l.text);
      }
      const draft = listDraft(items.map((i) => ({ marker: i.marker, text: joinLines([i.text, ...i.lines]) })));
      parts.push({ draft: { ...draft, metadata: { ...draft.metadata, ...font } }, lines: run });
    } else {
      const pairs = run.map((l) => keyValue(l.text));
      const draft: Draft = pairs.every((p) => p) ? keyValueDraft(pairs as [string, string][]) : { type: "paragraph", content: joinLines(run.map((l) => l.text)) };
      parts.push({ draft: { ...draft, metadata: { ...draft.metadata, ...font } }, lines: run });
    }
    run = [];
  };
  for (const line of block) {
    const bullet = isBullet(line.text);
    const item = run.findLast((l) => isBullet(l.text));
    const continues = listRun && !bullet && item !== undefined && line.x0 > item.x0 + line.size * 0.5;
    if (bullet) {
      if (!listRun) flush();
      listRun = true;
    } else if (!continues) {
      if (listRun) flush();
      listRun = false;
    }
    run.push(line);
  }
  flush();
  return parts;
}

/**
 * Two columns of prose: a vertical gutter in the middle of the page that almost no line crosses,
 * with prose on both sides. Returns the gutter's x or null.
 */
function findGutter(lines: Line[], width: number): number | null {
  if (lines.length < 10) return null;
  // Lines of a column are narrower than half the page; single-column pages end here, cheaply.
  const narrow = lines.filter((l) => l.cells.every((c) => c.x1 - c.x0 < width * 0.5)).length;
  if (narrow < lines.length * 0.5) return null;
  let best: { x: number; crossing: number } | null = null;
  for (let x = Math.round(width * 0.3); x <= width * 0.7; x += 2) {
    let crossing = 0;
    for (const l of lines) if (l.cells.some((c) => c.x0 - 2 < x && c.x1 + 2 > x)) crossing++;
    if (!best || crossing < best.crossing) best = { x, crossing };
  }
  if (!best || best.crossing > lines.length * 0.25) return null;
  const x = best.x;
  const left = lines.flatMap((l) => l.cells.filter((c) => c.x1 <= x));
  const right = lines.flatMap((l) => l.cells.filter((c) => c.x0 >= x));
  if (left.length < 5 || right.length < 5) return null;
  const prose = (cells: Cell[]) => cells.filter((c) => c.text.length >= 25 && c.text.split(" ").length >= 4).length >= cells.length * 0.6;
  return prose(left) && prose(right) ? x : null;
}

function subLine(line: Line, cells: Cell[]): Line {
  return { ...line, cells, text: cells.map((c) => c.text).join(" "), x0: Math.min(...cells.map((c) => c.x0)), x1: Math.max(...cells.map((c) => c.x1)) };
}

/** Lines in reading order as flows: full-width stretches, and between them the left column then the right one. */
function flows(lines: Line[], width: number): Line[][] {
  const gutter = findGutter(lines, width);
  if (gutter === null) return [lines];
  const out: Line[][] = [];
  let left: Line[] = [];
  let right: Line[] = [];
  let full: Line[] = [];
  const flushColumns = () => {
    if (left.length) out.push(left);
    if (right.length) out.push(right);
    left = [];
    right = [];
  };
  for (const line of lines) {
    if (line.cells.some((c) => c.x0 - 2 < gutter && c.x1 + 2 > gutter)) {
      flushColumns();
      full.push(line);
      continue;
    }
    if (full.length) out.push(full);
    full = [];
    const l = line.cells.filter((c) => c.x1 <= gutter);
    const r = line.cells.filter((c) => c.x0 >= gutter);
    if (l.length) left.push(subLine(line, l));
    if (r.length) right.push(subLine(line, r));
  }
  flushColumns();
  if (full.length) out.push(full);
  return out;
}

/** A page's lines → typed elements in reading order, boxes normalized to the page. */
export function layoutElements(lines: Line[], width: number, height: number, style: LayoutStyle, extra: Record<string, unknown> = {}): DocElement[] {
  const lead = leading(lines);
  const elements: DocElement[] = [];
  for (const flow of flows(lines, width)) {
    const parts: Part[] = [];
    for (const block of buildBlocks(flow, style, lead)) {
      // Two columns that share baselines (and escaped the gutter search) are read one column at a time.
      const found =
        block.length >= 2 && block.every((l) => l.cells.length >= 2) && isProse(block)
          ? columnsOf(block).flatMap((column) => buildBlocks(column, style, lead).flatMap((b) => blockParts(b, style)))
          : blockParts(block, style);
      for (const part of found) {
        const last = parts.at(-1);
        if (last && continues(last, part, lead)) parts[parts.length - 1] = mergeParts(last, part);
        else parts.push(part);
      }
    }
    for (const part of parts) elements.push({ ...part.draft, bounding_box: boxOf(part.lines, width, height), metadata: { ...part.draft.metadata, ...extra } });
  }
  return elements;
}

/** List items (key-value lines, code lines) spaced apart are still one element: same kind, same left edge, a gap under two lines. */
function continues(a: Part, b: Part, lead: number): boolean {
  const code = a.draft.metadata?.code === true && b.draft.metadata?.code === true;
  if (a.draft.type !== b.draft.type || (a.draft.type !== "list" && a.draft.type !== "key_value" && !code)) return false;
  if (a.draft.type === "list" && a.draft.metadata?.ordered !== b.draft.metadata?.ordered) return false;
  const last = a.lines.at(-1)!;
  const first = b.lines[0]!;
  return Math.abs(first.x0 - a.lines[0]!.x0) < first.size && first.baseline - last.baseline < first.size * lead * 2.6;
}

function mergeParts(a: Part, b: Part): Part {
  const content = `${a.draft.content}\n${b.draft.content}`;
  if (a.draft.type === "paragraph") return { draft: { ...a.draft, content }, lines: [...a.lines, ...b.lines] };
  const count = content.split("\n").length;
  const metadata = a.draft.type === "list" ? { ...a.draft.metadata, items: count } : { ...a.draft.metadata, pairs: count };
  return { draft: { ...a.draft, content, metadata }, lines: [...a.lines, ...b.lines] };
}

function columnsOf(block: Line[]): Line[][] {
  const count = Math.max(...block.map((l) => l.cells.length));
  const columns: Line[][] = Array.from({ length: count }, () => []);
  for (const line of block) line.cells.forEach((cell, i) => columns[Math.min(i, count - 1)]!.push(subLine(line, [cell])));
  return columns.filter((c) => c.length);
}

/**
 * Puts figures into the reading order: each goes before the first element that starts below its
 * top edge (elements are already in reading order; figures are sorted by their top).
 */
export function withFigures(elements: DocElement[], figures: DocElement[]): DocElement[] {
  const out = [...elements];
  for (const figure of [...figures].sort((a, b) => a.bounding_box.y - b.bounding_box.y)) {
    const at = out.findIndex((e) => e.type !== "figure" && e.bounding_box.y > figure.bounding_box.y);
    if (at < 0) out.push(figure);
    else out.splice(at, 0, figure);
  }
  return out;
}
