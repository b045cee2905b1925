/**
 * Tables ruled with horizontal rules only (booktabs: a rule over the header, one under it, one at
 * the end; no vertical rules), whose columns may stand closer than the gap that splits a line into
 * cells (page-layout.ts's CELL_GAP). Rules of the same extent (ends within RULE_SLACK) that follow
 * each other down the page bound a candidate while each band between two of them reads as rows
 * (half its lines at least split into pieces set apart, none of running prose: a caption or note
 * between two tables' rules ends the first). Its text runs are grouped into rows by baseline and
 * into columns by the free x-intervals that the runs of nearly every row leave open (the header's
 * runs are left out of that, as a header cell may span columns); a run that bridges a column gap
 * is split at its spaces. It is a table when at least two rows fill two columns or more and its
 * cells are not prose. The header row is a split line just over the top rule, else the lines (up
 * to three: a header that wraps) above the first inner rule.
 *
 * Rules that separate rows of text (a sentence or a paragraph each: a table of examples) make a
 * table when a caption ("Table 4: ...") sits right over the top rule or under the bottom one, and
 * there are two rows at least: each band is a row, split into columns only at wide gutters. They
 * are looked for also where the rows' lines split into pieces but make no table of cells: OCR
 * sets the words of a scan's justified lines apart.
 */
import type { Rect } from "./geometry.ts";
import type { Segment } from "./graphics.ts";
import { cellText, mergeCollinear, type FoundTable, type TextRun } from "./ruled-tables.ts";
import { gutterColumns, textLines } from "./text-columns.ts";

/** Rules whose ends are this close (points) have the same extent. */
const RULE_SLACK = 6;
/** Rules shorter than this (points) are underlines, not table rules. */
const MIN_RULE = 40;
/** A free x-interval this wide (ems) between runs of every row separates two columns. */
const MIN_GUTTER = 0.4;
/** A header over the top rule sits within this many ems of it (baseline to rule). */
const HEADER_ABOVE = 1.8;
/** Lines above the first inner rule that make one header row at most (a header that wraps). */
const MAX_HEADER_LINES = 3;
/** More horizontal rules than this on a page: hatching or ruled paper, not tables. */
const MAX_RULES = 400;
/** A row of text (a captioned table of sentences) holds at most this many lines. */
const MAX_TEXT_ROW_LINES = 15;
/** A table's caption sits within this many ems of its top or bottom rule (baseline to rule). */
const CAPTION_GAP = 2.2;
const TABLE_CAPTION = /^(?:table|tab\.|tabelle|tableau|tabla)\s*[\p{N}IVX]+\s*[.:]/iu;
/** Consecutive rows at most this many ems apart (baseline to baseline) belong to one table. */
const MAX_ROW_STEP = 2.6;

/** A line of pieces set apart (MIN_GUTTER em or more): it may be a row of cells. */
const split = (line: TextRun[]) => {
  const sorted = [...line].sort((a, b) => a.x0 - b.x0);
  return sorted.some((r, i) => i > 0 && r.x0 - sorted[i - 1]!.x1 >= r.size * MIN_GUTTER);
};
/** Running prose: a piece of ten words or more. */
const proseRun = (line: TextRun[]) => line.some((r) => r.text.length >= 60 && r.text.trim().split(/\s+/).length >= 10);
/** Lines that read as table rows: half of them at least split into pieces, none of running prose. */
const tabular = (lines: TextRun[][]) => lines.filter(split).length >= lines.length * 0.5 && !lines.some(proseRun);
const sameExtent = (a: Segment, b: Segment) => Math.abs(a.x0 - b.x0) <= RULE_SLACK && Math.abs(a.x1 - b.x1) <= RULE_SLACK;
const middle = (run: TextRun) => run.baseline - run.size * 0.3;

/** A run that bridges columns, split into its words (placed by their share of its characters). */
function pieces(run: TextRun, columns: { x0: number; x1: number }[]): TextRun[] {
  const spanned = columns.filter((c) => Math.min(c.x1, run.x1) - Math.max(c.x0, run.x0) > 0).length;
  if (spanned < 2 || !/\S\s+\S/.test(run.text)) return [run];
  const per = (run.x1 - run.x0) / run.text.length;
  return [...run.text.matchAll(/\S+/g)].map((m) => ({ ...run, text: m[0], x0: run.x0 + m.index * per, x1: run.x0 + (m.index + m[0].length) * per }));
}

