/**
 * Ruled tables: the page's ruling lines (graphics.ts) → grids → cells with the text inside them.
 *
 * Horizontal and vertical segments that touch form a component; one with at least two of each is
 * a grid. Its column edges are the distinct x of its vertical rules and its row edges the distinct
 * y of its horizontal rules (double rules a few points apart count once). A missing rule between
 * two neighbouring slots merges them into one cell (a spanning header, a cell over two rows),
 * unless the edge is ruled in few rows (only through the header, or nowhere: a column found in
 * the text) and no text of the row crosses it: rows ruled across only keep the header's columns,
 * and a ruled column holding several columns of text is split (splitTextColumns). Each
 * text run goes to the slot that holds its centre. A grid needs text in two cells of one row and of
 * one column: a frame around a paragraph is not a table.
 *
 * Tables ruled with horizontal lines only (booktabs: a rule over the header, under it and at the
 * end) have no grid: booktabs.ts finds them.
 */
import type { Rect } from "./geometry.ts";
import type { Segment } from "./graphics.ts";
import { gutterColumns, textLines } from "./text-columns.ts";

/** The text a table needs: a run's extent and text (page-layout.ts's Run fits). */
export interface TextRun {
  text: string;
  x0: number;
  x1: number;
  baseline: number;
  size: number;
}

export interface FoundTable {
  rect: Rect;
  /** Dense rows; a spanning cell's text sits in its top-left slot, the slots it covers are "". */
  rows: string[][];
  spans: { row: number; col: number; rowspan: number; colspan: number }[];
  /** Indexes of the runs inside the table. */
  runs: Set<number>;
}

/** Pairs of horizontal and vertical rules compared at most (a 2000 x 2000 grid of rules). */
const MAX_PAIRS = 4_000_000;
/** Segments closer than this (points) are the same line; ends this close touch. */
const SNAP = 2;
const TOUCH = 3;

/** Collinear segments that overlap or touch → one segment each. */
export function mergeCollinear(segments: Segment[], horizontal: boolean): Segment[] {
  const key = (s: Segment) => (horizontal ? s.y0 : s.x0);
  const start = (s: Segment) => (horizontal ? s.x0 : s.y0);
  const end = (s: Segment) => (horizontal ? s.x1 : s.y1);
  const sorted = [...segments].sort((a, b) => key(a) - key(b) || start(a) - start(b));
  const out: Segment[] = [];
  // Group by position, then join along the line.
  let i = 0;
  while (i < sorted.length) {
    let j = i;
    while (j + 1 < sorted.length && key(sorted[j + 1]!) - key(sorted[i]!) <= SNAP / 2) j++;
    const group = sorted.slice(i, j + 1).sort((a, b) => start(a) - start(b));
    const at = group.reduce((s, g) => s + key(g), 0) / group.length;
    let from = start(group[0]!);
    let to = end(group[0]!);
    for (const g of group.slice(1)) {
      if (start(g) <= to + TOUCH) to = Math.max(to, end(g));
      else {
        out.push(horizontal ? { x0: from, x1: to, y0: at, y1: at } : { x0: at, x1: at, y0: from, y1: to });
        [from, to] = [start(g), end(g)];
      }
    }
    out.push(horizontal ? { x0: from, x1: to, y0: at, y1: at } : { x0: at, x1: at, y0: from, y1: to });
    i = j + 1;
  }
  return out;
}

/** Distinct positions, values within `tolerance` of the previous one folded into it. */
function cluster(values: number[], tolerance: number): number[] {
  const sorted = [...values].sort((a, b) => a - b);
  const out: number[][] = [];
  for (const v of sorted) {
    const last = out.at(-1);
    if (last && v - last.at(-1)! <= tolerance) last.push(v);
    else out.push([v]);
  }
  return out.map((g) => g.reduce((s, v) => s + v, 0) / g.length);
}

class UnionFind {
  parent: number[];
  constructor(n: number) {
    this.parent = Array.from({ length: n }, (_, i) => i);
  }
  find(i: number): number {
    while (this.parent[i] !== i) i = this.parent[i] = this.parent[this.parent[i]!]!;
    return i;
  }
  join(a: number, b: number) {
    this.parent[this.find(a)] = this.find(b);
  }
}

/** Share of [from, to] covered by the segments' spans. */
function covered(spans: [number, number][], from: number, to: number): number {
  let sum = 0;
  for (const [a, b] of spans) sum += Math.max(0, Math.min(b, to) - Math.max(a, from));
  return to > from ? sum / (to - from) : 0;
}

