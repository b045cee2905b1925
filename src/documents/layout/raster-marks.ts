/**
 * Marks of a scanned page that are not its text: a scan has no image or drawing operators, so
 * its pictures and charts are looked for in its pixels, as the ink OCR did not read as words.
 * The page is cut into CELL-point cells; a cell holding a few non-paper pixels is ink; cells
 * under OCR's lines of text (and a cell around them) or on a rule are left out; what is left, joined
 * where cells touch, comes out as shapes for the figure finder (figures.ts), which merges close
 * shapes into drawings, takes their labels in, and refuses boxes of prose and specks.
 */
import type { Rect } from "./geometry.ts";
import type { Segment } from "./graphics.ts";
import { luminance, type Raster } from "./raster-rules.ts";

/** Cell side, in points. */
const CELL = 3;
/** Pixels lighter than this (0-255 luminance) are paper, JPEG noise included. */
const PAPER = 200;
/** Non-paper pixels that make a cell ink. */
const INK_PIXELS = 3;
/** Components of fewer cells are specks (dust, a stray dot). */
const MIN_CELLS = 3;

export interface InkGrid {
  columns: number;
  rows: number;
  /** 1 where a cell holds ink, row by row. */
  ink: Uint8Array;
}

/** Which CELL-point cells of a page drawn at `scale` pixels per point hold ink. */
export function inkGrid(raster: Raster, scale: number): InkGrid {
  const { width, height, data } = raster;
  const side = CELL * scale;
  const columns = Math.ceil(width / side);
  const rows = Math.ceil(height / side);
  const counts = new Uint16Array(columns * rows);
  for (let y = 0; y < height; y++) {
    const row = Math.floor(y / side) * columns;
    for (let x = 0, i = y * width * 4; x < width; x++, i += 4) {
      if (luminance(data, i) < PAPER) counts[row + Math.floor(x / side)]!++;
    }
  }
  const ink = new Uint8Array(columns * rows);
  for (let c = 0; c < ink.length; c++) ink[c] = counts[c]! >= INK_PIXELS ? 1 : 0;
  return { columns, rows, ink };
}

/** A connected stretch of ink, in points. */
export interface InkShape extends Rect {
  /** Share of its box that is ink: a picture fills its box, a line drawing or stray text does not. */
  fill: number;
}

/** Shapes (points) of the ink that is neither under `text` (boxes of OCR's lines) nor on `rules` (all in points). */
export function inkShapes(grid: InkGrid, text: Rect[], rules: Segment[]): InkShape[] {
  const { columns, rows } = grid;
  const ink = grid.ink.slice();
  const clear = (x0: number, y0: number, x1: number, y1: number) => {
    for (let r = Math.max(0, Math.floor(y0 / CELL)); r <= Math.min(rows - 1, Math.floor(y1 / CELL)); r++) {
      for (let c = Math.max(0, Math.floor(x0 / CELL)); c <= Math.min(columns - 1, Math.floor(x1 / CELL)); c++) ink[r * columns + c] = 0;
    }
  };
  for (const t of text) clear(t.x0 - CELL, t.y0 - CELL, t.x1 + CELL, t.y1 + CELL);
  for (const s of rules) clear(s.x0 - CELL, s.y0 - CELL, s.x1 + CELL, s.y1 + CELL);
  const shapes: InkShape[] = [];
  const stack: number[] = [];
  for (let start = 0; start < ink.length; start++) {
    if (!ink[start]) continue;
    ink[start] = 0;
    stack.push(start);
    let [c0, r0, c1, r1, cells] = [columns, rows, 0, 0, 0];
    while (stack.length) {
      const cell = stack.pop()!;
      const [r, c] = [Math.floor(cell / columns), cell % columns];
      [c0, r0, c1, r1] = [Math.min(c0, c), Math.min(r0, r), Math.max(c1, c), Math.max(r1, r)];
      cells++;
      for (const [dr, dc] of [[-1, 0], [1, 0], [0, -1], [0, 1]] as const) {
        const [nr, nc] = [r + dr, c + dc];
        if (nr < 0 || nr >= rows || nc < 0 || nc >= columns || !ink[nr * columns + nc]) continue;
        ink[nr * columns + nc] = 0;
        stack.push(nr * columns + nc);
      }
    }
    if (cells < MIN_CELLS) continue;
    // Fill counts all the ink in the box, text and rules too: a photo with words on it still fills it.
    let inked = 0;
    for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) inked += grid.ink[r * columns + c]!;
    shapes.push({ x0: c0 * CELL, y0: r0 * CELL, x1: (c1 + 1) * CELL, y1: (r1 + 1) * CELL, fill: inked / ((c1 - c0 + 1) * (r1 - r0 + 1)) });
  }
  return shapes;
}

/**
 * Marks of one figure on a scan stand farther apart than a PDF's drawing operators (12 points):
 * the text OCR read on a figure (labels, panel letters) is cut out of its ink, and a figure's
 * panels stand apart. Measured on PubLayNet's pages as scans: figure F1 0.40 at 12 points, 0.59
 * at 18, 0.63 at 24 and 36.
 */
export const SCAN_DRAWING_GAP = 24;

/** Pictures fill most of their box (photos, scanned illustrations); shapes that fill less are drawings' marks or stray ink. */
const PICTURE_FILL = 0.5;
/** And are a logo's size at least (points). */
const PICTURE_SIDE = 18;

/**
 * A scan's ink and rules for the figure and table finders. All ink goes in as shapes, pictures
 * too: the panels of one figure stand a few points apart, and shapes that close are merged into
 * one drawing (as images only when they touch). Rules inside a picture are its own edges and
 * contrasts, not a table's, and are dropped.
 */
export function scanMarks(shapes: InkShape[], rules: { horizontal: Segment[]; vertical: Segment[] }): { images: Rect[]; shapes: Rect[]; horizontal: Segment[]; vertical: Segment[] } {
  const pictures = shapes.filter((s) => s.fill >= PICTURE_FILL && s.x1 - s.x0 >= PICTURE_SIDE && s.y1 - s.y0 >= PICTURE_SIDE);
  const within = (r: Segment) => pictures.some((p) => r.x0 >= p.x0 - CELL && r.x1 <= p.x1 + CELL && r.y0 >= p.y0 - CELL && r.y1 <= p.y1 + CELL);
  return {
    images: [],
    shapes: shapes.map(({ x0, y0, x1, y1 }) => ({ x0, y0, x1, y1 })),
    horizontal: rules.horizontal.filter((r) => !within(r)),
    vertical: rules.vertical.filter((r) => !within(r)),
  };
}
