/**
 * Tables without rules: consecutive lines that each split into two or more cells (at wide gaps)
 * whose cells line up in the same columns. Columns come from the rows with the most cells (their
 * cells' x ranges, merged where they overlap); every cell of every row then goes to the column it
 * overlaps most, so a header spanning two columns, or a row with an empty cell, still fits. Prose
 * that merely shares baselines (two columns of text, or body text beside smaller footnotes) and
 * mostly empty grids are not tables.
 *
 * Two-column grids whose first column is a label (bold, or ending in a colon) are form rows:
 * key_value, not a table.
 */
import type { Line } from "../page-layout.ts";

export interface UnruledTable {
  lines: Line[];
  rows: string[][];
  /** Form rows (label, value) rather than a table. */
  keyValue: boolean;
}

/** Prose cut into cells is two columns of text that happen to share baselines, not a table. */
function isProse(lines: Line[]): boolean {
  const cells = lines.flatMap((l) => l.cells);
  const long = cells.filter((c) => c.text.length >= 30 && c.text.split(" ").length >= 5).length;
  return long >= cells.length * 0.5;
}

/** A cell's size: that of most of its characters (a footnote mark or subscript does not count). */
function cellSize(cell: Line["cells"][number]): number {
  const weight = new Map<number, number>();
  for (const r of cell.runs) weight.set(r.size, (weight.get(r.size) ?? 0) + r.text.length);
  return [...weight].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 0;
}

/**
 * Columns of text in different type that share baselines (body text beside a column of
 * footnotes): in a table the cells of a row are set in one size.
 */
function mixedSizes(lines: Line[]): boolean {
  const mixed = lines.filter((l) => {
    const sizes = l.cells.map(cellSize);
    return Math.max(...sizes) > Math.min(...sizes) * 1.15;
  }).length;
  return mixed >= lines.length * 0.5;
}

/**
 * A display formula set on several baselines (a fraction, sub- and superscripts, brackets) splits
 * into cells too: fragments of a few characters, many of them operators, brackets or Greek.
 */
function isFormula(lines: Line[]): boolean {
  const cells = lines.flatMap((l) => l.cells.map((c) => c.text));
  // Numbers in a data table ("−3.2", "4.1 ± 0.2", "(12%)") are not formula fragments.
  const numeric = (t: string) => /^[\s\d.,−+±×%()\-–/]+$/.test(t);
  const math = cells.filter((t) => !numeric(t) && /[=+−∑∏∫∂√∇≤≥≈∈∞→·]|^[()[\]{}|⟨⟩]+$|^[\p{Script=Greek}]/u.test(t)).length;
  const lengths = cells.map((t) => t.length).sort((a, b) => a - b);
  const median = lengths[Math.floor(lengths.length / 2)] ?? 0;
  return math >= cells.length * 0.3 || (lines.length <= 3 && median <= 2);
}

/** Cells of several rows → rows of column texts, or null when they do not share columns. */
export function alignRows(lines: Line[]): string[][] | null {
  const most = Math.max(...lines.map((l) => l.cells.length));
  // Columns from the fullest rows (at least two of them, or else every row).
  let full = lines.filter((l) => l.cells.length === most);
  if (full.length < 2) full = lines;
  const spans = full.flatMap((l) => l.cells.map((c) => ({ x0: c.x0, x1: c.x1 }))).sort((a, b) => a.x0 - b.x0);
  const columns: { x0: number; x1: number }[] = [];
  for (const s of spans) {
    const last = columns.at(-1);
    if (last && s.x0 < last.x1) last.x1 = Math.max(last.x1, s.x1);
    else columns.push({ ...s });
  }
  if (columns.length < 2) return null;
  const rows: string[][] = [];
  let filled = 0;
  for (const line of lines) {
    const row = Array<string>(columns.length).fill("");
    for (const cell of line.cells) {
      // The column overlapping the cell most; a cell between columns goes to the nearest.
      let best = -1;
      let score = -Infinity;
      columns.forEach((c, i) => {
        const overlap = Math.min(c.x1, cell.x1) - Math.max(c.x0, cell.x0);
        const s = overlap > 0 ? overlap : -Math.min(Math.abs(c.x0 - cell.x1), Math.abs(cell.x0 - c.x1)) - 1000;
        if (s > score) [best, score] = [i, s];
      });
      if (score < -1000 - line.size * 2) return null;
      // Two cells in one column: the row does not follow the columns (unless a full row is all of it).
      if (row[best]) {
        if (line.cells.length <= columns.length) return null;
        row[best] += ` ${cell.text}`;
      } else row[best] = cell.text;
      filled++;
    }
    rows.push(row);
  }
  // Mostly empty grids are scattered text, not tables (single-cell rows, section labels, count for little).
  const multi = lines.filter((l) => l.cells.length >= 2);
  const multiFilled = multi.reduce((n, l) => n + l.cells.length, 0);
  if (multiFilled < multi.length * columns.length * 0.5 || filled === 0) return null;
  return rows;
}

