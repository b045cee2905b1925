/**
 * Pages that mix text directions: which text items stand apart from the page's main direction as
 * regions of their own (a sideways table on a page of upright running text; the upright running
 * header, caption or page number of a page printed sideways), so each is laid out in its own
 * upright frame (orientation.ts) instead of as fragments of the other's lines. Items of another
 * direction set among the main text (vertical column headers inside a table, a chart's rotated
 * axis title) stay with it, as before: taken out, they would leave holes in what they belong to.
 */
import { centreInside, mergeNear, union, type Rect } from "./geometry.ts";
import type { Line } from "../page-layout.ts";
import { itemTurn, type Turn } from "./orientation.ts";
import type { Matrix } from "./graphics.ts";

/**
 * On an upright page, sideways text is a region of its own only when it holds this many
 * characters: a table or a paragraph, not a margin stamp or a label. On a page printed sideways,
 * any upright text set apart qualifies (a running header, a page number).
 */
const MIN_SIDEWAYS_CHARS = 80;

interface ItemLike {
  str: string;
  transform: number[];
  width: number;
  height: number;
}

export interface TextRegion {
  turn: Turn;
  /** Indexes of the items in the region. */
  items: Set<number>;
  /** Its extent on the page as drawn (viewport units), one rectangle per cluster of its items. */
  hulls: Rect[];
}

/** The ink box of an item on the page as drawn: along its direction by its width, across it by its size. */
function itemRect(item: ItemLike, viewport: Matrix): Rect {
  const t = item.transform;
  const len = Math.hypot(t[0]!, t[1]!) || 1;
  const size = Math.hypot(t[2]!, t[3]!) || item.height || 10;
  const up = Math.hypot(t[2]!, t[3]!) || 1;
  // PDF user space: origin, the end of the run, and the top of the glyphs.
  const points = [
    [t[4]!, t[5]!],
    [t[4]! + (t[0]! / len) * item.width, t[5]! + (t[1]! / len) * item.width],
    [t[4]! + (t[2]! / up) * size * 0.8, t[5]! + (t[3]! / up) * size * 0.8],
  ].map(([x, y]) => [viewport[0] * x! + viewport[2] * y! + viewport[4], viewport[1] * x! + viewport[3] * y! + viewport[5]] as const);
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
}

/**
 * Items of a direction other than `main` that make regions of their own: their clusters (items
 * within an em or so of each other) that hold no item of another direction, and, on an upright
 * page, hold enough text. Empty for pages of one direction (nearly all).
 */
export function textRegions(items: ItemLike[], viewport: Matrix, main: Turn): TextRegion[] {
  const turns = items.map((item) => (item.str.trim() ? itemTurn(item, viewport) : null));
  const others = new Set(turns.filter((t): t is Turn => t !== null && t !== main));
  if (!others.size) return [];
  const rects = items.map((item, i) => (turns[i] === null ? null : itemRect(item, viewport)));
  const regions: TextRegion[] = [];
  for (const turn of others) {
    const members = items.flatMap((_, i) => (turns[i] === turn ? [i] : []));
    // A cluster with text of another direction inside it belongs with that text.
    const clean = (hull: Rect) => !rects.some((r, i) => r && turns[i] !== turn && centreInside(r, hull, -0.5));
    const apart = joinClean(mergeNear(members.map((i) => rects[i]!), 6).filter(clean), clean);
    for (const hull of apart) {
      const taken = new Set(members.filter((i) => centreInside(rects[i]!, hull, 0.5)));
      const chars = [...taken].reduce((n, i) => n + items[i]!.str.trim().length, 0);
      if (!taken.size || (main === 0 && chars < MIN_SIDEWAYS_CHARS)) continue;
      regions.push({ turn, items: taken, hulls: [hull] });
    }
  }
  return regions;
}

/** Above this many clusters of one direction, they are not joined (pairs are compared). */
const MAX_JOINED = 64;

/**
 * Clusters whose joint extent still holds no text of another direction are one region: the
 * columns of a sideways table stand further apart than its lines, yet nothing else lies between.
 */
function joinClean(hulls: Rect[], clean: (r: Rect) => boolean): Rect[] {
  if (hulls.length > MAX_JOINED) return hulls;
  const out = [...hulls];
  for (let joined = true; joined; ) {
    joined = false;
    for (let i = 0; i < out.length && !joined; i++) {
      for (let j = i + 1; j < out.length && !joined; j++) {
        const u = union(out[i]!, out[j]!);
        if (clean(u)) {
          out.splice(j, 1);
          out[i] = u;
          joined = true;
        }
      }
    }
  }
  return out;
}

/**
 * Whether sideways text on an upright page reads as a block of its own, laid out in its frame:
 * lines of running text or rows of cells. Column headers set vertically make lines of one short
 * cell each, and stay with their table.
 */
export function readsApart(lines: Line[]): boolean {
  const full = lines.filter((l) => l.cells.length >= 2 || l.text.length >= 40);
  return full.length >= 3 && full.length >= lines.length / 2;
}
