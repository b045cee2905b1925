/**
 * Text boxes from a DB (Differentiable Binarization) detector's probability map, as PaddleOCR's
 * DBPostProcess finds them: the map thresholded (and dilated by a 2x2 kernel), each connected
 * blob of text pixels enclosed in its smallest rotated rectangle, blobs whose mean probability is
 * low dropped, and the rectangle grown ("unclipped") by area x ratio / perimeter on every side,
 * because the detector is trained to mark a shrunken core of each text line.
 *
 * PaddleOCR grows the rectangle with a polygon offset (pyclipper, round joins) and then takes the
 * smallest rectangle around the result; for a rectangle that is exactly the rectangle with each
 * side moved out by the distance, which is what this computes, so no polygon library is needed.
 */

export interface Point {
  x: number;
  y: number;
}

/** Corners clockwise from the top left: top left, top right, bottom right, bottom left. */
export type Quad = [Point, Point, Point, Point];

export interface DetectedBox {
  quad: Quad;
  /** Mean text probability inside the core rectangle, 0-1. */
  score: number;
}

export interface DbOptions {
  /** A pixel is text when its probability exceeds this. */
  threshold: number;
  /** A blob is kept when its mean probability reaches this. */
  boxThreshold: number;
  /** How far the core rectangle grows: area x ratio / perimeter on every side. */
  unclipRatio: number;
  /** Most blobs considered (largest first is not promised: in scan order, as PaddleOCR). */
  maxCandidates: number;
}

export const DEFAULT_DB: DbOptions = { threshold: 0.3, boxThreshold: 0.5, unclipRatio: 1.6, maxCandidates: 1000 };

const MIN_SIDE = 3;

/**
 * Boxes in the coordinates of an image of `targetWidth` x `targetHeight` (the map is scaled to
 * it), each clipped to the image, in no particular order.
 */
export function boxesFromProbabilityMap(
  map: Float32Array,
  width: number,
  height: number,
  targetWidth: number,
  targetHeight: number,
  options: DbOptions = DEFAULT_DB,
): DetectedBox[] {
  const mask = dilate(threshold(map, options.threshold), width, height);
  const boxes: DetectedBox[] = [];
  const blobs = rowSpans(mask, width, height);
  for (const spans of blobs.slice(0, options.maxCandidates)) {
    const core = minAreaRect(convexHull(spanPoints(spans)));
    if (Math.min(core.width, core.height) < MIN_SIDE) continue;
    const score = meanInside(map, width, height, rectCorners(core));
    if (score < options.boxThreshold) continue;
    const distance = (core.width * core.height * options.unclipRatio) / (2 * (core.width + core.height));
    const grown = { ...core, width: core.width + 2 * distance, height: core.height + 2 * distance };
    if (Math.min(grown.width, grown.height) < MIN_SIDE + 2) continue;
    const sx = targetWidth / width;
    const sy = targetHeight / height;
    const corners = rectCorners(grown).map((p) => ({
      x: clamp(Math.round(p.x * sx), 0, targetWidth),
      y: clamp(Math.round(p.y * sy), 0, targetHeight),
    }));
    const quad = orderClockwise(corners);
    if (distanceOf(quad[0], quad[1]) <= 3 || distanceOf(quad[0], quad[3]) <= 3) continue;
    boxes.push({ quad, score });
  }
  return boxes;
}

function threshold(map: Float32Array, level: number): Uint8Array {
  const mask = new Uint8Array(map.length);
  for (let i = 0; i < map.length; i++) mask[i] = map[i]! > level ? 1 : 0;
  return mask;
}

/** 2x2 dilation anchored as OpenCV anchors an even kernel: a pixel turns on when it or its left, upper or upper-left neighbour is on. */
function dilate(mask: Uint8Array, width: number, height: number): Uint8Array {
  const out = new Uint8Array(mask.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      out[i] = mask[i]! | (x > 0 ? mask[i - 1]! : 0) | (y > 0 ? mask[i - width]! | (x > 0 ? mask[i - width - 1]! : 0) : 0);
    }
  }
  return out;
}

/** One horizontal run of a blob: row y, columns x0..x1 inclusive. */
interface Span {
  y: number;
  x0: number;
  x1: number;
}

/**
 * The 8-connected blobs of the mask, each as its row runs, in the order their first pixel is met
 * scanning rows top-down (union-find over runs: linear in the runs, no per-pixel labels).
 */
