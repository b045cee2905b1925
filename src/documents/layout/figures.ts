/**
 * Figures on a PDF page: painted images (touching tiles merged), and vector drawings (charts,
 * diagrams: painted shapes that lie close together, merged). An image needs to be a logo's size
 * at least; a drawing needs some size too, must not be a table's grid or shading, and must not be
 * a box behind prose (a drawing region holding a line of ten words or more is a text box). The
 * short labels inside a drawing (axis ticks, legends) belong to the figure: its runs; so do small
 * labels just outside its marks (tick labels under an axis), and the parts of a diagram that its
 * labels join, with thumbnails too small to be figures of their own, make one figure.
 */
import { area, centreInside, intersection, mergeNear, union, type Rect } from "./geometry.ts";

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
export function findFigures<R extends FigureRun>(
  images: Rect[],
  shapes: Rect[],
  rules: Rect[],
  tables: Rect[],
  runs: R[],
  page: { width: number; height: number },
  drawingGap = DRAWING_GAP,
): (Figure & { runs: R[] })[] {
  const pageArea = page.width * page.height;
  // Rules have no area: their centre says where they are.
  const inTable = (r: Rect) => tables.some((t) => (area(r) > 0 ? intersection(r, t) >= area(r) * 0.5 : centreInside(r, t, 2)));
  const out: (Figure & { runs: R[] })[] = [];
  // Images too small to stand alone (thumbnails in a diagram) may still be part of a drawing.
  const smallImages: Rect[] = [];
  for (const rect of mergeNear(images.filter((r) => r.x1 - r.x0 > 0 && r.y1 - r.y0 > 0), 1)) {
    const clipped = { x0: Math.max(0, rect.x0), y0: Math.max(0, rect.y0), x1: Math.min(page.width, rect.x1), y1: Math.min(page.height, rect.y1) };
    if (inTable(clipped)) continue;
    if (area(clipped) < pageArea * MIN_IMAGE_AREA || clipped.x1 - clipped.x0 < MIN_IMAGE_SIDE || clipped.y1 - clipped.y0 < MIN_IMAGE_SIDE) {
      if (area(clipped) > 0) smallImages.push(clipped);
      continue;
    }
    out.push({ rect: clipped, source: "image", runs: [] });
  }
  // Tiny shapes (bullets, checkboxes, underline dots) are not drawings.
  const marks = [...shapes, ...rules, ...smallImages].filter((s) => !inTable(s) && (s.x1 - s.x0 > 3 || s.y1 - s.y0 > 3) && area(s) < pageArea * 0.5);
  for (const rect of withLabels(mergeNear(coarse(marks), drawingGap), labelsOf(runs), drawingGap)) {
    const w = rect.x1 - rect.x0;
    const h = rect.y1 - rect.y0;
    if (w < MIN_DRAWING_W || h < MIN_DRAWING_H || area(rect) < pageArea * MIN_DRAWING_AREA || inTable(rect)) continue;
    // Rules alone (a frame, separators) are not a drawing: a figure has marks of its own.
    if (!shapes.some((s) => intersection(s, rect) > 0) && !smallImages.some((s) => intersection(s, rect) > 0)) continue;
    if (out.some((f) => intersection(f.rect, rect) >= area(rect) * 0.5)) continue;
    const inside = runs.filter((r) => centreInside({ x0: r.x0, x1: r.x1, y0: r.baseline - r.size * 0.7, y1: r.baseline }, rect));
    // A line of ten words inside is prose on a shaded box, not a figure's label.
    if (longestLine(inside) >= 10) continue;
    const chars = inside.reduce((n, r) => n + r.text.length, 0);
    if (chars * 40 > area(rect)) continue;
    out.push({ rect, source: "drawing", runs: inside });
  }
  return out;
}

const CAPTION = /^(?:fig(?:ure)?\.?|table|tab\.|abbildung|tabelle|chart|graph|exhibit|plate|scheme)\s*[\p{N}IVX]+/iu;
/** A label is this close (points) to its drawing's marks. */
const LABEL_GAP = 8;