export function ruledTables(runs: TextRun[], horizontalRules: Segment[], verticalRules: Segment[]): FoundTable[] {
  const hs = mergeCollinear(horizontalRules, true);
  const vs = mergeCollinear(verticalRules, false);
  // Pages of hatching or plotted data hold thousands of tiny rules: no table grid is looked for there.
  if (hs.length < 2 || vs.length < 2 || hs.length * vs.length > MAX_PAIRS) return [];
  // Components of touching horizontal and vertical rules.
  const uf = new UnionFind(hs.length + vs.length);
  hs.forEach((h, i) =>
    vs.forEach((v, j) => {
      if (v.x0 >= h.x0 - TOUCH && v.x0 <= h.x1 + TOUCH && h.y0 >= v.y0 - TOUCH && h.y0 <= v.y1 + TOUCH) uf.join(i, hs.length + j);
    }),
  );
  const groups = new Map<number, { h: Segment[]; v: Segment[] }>();
  hs.forEach((h, i) => {
    const g = groups.get(uf.find(i)) ?? { h: [], v: [] };
    g.h.push(h);
    groups.set(uf.find(i), g);
  });
  vs.forEach((v, j) => {
    const g = groups.get(uf.find(hs.length + j)) ?? { h: [], v: [] };
    g.v.push(v);
    groups.set(uf.find(hs.length + j), g);
  });
  const tables: FoundTable[] = [];
  const taken = new Set<number>();
  for (const g of groups.values()) {
    if (g.h.length < 2 || g.v.length < 2) continue;
    // Rules inside the frame that touch none of its rules (a rule under a spanning header that
    // stops short of the columns' rules) still divide it.
    const [x0, x1] = [Math.min(...g.h.map((h) => h.x0)), Math.max(...g.h.map((h) => h.x1))];
    const [y0, y1] = [Math.min(...g.v.map((v) => v.y0)), Math.max(...g.v.map((v) => v.y1))];
    const inner = (s: Segment) => s.x0 >= x0 - TOUCH && s.x1 <= x1 + TOUCH && s.y0 > y0 + TOUCH && s.y1 < y1 - TOUCH;
    g.h.push(...hs.filter((h) => inner(h) && !g.h.includes(h)));
    const table = gridTable(runs, g.h, g.v, taken);
    if (table) {
      tables.push(table);
      for (const i of table.runs) taken.add(i);
    }
  }
  return tables;
}