export function rowSpans(mask: Uint8Array, width: number, height: number): Span[][] {
  const spans: Span[] = [];
  const parent: number[] = [];
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  };
  let previous: number[] = [];
  for (let y = 0; y < height; y++) {
    const current: number[] = [];
    let x = 0;
    while (x < width) {
      if (!mask[y * width + x]) {
        x++;
        continue;
      }
      const x0 = x;
      while (x < width && mask[y * width + x]) x++;
      const id = spans.length;
      spans.push({ y, x0, x1: x - 1 });
      parent.push(id);
      current.push(id);
      // 8-connected: a run above touches this one when their columns overlap or meet diagonally.
      for (const above of previous) {
        const a = spans[above]!;
        if (a.x1 >= x0 - 1 && a.x0 <= x) {
          const ra = find(above);
          const rb = find(id);
          if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
        }
      }
    }
    previous = current;
  }
  const groups = new Map<number, Span[]>();
  for (let i = 0; i < spans.length; i++) {
    const root = find(i);
    let group = groups.get(root);
    if (!group) groups.set(root, (group = []));
    group.push(spans[i]!);
  }
  return [...groups.values()];
}

/** The outline points of a blob that its convex hull can use: both ends of every run. */
function spanPoints(spans: Span[]): Point[] {
  const points: Point[] = [];
  for (const s of spans) {
    points.push({ x: s.x0, y: s.y });
    if (s.x1 !== s.x0) points.push({ x: s.x1, y: s.y });
  }
  return points;
}

/** Andrew's monotone chain; counter-clockwise in image coordinates' mathematical sense, no repeated points. */
export function convexHull(points: Point[]): Point[] {
  const sorted = [...points].sort((a, b) => a.x - b.x || a.y - b.y);
  if (sorted.length < 3) return sorted;
  const cross = (o: Point, a: Point, b: Point) => (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
  const lower: Point[] = [];
  for (const p of sorted) {
    while (lower.length >= 2 && cross(lower[lower.length - 2]!, lower[lower.length - 1]!, p) <= 0) lower.pop();
    lower.push(p);
  }
  const upper: Point[] = [];
  for (let i = sorted.length - 1; i >= 0; i--) {
    const p = sorted[i]!;
    while (upper.length >= 2 && cross(upper[upper.length - 2]!, upper[upper.length - 1]!, p) <= 0) upper.pop();
    upper.push(p);
  }
  return lower.slice(0, -1).concat(upper.slice(0, -1));
}

export interface RotatedRect {
  cx: number;
  cy: number;
  /** Along `angle`. */
  width: number;
  height: number;
  /** Radians, direction of the width side. */
  angle: number;
}

/** The smallest-area rectangle around a convex polygon: one of its sides lies on a hull edge (rotating calipers). */
export function minAreaRect(hull: Point[]): RotatedRect {
  if (hull.length === 0) return { cx: 0, cy: 0, width: 0, height: 0, angle: 0 };
  if (hull.length === 1) return { cx: hull[0]!.x, cy: hull[0]!.y, width: 0, height: 0, angle: 0 };
  let best: RotatedRect | null = null;
  let bestArea = Infinity;
  for (let i = 0; i < hull.length; i++) {
    const a = hull[i]!;
    const b = hull[(i + 1) % hull.length]!;
    const length = Math.hypot(b.x - a.x, b.y - a.y);
    if (length === 0) continue;
    const ux = (b.x - a.x) / length;
    const uy = (b.y - a.y) / length;
    let minU = Infinity, maxU = -Infinity, minV = Infinity, maxV = -Infinity;
    for (const p of hull) {
      const u = p.x * ux + p.y * uy;
      const v = -p.x * uy + p.y * ux;
      if (u < minU) minU = u;
      if (u > maxU) maxU = u;
      if (v < minV) minV = v;
      if (v > maxV) maxV = v;
    }
    const area = (maxU - minU) * (maxV - minV);
    if (area < bestArea - 1e-9) {
      bestArea = area;
      const cu = (minU + maxU) / 2;
      const cv = (minV + maxV) / 2;
      best = { cx: cu * ux - cv * uy, cy: cu * uy + cv * ux, width: maxU - minU, height: maxV - minV, angle: Math.atan2(uy, ux) };
    }
  }
  return best!;
}

export function rectCorners(r: RotatedRect): Point[] {
  const ux = Math.cos(r.angle), uy = Math.sin(r.angle);
  const hw = r.width / 2, hh = r.height / 2;
  return [
    { x: r.cx - ux * hw + uy * hh, y: r.cy - uy * hw - ux * hh },
    { x: r.cx + ux * hw + uy * hh, y: r.cy + uy * hw - ux * hh },
    { x: r.cx + ux * hw - uy * hh, y: r.cy + uy * hw + ux * hh },
    { x: r.cx - ux * hw - uy * hh, y: r.cy - uy * hw + ux * hh },
  ];
}

/** Top left, top right, bottom right, bottom left: the two leftmost points are the left side, each side ordered by y. */
export function orderClockwise(points: Point[]): Quad {
  const byX = [...points].sort((a, b) => a.x - b.x || a.y - b.y);
  const [tl, bl] = [byX[0]!, byX[1]!].sort((a, b) => a.y - b.y) as [Point, Point];
  const [tr, br] = [byX[2]!, byX[3]!].sort((a, b) => a.y - b.y) as [Point, Point];
  return [tl, tr, br, bl];
}

/** Mean of the map over the pixels whose centres lie inside the convex polygon (PaddleOCR's "fast" box score). */
function meanInside(map: Float32Array, width: number, height: number, polygon: Point[]): number {
  const xs = polygon.map((p) => p.x), ys = polygon.map((p) => p.y);
  const x0 = clamp(Math.floor(Math.min(...xs)), 0, width - 1), x1 = clamp(Math.ceil(Math.max(...xs)), 0, width - 1);
  const y0 = clamp(Math.floor(Math.min(...ys)), 0, height - 1), y1 = clamp(Math.ceil(Math.max(...ys)), 0, height - 1);
  let sum = 0, count = 0;
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      if (!insideConvex(polygon, x, y)) continue;
      sum += map[y * width + x]!;
      count++;
    }
  }
  return count ? sum / count : 0;
}

