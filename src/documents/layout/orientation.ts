/**
 * Text printed sideways: the page's dominant text direction, and the frame the page is laid out
 * in so that text reads left to right. A landscape table printed on a portrait page (its lines run
 * up or down the page) is read in its own orientation: the viewport is turned by a quarter (or
 * half) turn before runs and graphics are placed, so line building and layout see horizontal text,
 * and the element boxes found in that frame are turned back to the page as drawn (boxes stay
 * normalized to the page the viewer shows, /Rotate included: pdf.js's viewport applies it).
 */
import type { BoundingBox } from "../types.ts";
import type { Rect } from "./geometry.ts";
import { apply, multiply, type Matrix, type PageGraphics, type Segment } from "./graphics.ts";

/** Quarter turns clockwise that bring the text upright: 0, 1, 2 or 3. */
export type Turn = 0 | 1 | 2 | 3;

/**
 * Sideways text must hold more than this share of the page's characters to turn the whole page:
 * a page of running text with a small rotated label (a margin note, an axis title) stays as it is.
 */
const SIDEWAYS_SHARE = 0.6;

interface ItemLike {
  str: string;
  transform: number[];
}

/** The quarter turn of one item's direction as drawn in the viewport (y grows down); null when oblique. */
export function itemTurn(item: ItemLike, viewport: Matrix): Turn | null {
  const [a, b] = [item.transform[0]!, item.transform[1]!];
  const dx = viewport[0] * a + viewport[2] * b;
  const dy = viewport[1] * a + viewport[3] * b;
  if (!dx && !dy) return null;
  const angle = Math.atan2(dy, dx) / (Math.PI / 2);
  const q = Math.round(angle);
  // Oblique text (a diagonal watermark) says nothing about the page's orientation.
  if (Math.abs(angle - q) > 0.1) return null;
  // Text drawn running down (angle +1) is upright after a quarter turn counter-clockwise: 3 clockwise.
  return (((4 - q) % 4) as Turn);
}

/** The page's text direction: the turn most of its characters need, when it is not upright and they are most of the page. */
export function pageTurn(items: ItemLike[], viewport: Matrix): Turn {
  const chars = [0, 0, 0, 0];
  let total = 0;
  for (const item of items) {
    const n = item.str.trim().length;
    if (!n) continue;
    total += n;
    const turn = itemTurn(item, viewport);
    if (turn !== null) chars[turn] = chars[turn]! + n;
  }
  let best: Turn = 0;
  for (const t of [1, 2, 3] as Turn[]) if (chars[t]! > chars[best]!) best = t;
  return best !== 0 && chars[best]! > total * SIDEWAYS_SHARE ? best : 0;
}

export interface Frame {
  turn: Turn;
  /** Viewport coordinates → the frame's (text upright, origin top-left). */
  matrix: Matrix;
  width: number;
  height: number;
}

/** The frame of a page of the given size (as drawn) turned clockwise by `turn` quarter turns. */
export function frameOf(turn: Turn, width: number, height: number): Frame {
  // Each maps the page's rectangle onto [0, w] x [0, h] of the turned frame.
  const matrices: Record<Turn, Matrix> = {
    0: [1, 0, 0, 1, 0, 0],
    1: [0, 1, -1, 0, height, 0],
    2: [-1, 0, 0, -1, width, height],
    3: [0, -1, 1, 0, 0, width],
  };
  const quarter = turn % 2 === 1;
  return { turn, matrix: matrices[turn], width: quarter ? height : width, height: quarter ? width : height };
}

/** The viewport that places PDF user space straight into the frame. */
export const frameViewport = (frame: Frame, viewport: Matrix): Matrix => multiply(frame.matrix, viewport);

/** A box normalized to the frame → the same box normalized to the page as drawn. */
export function boxToPage(frame: Frame, box: BoundingBox): BoundingBox {
  if (frame.turn === 0) return box;
  const m = frame.matrix;
  // The inverse of the frame's rotation and offset.
  const det = m[0] * m[3] - m[1] * m[2];
  const inv = (x: number, y: number): [number, number] => {
    const [u, v] = [x - m[4], y - m[5]];
    return [(m[3] * u - m[2] * v) / det, (-m[1] * u + m[0] * v) / det];
  };
  const pageWidth = frame.turn % 2 ? frame.height : frame.width;
  const pageHeight = frame.turn % 2 ? frame.width : frame.height;
  const corners = [inv(box.x * frame.width, box.y * frame.height), inv((box.x + box.w) * frame.width, (box.y + box.h) * frame.height)];
  const round = (n: number) => Math.round(n * 1e4) / 1e4;
  const x0 = Math.min(corners[0]![0], corners[1]![0]) / pageWidth;
  const x1 = Math.max(corners[0]![0], corners[1]![0]) / pageWidth;
  const y0 = Math.min(corners[0]![1], corners[1]![1]) / pageHeight;
  const y1 = Math.max(corners[0]![1], corners[1]![1]) / pageHeight;
  return { x: round(x0), y: round(y0), w: round(x1 - x0), h: round(y1 - y0) };
}

/** The inverse of a frame's matrix (a quarter-turn rotation and an offset). */
function inverse(m: Matrix): Matrix {
  const det = m[0] * m[3] - m[1] * m[2];
  const [a, b, c, d] = [m[3] / det, -m[1] / det, -m[2] / det, m[0] / det];
  return [a, b, c, d, -(a * m[4] + c * m[5]), -(b * m[4] + d * m[5])];
}

/** Frame `from` coordinates → frame `to` coordinates. */
const between = (from: Frame, to: Frame): Matrix => multiply(to.matrix, inverse(from.matrix));

function turnRect(m: Matrix, r: Rect): Rect {
  const [ax, ay] = apply(m, r.x0, r.y0);
  const [bx, by] = apply(m, r.x1, r.y1);
  return { x0: Math.min(ax, bx), y0: Math.min(ay, by), x1: Math.max(ax, bx), y1: Math.max(ay, by) };
}

/** A rectangle in one frame's coordinates, in another's. */
export const rectBetween = (from: Frame, to: Frame, r: Rect): Rect => turnRect(between(from, to), r);

/** What the page draws, placed in another frame: a quarter turn makes horizontal rules vertical and back. */
export function graphicsBetween(from: Frame, to: Frame, g: PageGraphics): PageGraphics {
  const m = between(from, to);
  const segments = [...g.horizontal, ...g.vertical].map((s): Segment => turnRect(m, s));
  return {
    images: g.images.map((r) => turnRect(m, r)),
    horizontal: segments.filter((s) => s.y1 - s.y0 < s.x1 - s.x0),
    vertical: segments.filter((s) => s.y1 - s.y0 >= s.x1 - s.x0),
    shapes: g.shapes.map((r) => turnRect(m, r)),
  };
}