/** The column holding a run's centre, or the nearest one. */
function columnOf(run: TextRun, columns: { x0: number; x1: number }[]): number {
  const x = (run.x0 + run.x1) / 2;
  let best = 0;
  let distance = Infinity;
  columns.forEach((c, i) => {
    const d = x < c.x0 ? c.x0 - x : x > c.x1 ? x - c.x1 : 0;
    if (d < distance) [best, distance] = [i, d];
  });
  return best;
}

/** Long runs of words in most cells: text set between rules (a boxed note), not a table. */
const prose = (cells: string[]) => cells.filter((c) => c.length >= 30 && c.split(" ").length >= 5).length >= cells.length * 0.5;

/**
 * Booktabs tables on a page. `runs` are the page's text runs (FoundTable.runs index them), `taken`
 * the indexes already in other tables, `exclude` the rects of tables found from ruling grids.
 */
export function booktabsTables(runs: TextRun[], horizontal: Segment[], exclude: Rect[], taken: Set<number>): FoundTable[] {
  const inside = (s: Segment) => exclude.some((r) => s.y0 >= r.y0 - 3 && s.y0 <= r.y1 + 3 && s.x0 >= r.x0 - 3 && s.x1 <= r.x1 + 3);
  const rules = mergeCollinear(horizontal, true)
    .filter((h) => h.x1 - h.x0 >= MIN_RULE && !inside(h))
    .sort((a, b) => a.y0 - b.y0);
  // Pages of hatching or ruled paper hold hundreds of rules: no table is looked for there.
  if (rules.length < 2 || rules.length > MAX_RULES) return [];
  // Free runs by height on the page, so a band's runs are a binary search away.
  const free = runs
    .map((_, i) => i)
    .filter((i) => !taken.has(i))
    .sort((a, b) => middle(runs[a]!) - middle(runs[b]!));
  const firstBelow = (y: number) => {
    let [lo, hi] = [0, free.length];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (middle(runs[free[mid]!]!) <= y) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const tables: FoundTable[] = [];
  const used = new Set<Segment>();
  const bandOf = (prev: Segment, next: Segment, top: Segment) =>
    free.slice(firstBelow(prev.y0), firstBelow(next.y0 - 1e-9)).filter((i) => {
      const run = runs[i]!;
      const x = (run.x0 + run.x1) / 2;
      return middle(run) < next.y0 && x >= top.x0 - 2 && x <= top.x1 + 2;
    });
  /**
   * The rules of the same extent below `top`, as long as each band between two of them holds
   * rows (`strict`: lines split into pieces; else any text of a few lines, for a captioned table
   * of text cells) and follows the band above closely.
   */
  const chainFrom = (top: Segment, strict: boolean) => {
    const chain = [top];
    const bands: number[][] = [];
    for (const next of rules) {
      if (next.y0 <= chain.at(-1)!.y0 + 1 || !sameExtent(top, next)) continue;
      const band = bandOf(chain.at(-1)!, next, top);
      // A band of mostly whole lines (a caption or note between two tables' rules, a glossary
      // entry's prose) ends the table: rows are pieces set apart.
      const lines = band.length ? textLines(band.map((i) => runs[i]!)) : [];
      if (!band.length || (strict ? !tabular(lines) : lines.length > MAX_TEXT_ROW_LINES)) break;
      // Rows follow each other: the band's first line sits close under the last row above it.
      const lastAbove = bands.length ? Math.max(...bands.flat().map((i) => runs[i]!.baseline)) : null;
      const first = Math.min(...band.map((i) => runs[i]!.baseline));
      const size = runs[band[0]!]!.size;
      if (lastAbove !== null && first - lastAbove > size * MAX_ROW_STEP * 1.5) break;
      chain.push(next);
      bands.push(band);
    }
    return { chain, bands };
  };
  /** A caption ("Table 4: ...") on the line right over the top rule or under the bottom one. */
  const captioned = (chain: Segment[], size: number) => {
    const [top, bottom] = [chain[0]!, chain.at(-1)!];
    const near = (from: number, to: number) => textLines(free.slice(firstBelow(from), firstBelow(to)).map((i) => runs[i]!).filter((r) => r.x0 >= top.x0 - size * 2 && r.x1 <= top.x1 + size * 2));
    const over = near(top.y0 - size * CAPTION_GAP, top.y0 - 1e-9).at(-1);
    const under = near(bottom.y0, bottom.y0 + size * CAPTION_GAP)[0];
    return [over, under].some((l) => l && TABLE_CAPTION.test(cellText(l)));
  };
  /** A table of rows split into cells from the rules down from `top`, with a header set over it. */
  const rowsTable = (top: Segment) => {
    const { chain, bands } = chainFrom(top, true);
    if (chain.length < 2) return null;
    const indexes = bands.flat();
    // A header set just over the top rule, with no rule of its own above it: the closest line
    // above, when it is split into pieces (a caption there is one piece).
    const above = free.slice(firstBelow(top.y0 - runs[indexes[0] ?? 0]!.size * HEADER_ABOVE), firstBelow(top.y0 - 1e-9)).filter((i) => {
      const run = runs[i]!;
      return run.x0 >= top.x0 - 2 && run.x1 <= top.x1 + 2;
    });
    const over = textLines(above.map((i) => runs[i]!)).at(-1);
    const headerAbove = over && split(over) && !proseRun(over) ? above.filter((i) => over.includes(runs[i]!)) : [];
    const table = tableOf(runs, [...headerAbove, ...indexes], chain, headerAbove.length > 0);
    return table && { table, chain };
  };
  /**
   * Rows of text (a sentence or a paragraph each) between rules, under a table's caption; also
   * when the rows' lines split into pieces (OCR's words of justified prose stand apart) but are
   * not a table of cells.
   */
  const textRows = (top: Segment) => {
    const { chain, bands } = chainFrom(top, false);
    const size = bands[0] ? runs[bands[0][0]!]!.size : 0;
    return chain.length >= 3 && captioned(chain, size) ? { table: textRowsTable(runs, chain, bands), chain } : null;
  };
  for (const top of rules) {
    if (used.has(top)) continue;
    const found = rowsTable(top) ?? textRows(top);
    if (!found) continue;
    tables.push(found.table);
    for (const rule of found.chain) used.add(rule);
    for (const i of found.table.runs) taken.add(i);
  }
  return tables;
}

/**
 * A captioned table whose rows are text between rules: each band a row, split into columns where
 * its lines leave a gutter open (one column when none: a table of examples or quotations).
 */
function textRowsTable(runs: TextRun[], chain: Segment[], bands: number[][]): FoundTable {
  const all = bands.flat();
  const columns = gutterColumns(textLines(all.map((i) => runs[i]!)), MIN_GUTTER * 2);
  const rows = bands.map((band) => {
    const cells = columns.map(() => [] as TextRun[]);
    for (const i of band) cells[columnOf(runs[i]!, columns)]!.push(runs[i]!);
    return cells.map(cellText);
  });
  const rect = { x0: Math.min(chain[0]!.x0, ...all.map((i) => runs[i]!.x0)), y0: chain[0]!.y0, x1: Math.max(chain[0]!.x1, ...all.map((i) => runs[i]!.x1)), y1: chain.at(-1)!.y0 };
  return { rect, rows, spans: [], runs: new Set(all) };
}

function tableOf(runs: TextRun[], indexes: number[], chain: Segment[], headerAbove: boolean): FoundTable | null {
  const lines = textLines(indexes.map((i) => runs[i]!));
  if (lines.length < 2) return null;
  for (let k = 1; k < lines.length; k++) {
    if (lines[k]![0]!.baseline - lines[k - 1]![0]!.baseline > lines[k]![0]!.size * MAX_ROW_STEP * 1.5) return null;
  }
  // The header: the line over the top rule, else the lines above the first inner rule when they
  // are few (a header that wraps; more are a group of rows) and leave rows under the rule.
  const inner = chain.slice(1, -1);
  const headerLines = headerAbove ? 1 : inner.length ? lines.filter((l) => middle(l[0]!) < inner[0]!.y0).length : 0;
  const head = headerLines > 0 && headerLines <= MAX_HEADER_LINES && headerLines < lines.length - 1 ? headerLines : 0;
  const body = lines.slice(head);
  const columns = gutterColumns(body.length >= 2 ? body : lines, MIN_GUTTER);
  if (columns.length < 2) return null;
  const cellsOf = (line: TextRun[]) => {
    const cells = columns.map(() => [] as TextRun[]);
    for (const run of line) for (const piece of pieces(run, columns)) cells[columnOf(piece, columns)]!.push(piece);
    return cells.map(cellText);
  };
  const header = head ? cellsOf(lines.slice(0, head).flat()) : null;
  const rows = [...(header ? [header] : []), ...body.map(cellsOf)];
  const filled = rows.filter((r) => r.filter(Boolean).length >= 2).length;
  if (filled < 2 || prose(rows.flat().filter(Boolean))) return null;
  const all = lines.flat();
  const rect = { x0: Math.min(chain[0]!.x0, ...all.map((r) => r.x0)), y0: Math.min(chain[0]!.y0, ...all.map((r) => r.baseline - r.size)), x1: Math.max(chain[0]!.x1, ...all.map((r) => r.x1)), y1: chain.at(-1)!.y0 };
  return { rect, rows, spans: [], runs: new Set(indexes) };
}
