/**
 * Bullets of a scanned page that OCR left out. Tesseract's page segmentation drops a list's
 * bullets ("•", "▪") as specks apart from the words, so a scanned list would read as paragraphs;
 * the dot is still in the pixels, just left of the item's first word. One solid, roundish blob
 * there (hollow bullets "◦" are left to OCR, as a letter "o" would be), the size of a bullet and at its height over the baseline, with no other ink beside it, is
 * a bullet. A full stop is smaller and sits on the baseline; a word's last letters in the next
 * column are more than one blob.
 */
import type { Rect } from "./geometry.ts";
import { DARK, luminance, type Raster } from "./raster-rules.ts";

/** How far left of the word a bullet is looked for, in ems (LaTeX's and Word's lists: 0.5-1.6 em). */
const REACH = 2;
/** A bullet's width and height, in ems: "•" is ~0.35 em, "▪" ~0.45 em; a full stop ~0.12 em. */
const MIN_SIZE = 0.2;
const MAX_SIZE = 0.75;
/** Solid: most of its box is ink (a "c" or a "v" is not). */
const MIN_FILL = 0.5;
/** Its centre stands this far over the baseline, in ems (the maths axis, ~0.25 em, give or take). */
const MIN_RISE = 0.1;
const MAX_RISE = 0.55;
/** Blobs of fewer pixels are specks of the scan, not ink that counts. */
const SPECK = 3;

/** Where a line starts, in the raster's pixels. */
export interface LineStart {
  /** Left edge of the line's first word. */
  x: number;
  baseline: number;
  /** The line's font size (em) in pixels. */
  em: number;
}

/** The box (raster pixels) of a bullet just left of the line's first word, or null. */
export function bulletBefore(raster: Raster, line: LineStart): Rect | null {
  const x0 = Math.max(0, Math.floor(line.x - REACH * line.em));
  const x1 = Math.min(raster.width, Math.floor(line.x - 0.1 * line.em));
  const y0 = Math.max(0, Math.floor(line.baseline - line.em));
  const y1 = Math.min(raster.height, Math.ceil(line.baseline + 0.3 * line.em));
  if (x1 - x0 < 2 || y1 - y0 < 2) return null;
  const blobs = blobsIn(raster, { x0, y0, x1, y1 });
  if (blobs.length !== 1) return null;
  const [blob] = blobs;
  const { box, pixels } = blob!;
  // Cut by the window's edges: part of something larger (a word of the column before, a figure).
  if (box.x0 === x0 && x0 > 0) return null;
  if (box.y0 === y0 || box.y1 === y1) return null;
  const [w, h] = [box.x1 - box.x0, box.y1 - box.y0];
  const [least, most] = [Math.min(w, h), Math.max(w, h)];
  if (least < MIN_SIZE * line.em || most > MAX_SIZE * line.em || most > 1.6 * least) return null;
  // Solid through its middle: a letter "o" or "e" left unread has paper there.
  const [cx, cy] = [Math.floor((box.x0 + box.x1) / 2), Math.floor((box.y0 + box.y1) / 2)];
  if (pixels < MIN_FILL * w * h || luminance(raster.data, (cy * raster.width + cx) * 4) >= DARK) return null;
  const rise = line.baseline - (box.y0 + box.y1) / 2;
  if (rise < MIN_RISE * line.em || rise > MAX_RISE * line.em) return null;
  return box;
}

/** Connected ink (8-neighbours) inside the window, specks left out; boxes are end-exclusive. */
function blobsIn(raster: Raster, window: Rect): { box: Rect; pixels: number }[] {
  const w = window.x1 - window.x0;
  const h = window.y1 - window.y0;
  const ink = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) ink[y * w + x] = luminance(raster.data, ((window.y0 + y) * raster.width + window.x0 + x) * 4) < DARK ? 1 : 0;
  }
  const blobs: { box: Rect; pixels: number }[] = [];
  const stack: number[] = [];
  for (let start = 0; start < ink.length; start++) {
    if (!ink[start]) continue;
    ink[start] = 0;
    stack.push(start);
    let [bx0, by0, bx1, by1, pixels] = [w, h, 0, 0, 0];
    while (stack.length) {
      const i = stack.pop()!;
      const [x, y] = [i % w, Math.floor(i / w)];
      pixels++;
      bx0 = Math.min(bx0, x);
      by0 = Math.min(by0, y);
      bx1 = Math.max(bx1, x + 1);
      by1 = Math.max(by1, y + 1);
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const [nx, ny] = [x + dx, y + dy];
          if (nx < 0 || ny < 0 || nx >= w || ny >= h || !ink[ny * w + nx]) continue;
          ink[ny * w + nx] = 0;
          stack.push(ny * w + nx);
        }
      }
    }
    if (pixels >= SPECK) blobs.push({ box: { x0: window.x0 + bx0, y0: window.y0 + by0, x1: window.x0 + bx1, y1: window.y0 + by1 }, pixels });
  }
  return blobs;
}
