/**
 * A detected text line cut out of the image as a recognition model wants it: a strip of fixed
 * height, the line's own aspect ratio, channels planar in BGR order (PaddleOCR's models were
 * trained on OpenCV's BGR images) scaled to -1..1. Lines at an angle are straightened by sampling
 * along the box's sides; a box much taller than wide is read as vertical text, turned a quarter
 * (as PaddleOCR's get_rotate_crop_image), and the angle classifier may still turn it half a turn.
 */
import { distanceOf, type Point, type Quad } from "./db-boxes.ts";

/** Pixels, 3 channels RGB, row-major. */
export interface RawImage {
  data: Uint8Array;
  width: number;
  height: number;
}

/** Where a line lies: its top-left corner and the vectors along its length and across its height (in pixels). */
export interface LineFrame {
  origin: Point;
  along: Point;
  across: Point;
}

const sub = (a: Point, b: Point): Point => ({ x: a.x - b.x, y: a.y - b.y });
const length = (v: Point) => Math.hypot(v.x, v.y);

/** The frame reading a quad left to right; a quad at least 1.5 times taller than wide is turned a quarter counter-clockwise. */
export function lineFrame(quad: Quad): LineFrame {
  const [tl, tr, br, bl] = quad;
  const wide = Math.max(distanceOf(tl, tr), distanceOf(bl, br));
  const tall = Math.max(distanceOf(tl, bl), distanceOf(tr, br));
  if (wide > 0 && tall / wide >= 1.5) return { origin: tr, along: sub(br, tr), across: sub(tl, tr) };
  return { origin: tl, along: sub(tr, tl), across: sub(bl, tl) };
}

/** The same line read upside down (what the angle classifier calls "180"). */
export function turnedHalf(frame: LineFrame): LineFrame {
  const far = { x: frame.origin.x + frame.along.x + frame.across.x, y: frame.origin.y + frame.along.y + frame.across.y };
  return { origin: far, along: { x: -frame.along.x, y: -frame.along.y }, across: { x: -frame.across.x, y: -frame.across.y } };
}

/** Width in pixels of the line scaled to `height`, at least 1. */
export function scaledWidth(frame: LineFrame, height: number): number {
  const across = length(frame.across);
  return Math.max(1, Math.ceil((height * length(frame.along)) / Math.max(1, across)));
}

/**
 * Samples the line into `target` (planar [3, height, stride], BGR, -1..1) at columns 0..width-1;
 * the rest of each row is left as it is (zero: the padding the models were trained with).
 * Bilinear, with up to 4x4 samples per output pixel when shrinking so thin strokes are averaged
 * rather than skipped; outside the image the nearest edge pixel is used.
 */
export function sampleLine(image: RawImage, frame: LineFrame, target: Float32Array, offset: number, height: number, stride: number, width: number): void {
  const scale = Math.max(length(frame.along) / width, length(frame.across) / height);
  const k = Math.min(4, Math.max(1, Math.ceil(scale)));
  const plane = height * stride;
  const { data, width: w, height: h } = image;
  const pixel = (x: number, y: number, c: number) => data[(Math.min(h - 1, Math.max(0, y)) * w + Math.min(w - 1, Math.max(0, x))) * 3 + c]!;
  for (let row = 0; row < height; row++) {
    for (let col = 0; col < width; col++) {
      let r = 0, g = 0, b = 0;
      for (let sy = 0; sy < k; sy++) {
        const fy = (row + (sy + 0.5) / k) / height;
        for (let sx = 0; sx < k; sx++) {
          const fx = (col + (sx + 0.5) / k) / width;
          // Pixel centres sit at integer + 0.5.
          const x = frame.origin.x + frame.along.x * fx + frame.across.x * fy - 0.5;
          const y = frame.origin.y + frame.along.y * fx + frame.across.y * fy - 0.5;
          const x0 = Math.floor(x), y0 = Math.floor(y);
          const ax = x - x0, ay = y - y0;
          const w00 = (1 - ax) * (1 - ay), w10 = ax * (1 - ay), w01 = (1 - ax) * ay, w11 = ax * ay;
          r += w00 * pixel(x0, y0, 0) + w10 * pixel(x0 + 1, y0, 0) + w01 * pixel(x0, y0 + 1, 0) + w11 * pixel(x0 + 1, y0 + 1, 0);
          g += w00 * pixel(x0, y0, 1) + w10 * pixel(x0 + 1, y0, 1) + w01 * pixel(x0, y0 + 1, 1) + w11 * pixel(x0 + 1, y0 + 1, 1);
          b += w00 * pixel(x0, y0, 2) + w10 * pixel(x0 + 1, y0, 2) + w01 * pixel(x0, y0 + 1, 2) + w11 * pixel(x0 + 1, y0 + 1, 2);
        }
      }
      const n = k * k * 127.5;
      const at = offset + row * stride + col;
      target[at] = b / n - 1;
      target[at + plane] = g / n - 1;
      target[at + 2 * plane] = r / n - 1;
    }
  }
}

/**
 * Where the ink of a sampled line (as sampleLine wrote it) lies, as fractions of its height (top,
 * bottom) and of its width (left, right): the detector's boxes are grown well past the letters
 * (its unclip), which is right for reading but loose for showing where the text is. A row or
 * column holds ink when some pixel in it differs from the strip's typical (median) shade by at
 * least a third of the largest such difference; a strip without contrast keeps its whole extent.
 */
export function inkBounds(target: Float32Array, offset: number, height: number, stride: number, width: number): { top: number; bottom: number; left: number; right: number } {
  const plane = height * stride;
  const shades = new Float32Array(height * width);
  for (let row = 0; row < height; row++) {
    for (let col = 0; col < width; col++) {
      const at = offset + row * stride + col;
      shades[row * width + col] = (target[at]! + target[at + plane]! + target[at + 2 * plane]!) / 3;
    }
  }
  const background = [...shades].sort((a, b) => a - b)[Math.floor(shades.length / 2)] ?? 0;
  const rows = new Float32Array(height);
  const cols = new Float32Array(width);
  for (let row = 0; row < height; row++) {
    for (let col = 0; col < width; col++) {
      const contrast = Math.abs(shades[row * width + col]! - background);
      if (contrast > rows[row]!) rows[row] = contrast;
      if (contrast > cols[col]!) cols[col] = contrast;
    }
  }
  const strongest = Math.max(...rows);
  // Below ~10 grey levels (on the -1..1 scale) there is no ink to find.
  if (strongest < 0.08) return { top: 0, bottom: 1, left: 0, right: 1 };
  const inked = (c: number) => c >= strongest / 3;
  return {
    top: rows.findIndex(inked) / height,
    bottom: (rows.findLastIndex(inked) + 1) / height,
    left: cols.findIndex(inked) / width,
    right: (cols.findLastIndex(inked) + 1) / width,
  };
}
