/**
 * Ruling lines of a scanned page, found in its pixels: a scan has no drawing operators, so the
 * rules of its tables (grids, or booktabs' three rules) are looked for as long, thin runs of dark
 * pixels, and handed to the same table finders as a text layer's rules (ruled-tables.ts,
 * booktabs.ts).
 *
 * A horizontal rule: dark pixels along a row, broken by no more than GAP pixels (a scan's rules
 * fray), at least MIN_H_LENGTH points long, at most MAX_THICKNESS points thick (a filled bar or a
 * photo is not a rule). Letters of a text line never make such a run: the gaps between them and
 * between words are wider than GAP at 200 dpi, and a word is shorter than MIN_H_LENGTH. Vertical
 * rules likewise, at least MIN_V_LENGTH long (taller than two lines of text, whose stacked letters
 * can touch).
 */
import type { Segment } from "./graphics.ts";

/** Pixels darker than this (0-255 luminance) are ink. */
export const DARK = 140;
/** Light pixels a rule may skip (its frayed or broken stretches in a scan). */
const GAP = 2;
/** Shortest rules, in points. */
const MIN_H_LENGTH = 50;
const MIN_V_LENGTH = 30;
/** Thickest rule, in points (a 3 pt rule is heavy; thicker runs are bars, fills or pictures). */
const MAX_THICKNESS = 3;
/**
 * A vertical rule broken where a table's sections meet (the double rule between them leaves a
 * 2-3 pt break) is one rule if its pieces are each at least PIECE long and no more than
 * SECTION_BREAK apart, in points: a fully ruled table of three-row sections otherwise leaves only
 * 27 pt pieces, under MIN_V_LENGTH, and falls apart. Letters stacked in consecutive lines stand
 * further apart than SECTION_BREAK.
 */
const PIECE = 8;
const SECTION_BREAK = 3;

export interface Raster {
  width: number;
  height: number;
  /** RGBA, row by row (a canvas's ImageData). */
  data: Uint8ClampedArray | Uint8Array;
}

/** Rec. 601 luminance (0-255) of the RGBA pixel starting at `i`. */
export function luminance(data: Raster["data"], i: number): number {
  return (data[i]! * 299 + data[i + 1]! * 587 + data[i + 2]! * 114) / 1000;
}

/** Runs of ink along one line of pixels: [start, end) pairs, gaps of up to GAP bridged, at least `min` long. */
function inkRuns(ink: (i: number) => boolean, length: number, min: number): [number, number][] {
  const out: [number, number][] = [];
  let start = -1;
  let lastInk = -1;
  for (let i = 0; i <= length; i++) {
    if (i < length && ink(i)) {
      if (start < 0) start = i;
      lastInk = i;
    } else if (start >= 0 && (i === length || i - lastInk > GAP)) {
      if (lastInk + 1 - start >= min) out.push([start, lastInk + 1]);
      start = -1;
    }
  }
  return out;
}

interface Band {
  from: number;
  to: number;
  /** First and last line of pixels the band covers. */
  first: number;
  last: number;
}

/** Runs at least `min` long after joining those no more than `gap` apart. */
function joinRuns(runs: [number, number][], gap: number, min: number): [number, number][] {
  const out: [number, number][] = [];
  for (const [from, to] of runs) {
    const last = out.at(-1);
    if (last && from - last[1] <= gap) last[1] = to;
    else out.push([from, to]);
  }
  return out.filter(([from, to]) => to - from >= min);
}

/** Runs on consecutive lines that overlap along the line → bands (one per rule, however thick). */
function bands(runsPerLine: [number, number][][]): Band[] {
  const done: Band[] = [];
  let open: Band[] = [];
  runsPerLine.forEach((runs, line) => {
    const next: Band[] = [];
    for (const [from, to] of runs) {
      const joined = open.find((b) => b.last === line - 1 && from < b.to && to > b.from);
      if (joined) {
        joined.from = Math.min(joined.from, from);
        joined.to = Math.max(joined.to, to);
        joined.last = line;
        if (!next.includes(joined)) next.push(joined);
      } else next.push({ from, to, first: line, last: line });
    }
    for (const b of open) if (!next.includes(b)) done.push(b);
    open = next;
  });
  return [...done, ...open];
}

/** Horizontal and vertical rules of a page drawn at `scale` pixels per point, in points. */
export function rasterRules(raster: Raster, scale: number): { horizontal: Segment[]; vertical: Segment[] } {
  const { width, height, data } = raster;
  const ink = new Uint8Array(width * height);
  for (let p = 0; p < ink.length; p++) ink[p] = luminance(data, p * 4) < DARK ? 1 : 0;
  const thickest = Math.max(2, Math.round(MAX_THICKNESS * scale));
  /** Rules along `lines` lines of pixels `length` long; `at(line, i)` is the pixel's index; each as [from, to, across] in pixels. */
  const along = (lines: number, length: number, min: number, at: (line: number, i: number) => number, pieces?: { min: number; gap: number }) => {
    const runs: [number, number][][] = [];
    for (let line = 0; line < lines; line++) {
      const isInk = (i: number) => ink[at(line, i)] === 1;
      runs.push(pieces ? joinRuns(inkRuns(isInk, length, pieces.min * scale), pieces.gap * scale, min * scale) : inkRuns(isInk, length, min * scale));
    }
    return bands(runs)
      .filter((b) => b.last - b.first + 1 <= thickest)
      .map((b) => ({ from: b.from / scale, to: b.to / scale, across: (b.first + b.last + 1) / 2 / scale }));
  };
  return {
    horizontal: along(height, width, MIN_H_LENGTH, (y, x) => y * width + x).map((r) => ({ x0: r.from, y0: r.across, x1: r.to, y1: r.across })),
    vertical: along(width, height, MIN_V_LENGTH, (x, y) => y * width + x, { min: PIECE, gap: SECTION_BREAK }).map((r) => ({ x0: r.across, y0: r.from, x1: r.across, y1: r.to })),
  };
}