function gridTable(runs: TextRun[], hs: Segment[], vs: Segment[], taken: Set<number>): FoundTable | null {
  // Rules that stop short of the outer frame still bound the table: its edges come from both sets.
  const xs = cluster([...vs.map((v) => v.x0), Math.min(...hs.map((h) => h.x0)), Math.max(...hs.map((h) => h.x1))], 3.5);
  const ys = cluster([...hs.map((h) => h.y0), Math.min(...vs.map((v) => v.y0)), Math.max(...vs.map((v) => v.y1))], 3.5);
  splitTextColumns(runs, xs, ys, taken);
  const virtual = splitTextRows(runs, ys, xs, taken);
  const nr = ys.length - 1;
  const nc = xs.length - 1;
  if (nr < 1 || nc < 1 || nr * nc > 20_000) return null;
  const rect = { x0: xs[0]!, y0: ys[0]!, x1: xs.at(-1)!, y1: ys.at(-1)! };
  // Rule spans along each edge position.
  const vAt = xs.map((x) => vs.filter((v) => Math.abs(v.x0 - x) <= 3.5).map((v) => [v.y0, v.y1] as [number, number]));
  const hAt = ys.map((y) => (virtual.includes(y) ? [[xs[0]!, xs.at(-1)!] as [number, number]] : hs.filter((h) => Math.abs(h.y0 - y) <= 3.5).map((h) => [h.x0, h.x1] as [number, number])));
  const slots = new UnionFind(nr * nc);
  const bands = rowBands(runs, ys, rect, taken);
  // An inner edge ruled through most rows marks its unruled stretch as a span; one ruled through
  // the header only leaves the body unruled there, and the text says where the columns are.
  const mostlyRuled = xs.map((_, k) => k > 0 && k < nc && ys.slice(1).filter((y, r) => covered(vAt[k]!, ys[r]!, y) >= 0.5).length >= nr * 0.5);
  for (let r = 0; r < nr; r++) {
    for (let c = 0; c < nc; c++) {
      if (c + 1 < nc && covered(vAt[c + 1]!, ys[r]!, ys[r + 1]!) < 0.5 && (mostlyRuled[c + 1] || textAcross(bands[r]!, xs[c + 1]!))) slots.join(r * nc + c, r * nc + c + 1);
      if (r + 1 < nr && covered(hAt[r + 1]!, xs[c]!, xs[c + 1]!) < 0.5) slots.join(r * nc + c, (r + 1) * nc + c);
    }
  }
  // Text into slots.
  const inSlot = new Map<number, number[]>();
  const used = new Set<number>();
  runs.forEach((run, i) => {
    if (taken.has(i)) return;
    const cx = (run.x0 + run.x1) / 2;
    const cy = run.baseline - run.size * 0.3;
    if (cx < rect.x0 || cx > rect.x1 || cy < rect.y0 || cy > rect.y1) return;
    const c = Math.min(nc - 1, Math.max(0, xs.findIndex((x, k) => k < nc && cx >= x && cx <= xs[k + 1]!)));
    const r = Math.min(nr - 1, Math.max(0, ys.findIndex((y, k) => k < nr && cy >= y && cy <= ys[k + 1]!)));
    const root = slots.find(r * nc + c);
    inSlot.set(root, [...(inSlot.get(root) ?? []), i]);
    used.add(i);
  });
  // Cells: each root's slot range.
  const range = new Map<number, { r0: number; r1: number; c0: number; c1: number }>();
  for (let r = 0; r < nr; r++) {
    for (let c = 0; c < nc; c++) {
      const root = slots.find(r * nc + c);
      const g = range.get(root);
      if (!g) range.set(root, { r0: r, r1: r, c0: c, c1: c });
      else Object.assign(g, { r0: Math.min(g.r0, r), r1: Math.max(g.r1, r), c0: Math.min(g.c0, c), c1: Math.max(g.c1, c) });
    }
  }
  const rows: string[][] = Array.from({ length: nr }, () => Array<string>(nc).fill(""));
  const spans: FoundTable["spans"] = [];
  for (const [root, g] of range) {
    const text = cellText((inSlot.get(root) ?? []).map((i) => runs[i]!));
    rows[g.r0]![g.c0] = text;
    if (g.r1 > g.r0 || g.c1 > g.c0) spans.push({ row: g.r0, col: g.c0, rowspan: g.r1 - g.r0 + 1, colspan: g.c1 - g.c0 + 1 });
  }
  // Rows and columns with no text anywhere (slivers between double rules) are dropped.
  const keepRows = rows.map((row) => row.some(Boolean));
  const keepCols = Array.from({ length: nc }, (_, c) => rows.some((row) => row[c]));
  const kept = rows.filter((_, r) => keepRows[r]).map((row) => row.filter((_, c) => keepCols[c]));
  const rowIndex = keepRows.map((k, r) => keepRows.slice(0, r).filter(Boolean).length);
  const colIndex = keepCols.map((k, c) => keepCols.slice(0, c).filter(Boolean).length);
  const keptSpans = spans
    .filter((s) => keepRows[s.row] && keepCols[s.col])
    .map((s) => ({
      row: rowIndex[s.row]!,
      col: colIndex[s.col]!,
      rowspan: keepRows.slice(s.row, s.row + s.rowspan).filter(Boolean).length,
      colspan: keepCols.slice(s.col, s.col + s.colspan).filter(Boolean).length,
    }))
    .filter((s) => s.rowspan > 1 || s.colspan > 1);
  const filledInRow = Math.max(0, ...kept.map((row) => row.filter(Boolean).length));
  const filledInCol = Math.max(0, ...Array.from({ length: kept[0]?.length ?? 0 }, (_, c) => kept.filter((row) => row[c]).length));
  if (filledInRow < 2 || filledInCol < 2) return null;
  return { rect, rows: kept, spans: keptSpans, runs: used };
}

/** The free runs of each row band (by their middle), within the grid's width. */
function rowBands(runs: TextRun[], ys: number[], rect: Rect, taken: Set<number>): TextRun[][] {
  const bands = ys.slice(1).map(() => [] as TextRun[]);
  runs.forEach((run, i) => {
    const cx = (run.x0 + run.x1) / 2;
    const cy = run.baseline - run.size * 0.3;
    if (taken.has(i) || cx < rect.x0 || cx > rect.x1 || cy < rect.y0 || cy > rect.y1) return;
    const r = ys.findIndex((y, k) => k + 1 < ys.length && cy >= y && cy <= ys[k + 1]!);
    if (r >= 0) bands[r]!.push(run);
  });
  return bands;
}