/** Inside (or on the edge of, with half a pixel's slack) a convex polygon given in either winding. */
function insideConvex(polygon: Point[], x: number, y: number): boolean {
  let sign = 0;
  for (let i = 0; i < polygon.length; i++) {
    const a = polygon[i]!, b = polygon[(i + 1) % polygon.length]!;
    const length = Math.hypot(b.x - a.x, b.y - a.y) || 1;
    const side = ((b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x)) / length;
    if (Math.abs(side) <= 0.5) continue;
    const s = Math.sign(side);
    if (sign === 0) sign = s;
    else if (s !== sign) return false;
  }
  return true;
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
export const distanceOf = (a: Point, b: Point) => Math.hypot(a.x - b.x, a.y - b.y);

/**
 * Boxes of one line that overlap merged into one. The unclip grows the boxes of a line the
 * detector split at a wide word gap until they overlap, and the recognizer then reads the shared
 * strip twice ("the point t of view", a UW-III line). Only nearly level boxes are merged (their
 * union is then a level rectangle): two boxes are one line when their shared height is at least
 * 80% of the shorter one's (neighbouring receipt lines, whose grown boxes overlap by about half,
 * stay apart; 80% of the taller one's missed the UW-III duplicates) and their spans along overlap.
 */
export function mergeLineOverlaps(boxes: DetectedBox[]): DetectedBox[] {
  const level = (b: DetectedBox) => Math.abs(b.quad[1].y - b.quad[0].y) <= 0.1 * Math.max(1, b.quad[1].x - b.quad[0].x);
  const bounds = (b: DetectedBox) => {
    const xs = b.quad.map((p) => p.x), ys = b.quad.map((p) => p.y);
    return { x0: Math.min(...xs), x1: Math.max(...xs), y0: Math.min(...ys), y1: Math.max(...ys) };
  };
  const out: DetectedBox[] = [];
  const pending = [...boxes].sort((a, b) => bounds(a).x0 - bounds(b).x0);
  for (const box of pending) {
    const b = bounds(box);
    const into = level(box)
      ? out.find((o) => {
          if (!level(o)) return false;
          const a = bounds(o);
          const shared = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
          return shared >= 0.8 * Math.min(a.y1 - a.y0, b.y1 - b.y0) && Math.min(a.x1, b.x1) > Math.max(a.x0, b.x0);
        })
      : undefined;
    if (!into) {
      out.push(box);
      continue;
    }
    const a = bounds(into);
    const x0 = Math.min(a.x0, b.x0), x1 = Math.max(a.x1, b.x1), y0 = Math.min(a.y0, b.y0), y1 = Math.max(a.y1, b.y1);
    into.quad = [{ x: x0, y: y0 }, { x: x1, y: y0 }, { x: x1, y: y1 }, { x: x0, y: y1 }];
    into.score = Math.max(into.score, box.score);
  }
  return out;
}
