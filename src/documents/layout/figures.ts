/**
 * Figures on a PDF page: painted images (touching tiles merged), and vector drawings (charts,
 * diagrams: painted shapes that lie close together, merged). An image needs to be a logo's size
 * at least; a drawing needs some size too, must not be a table's grid or shading, and must not be
 * a box behind prose (a drawing region holding a line of ten words or more is a text box). The
 * short labels inside a drawing (axis ticks, legends) belong to the figure: its runs.
 */
import { area, centreInside, intersection, mergeNear, type Rect } from "./geometry.ts";

export interface Figure {
  rect: Rect;
  source: "image" | "drawing";
  /** Text runs inside a drawing (its labels), taken out of the page's text flow. */
  runs: FigureRun[];
}

interface FigureRun {
  text: string;
  x0: number;
  x1: number;
  baseline: number;
  size: number;
}

/** Images smaller than this share of the page are decoration (bullets, rules, icons). */
const MIN_IMAGE_AREA = 0.004;
/** And narrower or lower than this (points). */
const MIN_IMAGE_SIDE = 18;
/** Drawings need this share of the page and these sides (points). */
const MIN_DRAWING_AREA = 0.006;
const MIN_DRAWING_W = 40;
const MIN_DRAWING_H = 25;
/** Shapes closer than this (points) are one drawing. */
const DRAWING_GAP = 12;

/**
 * `shapes` are painted paths that are not rules; `rules` are the ruling lines no table used (a
 * chart's axes and grid lines join its marks into one drawing).
 */
export function findFigures<R extends FigureRun>(images: Rect[], shapes: Rect[], rules: Rect[], tables: Rect[], runs: R[], page: { width: number; height: number }): (Figure & { runs: R[] })[] {
  const pageArea = page.width * page.height;
  // Rules have no area: their centre says where they are.
  const inTable = (r: Rect) => tables.some((t) => (area(r) > 0 ? intersection(r, t) >= area(r) * 0.5 : centreInside(r, t, 2)));
  const out: (Figure & { runs: R[] })[] = [];
  for (const rect of mergeNear(images.filter((r) => r.x1 - r.x0 > 0 && r.y1 - r.y0 > 0), 1)) {
    const clipped = { x0: Math.max(0, rect.x0), y0: Math.max(0, rect.y0), x1: Math.min(page.width, rect.x1), y1: Math.min(page.height, rect.y1) };
    if (area(clipped) < pageArea * MIN_IMAGE_AREA || clipped.x1 - clipped.x0 < MIN_IMAGE_SIDE || clipped.y1 - clipped.y0 < MIN_IMAGE_SIDE || inTable(clipped)) continue;
    out.push({ rect: clipped, source: "image", runs: [] });
  }
  // Tiny shapes (bullets, checkboxes, underline dots) are not drawings.
  const marks = [...shapes, ...rules].filter((s) => !inTable(s) && (s.x1 - s.x0 > 3 || s.y1 - s.y0 > 3) && area(s) < pageArea * 0.5);
  for (const rect of mergeNear(coarse(marks), DRAWING_GAP)) {
    const w = rect.x1 - rect.x0;
    const h = rect.y1 - rect.y0;
    if (w < MIN_DRAWING_W || h < MIN_DRAWING_H || area(rect) < pageArea * MIN_DRAWING_AREA || inTable(rect)) continue;
    // Rules alone (a frame, separators) are not a drawing: a figure has marks of its own.
    if (!shapes.some((s) => intersection(s, rect) > 0)) continue;
    if (out.some((f) => intersection(f.rect, rect) >= area(rect) * 0.5)) continue;
    const inside = runs.filter((r) => centreInside({ x0: r.x0, x1: r.x1, y0: r.baseline - r.size * 0.7, y1: r.baseline }, rect));
    // A line of ten words inside is prose on a shaded box, not a figure's label.
    if (inside.some((r) => r.text.trim().split(/\s+/).length >= 10)) continue;
    const chars = inside.reduce((n, r) => n + r.text.length, 0);
    if (chars * 40 > area(rect)) continue;
    out.push({ rect, source: "drawing", runs: inside });
  }
  return out;
}

/** Thousands of marks (a scatter plot, hatching) are first pooled per 24-point tile, so merging stays cheap. */
function coarse(rects: Rect[]): Rect[] {
  if (rects.length <= 4000) return rects;
  const tiles = new Map<string, Rect>();
  for (const r of rects) {
    const key = `${Math.floor(r.x0 / 24)},${Math.floor(r.y0 / 24)}`;
    const t = tiles.get(key);
    tiles.set(key, t ? { x0: Math.min(t.x0, r.x0), y0: Math.min(t.y0, r.y0), x1: Math.max(t.x1, r.x1), y1: Math.max(t.y1, r.y1) } : { ...r });
  }
  return [...tiles.values()];
}
