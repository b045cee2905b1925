/**
 * Reading order over the whole page: a recursive XY-cut that keeps columns together.
 *
 * The page's atoms (pieces of text lines between wide gaps, and tables and figures as solid blocks)
 * are cut into horizontal strips at every gap that no atom spans. Each strip finds its gutter: a
 * vertical gap with a column on both sides (text at least 12% of the page wide, or a block), the
 * widest unless another lines up with the nearest strip's gutter (the page's columns), or with
 * the gutter of the stretch above (three columns, one of them pausing). Strips
 * that share a gutter, or that lie wholly on one side of their neighbour's gutter, join into one
 * stretch; a strip that crosses the gutter (a full-width title, table or figure) breaks the columns.
 * A stretch with a gutter is read left side first, then right, each side cut again the same way
 * (three columns, a figure inside a column); a stretch without one is read top to bottom. So a
 * gutter that starts below a full-width title, or stops above a full-width table, is still found,
 * and a column that ends early is not interleaved with the other one.
 */
import type { Rect } from "./geometry.ts";

export interface Atom extends Rect {
  /** Characters of text (0 for blocks). */
  chars: number;
  /** A table or figure: a column on its own whatever its width. */
  block?: boolean;
}

/** Gaps narrower than this (points) are not gutters. */
const MIN_GUTTER = 6;
/** A column's text is at least this share of the page wide. */
const MIN_COLUMN = 0.12;

/** Free vertical gaps of the atoms (x intervals no atom covers), widest first. */
function xGaps(atoms: Atom[]): [number, number][] {
  const sorted = [...atoms].sort((a, b) => a.x0 - b.x0);
  const gaps: [number, number][] = [];
  let reach = sorted[0]!.x1;
  for (const a of sorted.slice(1)) {
    if (a.x0 - reach >= MIN_GUTTER) gaps.push([reach, a.x0]);
    reach = Math.max(reach, a.x1);
  }
  return gaps.sort((a, b) => b[1] - b[0] - (a[1] - a[0]));
}

const columnLike = (side: Atom[], pageWidth: number) =>
  side.length > 0 && (side.some((a) => a.block) || (Math.max(...side.map((a) => a.x1)) - Math.min(...side.map((a) => a.x0)) >= pageWidth * MIN_COLUMN && side.reduce((s, a) => s + a.chars, 0) >= 12));

/** The free x intervals of gutters with a column on each side, widest first. */
function gutters(atoms: Atom[], pageWidth: number): [number, number][] {
  if (atoms.length < 2) return [];
  return xGaps(atoms).filter(([g0, g1]) => columnLike(atoms.filter((a) => a.x1 <= g0 + 0.01), pageWidth) && columnLike(atoms.filter((a) => a.x0 >= g1 - 0.01), pageWidth));
}

const overlap = (a: [number, number], b: [number, number]) => Math.min(a[1], b[1]) - Math.max(a[0], b[0]) >= 1;

/**
 * Each strip's gutter: its widest, unless another of its gutters lines up with the gutter of the
 * nearest strip above or below (the page's columns), as when a display formula with its number
 * at the column's right edge leaves a wider gap inside the column.
 */
function stripGutters(candidates: [number, number][][]): ([number, number] | null)[] {
  const widest = candidates.map((c) => c[0] ?? null);
  return candidates.map((c, i) => {
    if (c.length < 2) return widest[i]!;
    for (let d = 1; d < candidates.length; d++) {
      const near = [widest[i - d], widest[i + d]].filter((g): g is [number, number] => !!g);
      if (!near.length) continue;
      return c.find((g) => near.some((n) => overlap(g, n))) ?? widest[i]!;
    }
    return widest[i]!;
  });
}

const crosses = (atoms: Atom[], x: number) => atoms.some((a) => a.x0 < x - 1 && a.x1 > x + 1);

/** Horizontal strips: atoms grouped where no gap separates them vertically, top to bottom. */
function strips(atoms: Atom[]): Atom[][] {
  const sorted = [...atoms].sort((a, b) => a.y0 - b.y0);
  const out: Atom[][] = [];
  let reach = -Infinity;
  for (const a of sorted) {
    // Touching is not a gap: lines set solid overlap by a hair.
    if (out.length && a.y0 < reach - 0.5) {
      out.at(-1)!.push(a);
      reach = Math.max(reach, a.y1);
    } else {
      out.push([a]);
      reach = a.y1;
    }
  }
  return out;
}

/** Atoms in reading order, grouped into the regions they were read in (a column, a full-width stretch). */
export function readingOrder<T extends Atom>(atoms: T[], pageWidth: number, depth = 0): T[][] {
  if (atoms.length <= 1 || depth > 8) return atoms.length ? [atoms] : [];
  interface Stretch {
    atoms: T[];
    /** The free interval all its strips leave between the columns. */
    gutter: [number, number] | null;
    bottom: number;
  }
  const all = strips(atoms) as T[][];
  const candidates = all.map((strip) => gutters(strip, pageWidth));
  const chosen = stripGutters(candidates);
  const mid = (g: [number, number]) => (g[0] + g[1]) / 2;
  const top = (strip: T[]) => Math.min(...strip.map((a) => a.y0));
  const bottom = (strip: T[]) => Math.max(...strip.map((a) => a.y1));
  // A strip without a gutter of its own (a short heading in one column) takes the gutter of the
  // next strip that has one, when nothing on the way crosses it.
  const ahead = (i: number): [number, number] | null => {
    for (let j = i + 1; j < all.length; j++) {
      const g = chosen[j];
      if (g) return all.slice(i, j).some((s) => crosses(s, mid(g))) ? null : g;
    }
    return null;
  };
  const stretches: Stretch[] = [];
  all.forEach((strip, i) => {
    const last = stretches.at(-1);
    let g = chosen[i] ?? null;
    // Three columns: a strip whose widest gutter is another one (or that lies wholly on one side,
    // in two of the columns) still goes on with the stretch above when it leaves its gutter free.
    if (g && last?.gutter && !overlap(g, last.gutter)) g = candidates[i]!.find((c) => overlap(c, last.gutter!)) ?? (crosses(strip, mid(last.gutter)) ? g : last.gutter);
    if (!g && last?.gutter && !crosses(strip, mid(last.gutter))) g = last.gutter;
    // The end of a full-width stretch (a short last line) stays with it when it sits closer to it than to what follows.
    const closerAbove = last !== undefined && !last.gutter && i + 1 < all.length && top(strip) - last.bottom <= top(all[i + 1]!) - bottom(strip);
    if (!g && !closerAbove) g = ahead(i);
    if (last) {
      const both = g && last.gutter ? ([Math.max(g[0], last.gutter[0]), Math.min(g[1], last.gutter[1])] as [number, number]) : null;
      if ((!g && !last.gutter) || (both && both[1] - both[0] >= 1 && !crosses(strip, mid(both)))) {
        last.atoms.push(...strip);
        last.gutter = both;
        last.bottom = Math.max(last.bottom, bottom(strip));
        return;
      }
    }
    stretches.push({ atoms: [...strip], gutter: g, bottom: bottom(strip) });
  });
  const out: T[][] = [];
  for (const s of stretches) {
    if (s.gutter === null) {
      out.push(s.atoms);
      continue;
    }
    const x = mid(s.gutter);
    const left = s.atoms.filter((a) => (a.x0 + a.x1) / 2 < x);
    const right = s.atoms.filter((a) => (a.x0 + a.x1) / 2 >= x);
    out.push(...readingOrder(left, pageWidth, depth + 1), ...readingOrder(right, pageWidth, depth + 1));
  }
  return out;
}
