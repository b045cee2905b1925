/**
 * The regions a layout model found (layout-model/), in page units, and the geometry that joins
 * them to the page's text: which region a piece of a line belongs to, which tables and figures
 * the rules found stand where the model saw one, and how a table region's lines become rows when
 * no table finder reads them.
 */
import type { RegionKind } from "../layout-model/detections.ts";
import { area, intersection, type Rect } from "./geometry.ts";

export interface ModelRegion extends Rect {
  kind: RegionKind;
  score: number;
}

/**
 * The region holding the centre of `box`, or -1: the smallest of those that do (a caption's box
 * inside a figure's goes to the caption; a line straddling two regions goes where its middle is).
 */
export function regionAt(regions: readonly ModelRegion[], box: Rect): number {
  const cx = (box.x0 + box.x1) / 2;
  const cy = (box.y0 + box.y1) / 2;
  let best = -1;
  for (let i = 0; i < regions.length; i++) {
    const r = regions[i]!;
    if (cx < r.x0 || cx > r.x1 || cy < r.y0 || cy > r.y1) continue;
    if (best < 0 || area(r) < area(regions[best]!)) best = i;
  }
  return best;
}

/** Whether a table or figure the rules found stands where the model saw one of `kind`: half of the smaller of the two overlaps. */
export function confirmedBy(regions: readonly ModelRegion[], kind: RegionKind, rect: Rect): boolean {
  return regions.some((r) => r.kind === kind && intersection(r, rect) >= Math.min(area(r), area(rect)) * 0.5);
}

interface CellLike {
  text: string;
  x0: number;
  x1: number;
}

/**
 * Rows of a table region's lines when no table finder read them: columns are the x ranges the
 * cells of rows of several cells cover (cells overlapping in x fall into one column; a title or
 * a wrapped label alone on its line would join them all), and each cell goes to the first column
 * it covers (two cells in one column of a row are joined by a space).
 */
export function gridOfLines(lines: readonly { cells: readonly CellLike[] }[]): string[][] {
  const rows = lines.some((l) => l.cells.length > 1) ? lines.filter((l) => l.cells.length > 1) : lines;
  const spans = rows.flatMap((l) => l.cells.map((c) => [c.x0, c.x1] as [number, number])).sort((a, b) => a[0] - b[0]);
  const columns: [number, number][] = [];
  for (const [x0, x1] of spans) {
    const last = columns.at(-1);
    if (last && x0 <= last[1]) last[1] = Math.max(last[1], x1);
    else columns.push([x0, x1]);
  }
  return lines.map((l) => {
    const row: string[] = Array.from({ length: columns.length }, () => "");
    for (const c of l.cells) {
      const centre = (c.x0 + c.x1) / 2;
      // A cell spanning columns (a title, a wrapped label) goes to the first it covers; one between columns to the nearest.
      const gap = ([a, b]: [number, number]) => (centre < a ? a - centre : centre > b ? centre - b : 0);
      let k = columns.findIndex(([a, b]) => c.x0 < b && c.x1 > a);
      if (k < 0) k = columns.reduce((best, column, i) => (gap(column) < gap(columns[best]!) ? i : best), 0);
      row[k] = row[k] ? `${row[k]} ${c.text}` : c.text;
    }
    return row;
  });
}