/**
 * Labels a drawing may have around its marks (axis ticks and titles, the names beside a
 * diagram's boxes): short runs, of at most four words, set smaller than the page's usual text,
 * which headings and body lines next to a figure are not.
 */
function labelsOf<R extends FigureRun>(runs: R[]): Rect[] {
  const sizes = runs.flatMap((r) => Array<number>(Math.min(200, r.text.length)).fill(r.size)).sort((a, b) => a - b);
  const usual = sizes[Math.floor(sizes.length / 2)] ?? 0;
  // A caption set small under the figure ("Fig. 1. Overview") is text of its own, all its line.
  const captions = runs.filter((r) => CAPTION.test(r.text.trim())).map((r) => r.baseline);
  return runs
    .filter((r) => r.size < usual * 0.9 && r.text.trim().length <= 30 && r.text.trim().split(/\s+/).length <= 4 && !captions.some((b) => Math.abs(b - r.baseline) < r.size * 0.5))
    .map((r) => ({ x0: r.x0, x1: r.x1, y0: r.baseline - r.size * 0.8, y1: r.baseline + r.size * 0.2 }));
}

/**
 * Drawings grown by the labels next to them, then merged again where they now touch: the parts
 * of one diagram whose labels fill the space between them are one figure.
 */
function withLabels(drawings: Rect[], labels: Rect[], drawingGap: number): Rect[] {
  if (!labels.length || !drawings.length) return drawings;
  const near = (a: Rect, b: Rect) => a.x0 <= b.x1 + LABEL_GAP && b.x0 <= a.x1 + LABEL_GAP && a.y0 <= b.y1 + LABEL_GAP && b.y0 <= a.y1 + LABEL_GAP;
  let current = drawings;
  for (let pass = 0; pass < 4; pass++) {
    const grown = current.map((d) => {
      let r = d;
      for (const l of labels) if (near(r, l)) r = union(r, l);
      return r;
    });
    const merged = mergeNear(grown, drawingGap);
    const same = merged.length === current.length && merged.every((m, i) => area(m) === area(current[i]!));
    current = merged;
    if (same) break;
  }
  return current;
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

/**
 * Most words in one stretch of a line of prose among `runs` (runs may be single words, as OCR's
 * are): words follow each other less than PHRASE_GAP ems apart, and half of them at least are
 * words of running text in small letters. A row of a diagram's labels side by side across its
 * boxes ("2x2 Max-pooling 8x15 2048 2x2 Max-pooling 17x30 1024") is not prose.
 */
function longestLine(runs: FigureRun[]): number {
  const lines: { baseline: number; size: number; runs: FigureRun[] }[] = [];
  for (const r of runs) {
    const line = lines.find((l) => Math.abs(l.baseline - r.baseline) < Math.max(l.size, r.size) * 0.5);
    if (line) line.runs.push(r);
    else lines.push({ baseline: r.baseline, size: r.size, runs: [r] });
  }
  let most = 0;
  for (const line of lines) {
    let [words, lower, end] = [0, 0, -Infinity];
    for (const r of line.runs.sort((a, b) => a.x0 - b.x0)) {
      if (r.x0 - end > r.size * PHRASE_GAP) [words, lower] = [0, 0];
      const these = r.text.trim().split(/\s+/).filter(Boolean);
      words += these.length;
      lower += these.filter((w) => SMALL_WORD.test(w)).length;
      end = Math.max(end, r.x1);
      if (lower * 2 >= words) most = Math.max(most, words);
    }
  }
  return most;
}

/** A word of running text: small letters, maybe a closing mark ("the", "sample,"). */
const SMALL_WORD = /^\p{Ll}[\p{Ll}'’-]*[,.;:!?)]*$/u;

/** Words of a sentence stand closer than this (ems; a justified line's widest spaces ~1 em). */
const PHRASE_GAP = 1.5;
