/**
 * Columns read from the text itself, for tables whose rules do not draw every column: runs →
 * text lines by baseline, and the free x-intervals (gutters) that the runs of nearly every line
 * leave open. Booktabs tables (booktabs.ts) take all their columns from here; ruled grids
 * (ruled-tables.ts) split a ruled column that holds several columns of text.
 */
import type { TextRun } from "./ruled-tables.ts";

/** Runs → text lines by baseline (within 0.45 em of the line's first), top to bottom. */
export function textLines<R extends TextRun>(runs: R[]): R[][] {
  const lines: R[][] = [];
  for (const run of [...runs].sort((a, b) => a.baseline - b.baseline || a.x0 - b.x0)) {
    const line = lines.at(-1);
    if (line && run.baseline - line[0]!.baseline <= run.size * 0.45) line.push(run);
    else lines.push([run]);
  }
  return lines;
}

/**
 * Column x-intervals: between gutters, the free x-intervals at least `minGutter` em wide that the
 * runs of (nearly) every line leave open. A line may bridge a gutter (pdf.js joins glyphs less
 * than 0.6 em apart into one item, so "Top-1 Latency" can come as one run; a header may span two
 * columns): up to a fifth of the lines (one at least, in tables of four lines or more) may cover it.
 */
export function gutterColumns(lines: TextRun[][], minGutter: number): { x0: number; x1: number }[] {
  const runs = lines.flat();
  const em = runs.reduce((s, r) => s + r.size, 0) / runs.length;
  const edges = [...new Set(runs.flatMap((r) => [r.x0, r.x1]))].sort((a, b) => a - b);
  const allowed = lines.length >= 4 ? Math.max(1, Math.floor(lines.length * 0.2)) : 0;
  const columns: { x0: number; x1: number }[] = [];
  let gapFrom: number | null = null;
  let start = edges[0]!;
  for (let k = 0; k + 1 < edges.length; k++) {
    const [a, b] = [edges[k]!, edges[k + 1]!];
    const covering = lines.filter((l) => l.some((r) => r.x0 < b - 0.01 && r.x1 > a + 0.01)).length;
    if (covering <= allowed) gapFrom ??= a;
    else {
      if (gapFrom !== null && a - gapFrom >= em * minGutter) {
        columns.push({ x0: start, x1: gapFrom });
        start = a;
      }
      gapFrom = null;
    }
  }
  columns.push({ x0: start, x1: edges.at(-1)! });
  return columns;
}