/** An equation's number at the right margin: "(3)", "(2.14a)". */
const EQUATION_NUMBER = /^\(\d{1,3}(?:\.\d{1,3})*[a-z]?\)$/;
/** A section number set apart from its title by a wide space: "4", "2.3", "B.", "IV.". */
const SECTION_NUMBER = /^(?:\d{1,2}(?:\.\d{1,2})*\.?|[A-H]\.|[IVX]{1,5}\.)$/;

/**
 * Lines that split into cells without being table rows: a numbered equation, a numbered section
 * title, a line of running prose (a cell of eight words or more: two columns of text side by side).
 */
function notARow(line: Line): boolean {
  const cells = line.cells;
  if (cells.some((c) => c.text.length >= 45 && c.text.split(" ").length >= 8)) return true;
  if (cells.some((c) => EQUATION_NUMBER.test(c.text))) return true;
  return cells.length === 2 && SECTION_NUMBER.test(cells[0]!.text) && /^[\p{Lu}\p{Lo}]/u.test(cells[1]!.text) && !/\d/.test(cells[1]!.text) && cells[1]!.text.split(" ").length <= 10;
}

/**
 * Runs of consecutive multi-cell lines that align into columns, page-wide, top to bottom. One or
 * two single-cell lines between such lines stay in the table when they sit inside its left part
 * (a row label that wrapped, a section row such as "Race/ethnicity"), and rows follow each other
 * at most 2.6 lines apart (4.5 when the next row has the same columns as the last: groups of rows
 * set apart). A row label wrapped around its values (label line, values, label line) is one row.
 */