/**
 * Whether a row band's text makes one cell across column edge `x`, where no rule is drawn in most
 * rows (grids ruled across between rows, with vertical rules in the header only, or none): a run
 * crosses the edge, or words on both sides of it stand closer than half an em (a word space). Text on
 * one side only leaves the other slot an empty cell.
 */
function textAcross(band: TextRun[], x: number): boolean {
  if (band.some((run) => run.x0 < x - 0.5 && run.x1 > x + 0.5)) return true;
  for (const line of textLines(band)) {
    const left = line.filter((run) => run.x1 <= x + 0.5);
    const right = line.filter((run) => run.x0 >= x - 0.5);
    if (!left.length || !right.length) continue;
    const gap = Math.min(...right.map((run) => run.x0)) - Math.max(...left.map((run) => run.x1));
    if (gap < line[0]!.size * 0.5) return true;
  }
  return false;
}

/** A gutter this wide (ems) inside a ruled column, open on nearly every line, splits it. */
const SUB_GUTTER = 0.8;

/**
 * Ruled columns that hold several columns of text (rules only between groups of columns, as
 * "Total | Male | Female" over three numbers each): a gutter (text-columns.ts) that the lines of
 * the column leave open, with text on both sides of it on at least three lines and half of them,
 * becomes a column edge with no rule. Whether a row's slots on either side of it are one cell is
 * then up to its text (textAcross). `xs` is edited in place.
 */
function splitTextColumns(runs: TextRun[], xs: number[], ys: number[], taken: Set<number>) {
  const [top, bottom] = [ys[0]!, ys.at(-1)!];
  const inColumn = xs.slice(1).map(() => [] as TextRun[]);
  runs.forEach((run, i) => {
    const cx = (run.x0 + run.x1) / 2;
    const cy = run.baseline - run.size * 0.3;
    if (taken.has(i) || cy < top || cy > bottom) return;
    const k = xs.findIndex((x, j) => j + 1 < xs.length && cx >= x && cx <= xs[j + 1]!);
    if (k >= 0) inColumn[k]!.push(run);
  });
  const added: number[] = [];
  for (const column of inColumn) {
    if (column.length < 6) continue;
    const lines = textLines(column);
    if (lines.length < 3) continue;
    const parts = gutterColumns(lines, SUB_GUTTER);
    for (let k = 1; k < parts.length; k++) {
      const [left, right] = [parts[k - 1]!.x1, parts[k]!.x0];
      const both = lines.filter((l) => l.some((r) => r.x1 <= left + 0.01) && l.some((r) => r.x0 >= right - 0.01)).length;
      // Bullets set apart from their items are a list inside the cell, not a column.
      const bullets = column.filter((r) => r.x1 <= left + 0.01).every((r) => /^[\s\p{P}\p{S}]{1,2}$/u.test(r.text) && !/[()[\]]/.test(r.text));
      if (both >= 3 && both >= lines.length * 0.5 && !bullets) added.push(clearest(lines, left, right));
    }
  }
  xs.push(...added);
  xs.sort((a, b) => a - b);
}

/**
 * Where in a gutter [left, right] the edge goes: the middle of the stretch the fewest lines cross
 * (a gutter lets a few lines cross it: a wide number in a column of narrow ones, a header).
 */
function clearest(lines: TextRun[][], left: number, right: number): number {
  const cuts = [...new Set([left, right, ...lines.flat().flatMap((r) => [r.x0, r.x1]).filter((x) => x > left && x < right)])].sort((a, b) => a - b);
  let best = { at: (left + right) / 2, crossing: Infinity, width: 0 };
  for (let k = 0; k + 1 < cuts.length; k++) {
    const [a, b] = [cuts[k]!, cuts[k + 1]!];
    const crossing = lines.filter((l) => l.some((r) => r.x0 < b - 0.01 && r.x1 > a + 0.01)).length;
    if (crossing < best.crossing || (crossing === best.crossing && b - a > best.width)) best = { at: (a + b) / 2, crossing, width: b - a };
  }
  return best.at;
}

/**
 * Grids ruled only around the header and the whole (rows not separated by rules): a row band
 * that holds three text lines or more, nearly each with text in two or more columns, is split
 * between them, unless most of its lines' cells start in lower case (header cells wrapping side
 * by side) or its lines have neither a label in the first column nor numbers (a header's words
 * stacked in its cells).
 * A cell whose text wraps (more lines in one column only) stays whole. `ys` is edited in place;
 * the added edges are returned (they act as rules across the whole width).
 */
function splitTextRows(runs: TextRun[], ys: number[], xs: number[], taken: Set<number>): number[] {
  const added: number[] = [];
  for (let r = 0; r + 1 < ys.length; r++) {
    const top = ys[r]!;
    const bottom = ys[r + 1]!;
    const inside = runs.filter((run, i) => !taken.has(i) && run.baseline - run.size * 0.3 > top && run.baseline - run.size * 0.3 < bottom && run.x0 >= xs[0]! - 2 && run.x1 <= xs.at(-1)! + 2);
    if (inside.length < 4) continue;
    const lines = textLines(inside);
    // Two lines can be a header that wraps in every column ("Cycle / Name", "KI / (1/km)"); rows come in threes or more.
    if (lines.length < 3) continue;
    const column = (run: TextRun) => xs.findIndex((x, k) => k + 1 < xs.length && (run.x0 + run.x1) / 2 >= x && (run.x0 + run.x1) / 2 <= xs[k + 1]!);
    const spread = lines.map((line) => new Set(line.map(column)).size);
    // A label-only line whose label goes on in lower case on the next line, by the values
    // ("Murder and nonnegligent" over "manslaughter . . . 10.0"), starts that row.
    const labelFirst = (k: number) => {
      const next = lines[k + 1];
      const first = next ? [...next].sort((a, b) => a.x0 - b.x0)[0]! : null;
      return spread[k] === 1 && !!first && spread[k + 1]! >= 2 && column(first) === 0 && /^\p{Ll}/u.test(first.text.trimStart());
    };
    // Every text line spans columns (or starts a row's label): these are rows.
    if (spread.filter((n, k) => n >= 2 || labelFirst(k)).length < lines.length * 0.8) continue;
    // Unless the lines go on from the ones above in most columns: header cells that wrap side by
    // side ("Reclassification" / "from Fair value" / "through profit").
    const starts = lines.slice(1).flatMap((line) => {
      // Each column's first run on the line.
      const first = new Map<number, TextRun>();
      for (const run of line) if (!first.has(column(run)) || run.x0 < first.get(column(run))!.x0) first.set(column(run), run);
      return [...first.values()].map((run) => run.text.trimStart());
    });
    if (starts.filter((t) => /^\p{Ll}/u.test(t)).length >= starts.length * 0.5) continue;
    // Rows have a label in the first column or hold numbers; a header's words stacked in its
    // cells (set centred, so lines start in different columns) have neither.
    const labelled = lines.filter((line) => line.some((run) => column(run) === 0)).length;
    const numbers = inside.filter((run) => /^[\s\d.,−+±×%()\-–/$€£]+$/.test(run.text)).length;
    if (labelled < lines.length * 0.6 && numbers < inside.length * 0.5) continue;
    for (let k = 1; k < lines.length; k++) {
      if ((spread[k]! < 2 && !labelFirst(k)) || labelFirst(k - 1)) continue;
      const above = Math.max(...lines[k - 1]!.map((run) => run.baseline));
      const line = lines[k]!;
      const at = (above + Math.min(...line.map((run) => run.baseline - run.size * 0.75))) / 2;
      added.push(at);
    }
  }
  ys.push(...added);
  ys.sort((a, b) => a - b);
  return added;
}

/** Runs of one cell → its text: lines by baseline top to bottom, runs left to right within a line. */
export function cellText(runs: TextRun[]): string {
  const sorted = [...runs].sort((a, b) => a.baseline - b.baseline || a.x0 - b.x0);
  const lines: TextRun[][] = [];
  for (const run of sorted) {
    const line = lines.at(-1);
    if (line && Math.abs(run.baseline - line[0]!.baseline) <= run.size * 0.45) line.push(run);
    else lines.push([run]);
  }
  let out = "";
  for (const line of lines) {
    line.sort((a, b) => a.x0 - b.x0);
    let text = "";
    let prev: TextRun | null = null;
    for (const run of line) {
      const gap = prev ? run.x0 - prev.x1 : 0;
      text += prev && gap > run.size * 0.15 && !/\s$/.test(text) && !/^\s/.test(run.text) ? ` ${run.text}` : run.text;
      prev = run;
    }
    text = text.replace(/\s+/g, " ").trim();
    if (!text) continue;
    out = out.endsWith("-") && /\p{Ll}/u.test(out.at(-2) ?? "") && /^\p{Ll}/u.test(text) ? out.slice(0, -1) + text : out ? `${out} ${text}` : text;
  }
  return out;
}