export function unruledTables(lines: Line[]): UnruledTable[] {
  const out: UnruledTable[] = [];
  const near = (a: Line, b: Line) => b.baseline - a.baseline <= Math.max(a.size, b.size) * 2.6;
  let i = 0;
  // Single-cell lines (most of a page) skip the row tests.
  const cellsOf = (l: Line) => (l.cells.length < 2 || notARow(l) ? Math.min(1, l.cells.length) : l.cells.length);
  while (i < lines.length) {
    if (cellsOf(lines[i]!) < 2) {
      i++;
      continue;
    }
    const group: Line[] = [lines[i]!];
    let j = i + 1;
    while (j < lines.length) {
      const line = lines[j]!;
      // Groups of rows set further apart still follow on when the next row has the same columns.
      const lastRow = group.findLast((l) => l.cells.length >= 2)!;
      if (!near(group.at(-1)!, line) && !(line.baseline - group.at(-1)!.baseline <= line.size * GROUP_STEP && sameColumns(lastRow, line))) break;
      if (cellsOf(line) >= 2) {
        group.push(line);
        j++;
        continue;
      }
      // Bridge one or two single-cell lines when a multi-cell line follows.
      const x0 = Math.min(...group.map((l) => l.x0));
      const x1 = Math.max(...group.map((l) => l.x1));
      const secondColumn = Math.min(...group.filter((l) => l.cells.length >= 2).map((l) => l.cells[1]!.x0));
      let k = j;
      // A label in the first column, or a short heading over the columns ("Actual", "Projected").
      const inside = (l: Line) => l.x0 >= x0 - l.size && (l.x1 <= Math.max(secondColumn, x0 + (x1 - x0) * 0.5) || (l.text.length <= 30 && l.x1 <= x1 + l.size));
      while (k < lines.length && k < j + 2 && lines[k]!.cells.length === 1 && inside(lines[k]!) && near(k === j ? group.at(-1)! : lines[k - 1]!, lines[k]!)) k++;
      if (k > j && k < lines.length && cellsOf(lines[k]!) >= 2 && near(lines[k - 1]!, lines[k]!)) {
        group.push(...lines.slice(j, k));
        j = k;
      } else break;
    }
    // The last line of a row label centred on its values ("Premature mortality (years of" over
    // the values, "lost before age 75)" under them).
    const [beforeLast, last, after] = [group.at(-2), group.at(-1)!, lines[j]];
    if (beforeLast && after && beforeLast.cells.length === 1 && after.cells.length === 1 && last.cells.length >= 2 && last.x0 > beforeLast.x1 && after.x1 < last.x0 && Math.abs(after.x0 - beforeLast.x0) < after.size && after.baseline - last.baseline < after.size * 1.5) {
      group.push(after);
      j++;
    }
    const multi = group.filter((l) => l.cells.length >= 2);
    if (multi.length >= 2 && !isProse(multi) && !isFormula(multi) && !mixedSizes(multi)) {
      const rows = alignRows(group);
      if (rows) out.push({ lines: group, rows: joinCentredLabels(rows), keyValue: formRows(group, rows) });
    }
    i = j;
  }
  return out;
}

/** Rows of a table may stand this many ems apart (baseline to baseline) when their columns match. */
const GROUP_STEP = 4.5;

/** Two lines with the same number of cells, each over the other's. */
function sameColumns(a: Line, b: Line): boolean {
  return a.cells.length === b.cells.length && a.cells.every((c, i) => Math.min(c.x1, b.cells[i]!.x1) - Math.max(c.x0, b.cells[i]!.x0) > 0);
}

/**
 * A row label that wraps with its values set on its middle line: a label-only row, a row of
 * values with no label, and a label-only row that does not itself start the next such row, are
 * one row.
 */
function joinCentredLabels(rows: string[][]): string[][] {
  const labelOnly = (r: string[] | undefined) => !!r && !!r[0] && r.slice(1).every((c) => !c);
  const valuesOnly = (r: string[] | undefined) => !!r && !r[0] && r.slice(1).some(Boolean);
  const out: string[][] = [];
  for (let i = 0; i < rows.length; i++) {
    if (!(labelOnly(rows[i]) && valuesOnly(rows[i + 1]))) {
      out.push(rows[i]!);
      continue;
    }
    const row = [rows[i]![0]!, ...rows[i + 1]!.slice(1)];
    i++;
    if (labelOnly(rows[i + 1]) && !valuesOnly(rows[i + 2])) {
      row[0] += ` ${rows[i + 1]![0]}`;
      i++;
    }
    out.push(row);
  }
  return out;
}

/** Two columns whose first holds labels: bold ones over a regular value, or ones ending in a colon. */
function formRows(lines: Line[], rows: string[][]): boolean {
  if (rows[0]!.length !== 2 || rows.some((r) => !r[0] || !r[1])) return false;
  if (rows.every((r) => /:$/.test(r[0]!) && r[0]!.length <= 40)) return true;
  const labelBold = lines.every((l) => l.cells[0]!.runs.every((r) => r.bold));
  const valueBold = lines.some((l) => l.cells.slice(1).some((c) => c.runs.some((r) => r.bold)));
  return labelBold && !valueBold && rows.every((r) => r[0]!.length <= 40);
}
