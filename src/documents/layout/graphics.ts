/**
 * What a PDF page draws besides text, from one pass over pdf.js's operator list with the
 * transformation matrix tracked: images (figures), ruling lines (horizontal and vertical
 * segments, from stroked paths and from thin filled rectangles: tables), and the extent of other
 * vector drawing (charts, diagrams: figures). Also the fonts the page's text uses, which pdf.js
 * only names (and flags bold / italic) once the operator list has loaded them.
 *
 * Coordinates come out in the page's top-left space at scale 1 (the viewport transform applied).
 */
import type { Rect } from "./geometry.ts";

export type Matrix = [number, number, number, number, number, number];

/** An axis-aligned ruling line. Horizontal: y0 === y1; vertical: x0 === x1. */
export interface Segment {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** An image where the page shows it; `dpi` across, when the operator list gives its pixel width (image XObjects). */
export interface PlacedImage extends Rect {
  dpi?: number;
}

export interface PageGraphics {
  images: PlacedImage[];
  horizontal: Segment[];
  vertical: Segment[];
  /** Bounding boxes of painted paths that are not ruling lines (curves, shapes, diagonal strokes). */
  shapes: Rect[];
}

export interface FontInfo {
  name: string;
  bold: boolean;
  italic: boolean;
}

/** The pieces of pdf.js this module uses (kept structural so tests can feed operator lists by hand). */
export interface OperatorList {
  fnArray: number[];
  argsArray: unknown[];
}
export interface Ops {
  save: number;
  restore: number;
  transform: number;
  paintFormXObjectBegin: number;
  paintFormXObjectEnd: number;
  beginGroup: number;
  endGroup: number;
  paintImageXObject: number;
  paintInlineImageXObject: number;
  paintImageMaskXObject: number;
  paintSolidColorImageMask: number;
  paintImageXObjectRepeat: number;
  paintImageMaskXObjectRepeat: number;
  constructPath: number;
  stroke: number;
  closeStroke: number;
  fill: number;
  eoFill: number;
  fillStroke: number;
  eoFillStroke: number;
  closeFillStroke: number;
  closeEOFillStroke: number;
  setLineWidth: number;
  setFillRGBColor: number;
  setStrokeRGBColor: number;
}

export const multiply = (m: Matrix, n: Matrix): Matrix => [
  m[0] * n[0] + m[2] * n[1],
  m[1] * n[0] + m[3] * n[1],
  m[0] * n[2] + m[2] * n[3],
  m[1] * n[2] + m[3] * n[3],
  m[0] * n[4] + m[2] * n[5] + m[4],
  m[1] * n[4] + m[3] * n[5] + m[5],
];
export const apply = (m: Matrix, x: number, y: number): [number, number] => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];

/** Lines thinner than this (points) are rules; a filled rectangle thinner than this is one too. */
const RULE_THICKNESS = 2.5;
/** Segments shorter than this are ticks, underlines of a letter or bullets, not rules. */
const MIN_RULE = 4;
/** DrawOPS codes in a constructPath buffer (pdf.js). */
const MOVE = 0;
const LINE = 1;
const CURVE = 2;
const QUAD = 3;
const CLOSE = 4;

/** White paint (page backgrounds, knock-outs) draws nothing visible. */
function isWhite(args: unknown): boolean {
  const v = (args as unknown[] | null)?.[0];
  if (typeof v === "string") return /^#f[a-f0-9]f[a-f0-9]f[a-f0-9]$/i.test(v);
  const n = args as number[] | null;
  return Array.isArray(n) && n.length >= 3 && n.slice(0, 3).every((c) => typeof c === "number" && c >= 245);
}

export function pageGraphics(ops: Ops, list: OperatorList, viewport: Matrix, page: { width: number; height: number }): PageGraphics {
  const out: PageGraphics = { images: [], horizontal: [], vertical: [], shapes: [] };
  const stack: { ctm: Matrix; lineWidth: number; whiteFill: boolean; whiteStroke: boolean }[] = [];
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  let lineWidth = 1;
  let whiteFill = false;
  let whiteStroke = false;
  const boxOf = (m: Matrix, pixelWidth?: number) => {
    const corners = [apply(m, 0, 0), apply(m, 1, 0), apply(m, 0, 1), apply(m, 1, 1)].map(([x, y]) => apply(viewport, x, y));
    const xs = corners.map((c) => c[0]);
    const ys = corners.map((c) => c[1]);
    const box: PlacedImage = { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
    // The image's own x axis, in page units, is the length of the matrix's first column.
    const across = Math.hypot(m[0], m[1]) * Math.hypot(viewport[0], viewport[1]);
    if (pixelWidth && across > 0) box.dpi = (pixelWidth / across) * 72;
    out.images.push(box);
  };
  // The stroke width in page units: the line width scaled by the matrix.
  const strokeWidth = () => lineWidth * Math.sqrt(Math.abs(ctm[0] * ctm[3] - ctm[1] * ctm[2])) || 1;
  const rule = (ax: number, ay: number, bx: number, by: number, thickness: number) => {
    const dx = Math.abs(bx - ax);
    const dy = Math.abs(by - ay);
    if (thickness > RULE_THICKNESS) return false;
    if (dy <= 1 && dx >= MIN_RULE) out.horizontal.push({ x0: Math.min(ax, bx), x1: Math.max(ax, bx), y0: (ay + by) / 2, y1: (ay + by) / 2 });
    else if (dx <= 1 && dy >= MIN_RULE) out.vertical.push({ x0: (ax + bx) / 2, x1: (ax + bx) / 2, y0: Math.min(ay, by), y1: Math.max(ay, by) });
    else return dx < MIN_RULE && dy < MIN_RULE;
    return true;
  };
  /** Paths longer than this (numbers) are drawings as a whole (glyph outlines, plots): their box, not their segments. */
  const LONG_PATH = 600;
  const path = (paint: number, data: Float32Array | null, minMax: ArrayLike<number> | null) => {
    if (!data) return;
    const stroked = paint === ops.stroke || paint === ops.closeStroke || paint === ops.fillStroke || paint === ops.eoFillStroke || paint === ops.closeFillStroke || paint === ops.closeEOFillStroke;
    const filled = paint === ops.fill || paint === ops.eoFill || paint === ops.fillStroke || paint === ops.eoFillStroke || paint === ops.closeFillStroke || paint === ops.closeEOFillStroke;
    const stroke = stroked && !whiteStroke;
    const fill = filled && !whiteFill;
    if (!stroke && !fill) return;
    // The path's coordinates → page: the viewport after the current matrix, as one matrix.
    const m = multiply(viewport, ctm);
    const px = (x: number, y: number) => m[0] * x + m[2] * y + m[4];
    const py = (x: number, y: number) => m[1] * x + m[3] * y + m[5];
    const boxOfMinMax = (): Rect | null => {
      if (!minMax || !Number.isFinite(minMax[0]!)) return null;
      const xs = [px(minMax[0]!, minMax[1]!), px(minMax[2]!, minMax[1]!), px(minMax[0]!, minMax[3]!), px(minMax[2]!, minMax[3]!)];
      const ys = [py(minMax[0]!, minMax[1]!), py(minMax[2]!, minMax[1]!), py(minMax[0]!, minMax[3]!), py(minMax[2]!, minMax[3]!)];
      return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
    };
    const shape = (box: Rect | null) => {
      if (box && (box.x1 - box.x0) * (box.y1 - box.y0) < page.width * page.height * 0.5 && (box.x1 - box.x0 > 1 || box.y1 - box.y0 > 1)) out.shapes.push(box);
    };
    if (data.length > LONG_PATH) return shape(boxOfMinMax());
    const thickness = stroke ? strokeWidth() : 0;
    let sx = 0;
    let sy = 0;
    let cx = 0;
    let cy = 0;
    let curved = false;
    let allRules = true;
    // The current sub-path's box, for fills (thin rectangles are rules).
    let bx0 = Infinity;
    let by0 = Infinity;
    let bx1 = -Infinity;
    let by1 = -Infinity;
    const grow = (x: number, y: number) => {
      if (x < bx0) bx0 = x;
      if (x > bx1) bx1 = x;
      if (y < by0) by0 = y;
      if (y > by1) by1 = y;
    };
    const closeSub = () => {
      if (fill && bx0 <= bx1) {
        const w = bx1 - bx0;
        const h = by1 - by0;
        // A thin filled rectangle is how many producers (Word, Excel) draw table rules.
        if (!curved && h <= RULE_THICKNESS && w >= MIN_RULE) out.horizontal.push({ x0: bx0, x1: bx1, y0: (by0 + by1) / 2, y1: (by0 + by1) / 2 });
        else if (!curved && w <= RULE_THICKNESS && h >= MIN_RULE) out.vertical.push({ x0: (bx0 + bx1) / 2, x1: (bx0 + bx1) / 2, y0: by0, y1: by1 });
        else shape({ x0: bx0, y0: by0, x1: bx1, y1: by1 });
      }
      bx0 = by0 = Infinity;
      bx1 = by1 = -Infinity;
    };
    let drawn: Rect | null = null;
    const segment = (ax: number, ay: number, bx: number, by: number) => {
      if (!stroke) return;
      if (!rule(ax, ay, bx, by, thickness)) {
        allRules = false;
        const r = { x0: Math.min(ax, bx), y0: Math.min(ay, by), x1: Math.max(ax, bx), y1: Math.max(ay, by) };
        drawn = drawn ? { x0: Math.min(drawn.x0, r.x0), y0: Math.min(drawn.y0, r.y0), x1: Math.max(drawn.x1, r.x1), y1: Math.max(drawn.y1, r.y1) } : r;
      }
    };
    for (let i = 0; i < data.length; ) {
      const op = data[i++];
      if (op === MOVE) {
        closeSub();
        cx = px(data[i]!, data[i + 1]!);
        cy = py(data[i]!, data[i + 1]!);
        i += 2;
        [sx, sy] = [cx, cy];
        grow(cx, cy);
      } else if (op === LINE) {
        const nx = px(data[i]!, data[i + 1]!);
        const ny = py(data[i]!, data[i + 1]!);
        i += 2;
        segment(cx, cy, nx, ny);
        [cx, cy] = [nx, ny];
        grow(cx, cy);
      } else if (op === CURVE || op === QUAD) {
        const n = op === CURVE ? 3 : 2;
        for (let k = 0; k < n; k++) grow(px(data[i + 2 * k]!, data[i + 2 * k + 1]!), py(data[i + 2 * k]!, data[i + 2 * k + 1]!));
        const nx = px(data[i + 2 * n - 2]!, data[i + 2 * n - 1]!);
        const ny = py(data[i + 2 * n - 2]!, data[i + 2 * n - 1]!);
        i += 2 * n;
        if (stroke) {
          allRules = false;
          const r = { x0: Math.min(cx, nx), y0: Math.min(cy, ny), x1: Math.max(cx, nx), y1: Math.max(cy, ny) };
          drawn = drawn ? { x0: Math.min(drawn.x0, r.x0), y0: Math.min(drawn.y0, r.y0), x1: Math.max(drawn.x1, r.x1), y1: Math.max(drawn.y1, r.y1) } : r;
        }
        [cx, cy] = [nx, ny];
        curved = true;
      } else if (op === CLOSE) {
        if (cx !== sx || cy !== sy) segment(cx, cy, sx, sy);
        [cx, cy] = [sx, sy];
      } else break;
    }
    closeSub();
    if (!fill && stroke && !allRules) shape(curved ? boxOfMinMax() ?? drawn : drawn);
  };
  for (let i = 0; i < list.fnArray.length; i++) {
    const fn = list.fnArray[i];
    const args = list.argsArray[i] as unknown[] | null;
    switch (fn) {
      case ops.save:
        stack.push({ ctm, lineWidth, whiteFill, whiteStroke });
        break;
      case ops.restore: {
        const top = stack.pop();
        if (top) ({ ctm, lineWidth, whiteFill, whiteStroke } = top);
        break;
      }
      case ops.transform:
        ctm = multiply(ctm, args as Matrix);
        break;
      case ops.setLineWidth:
        lineWidth = Number(args?.[0]) || 0;
        break;
      case ops.setFillRGBColor:
        whiteFill = isWhite(args);
        break;
      case ops.setStrokeRGBColor:
        whiteStroke = isWhite(args);
        break;
      case ops.paintFormXObjectBegin: {
        stack.push({ ctm, lineWidth, whiteFill, whiteStroke });
        const matrix = args?.[0] as Matrix | null;
        if (matrix) ctm = multiply(ctm, matrix);
        break;
      }
      case ops.beginGroup: {
        stack.push({ ctm, lineWidth, whiteFill, whiteStroke });
        const matrix = (args?.[0] as { matrix?: Matrix } | undefined)?.matrix;
        if (matrix) ctm = multiply(ctm, matrix);
        break;
      }
      case ops.paintFormXObjectEnd:
      case ops.endGroup: {
        const top = stack.pop();
        if (top) ({ ctm, lineWidth, whiteFill, whiteStroke } = top);
        break;
      }
      case ops.paintImageXObject:
        // pdf.js's arguments: the image's id, then its width and height in pixels.
        boxOf(ctm, (args as [unknown, number?])[1]);
        break;
      case ops.paintInlineImageXObject:
      case ops.paintImageMaskXObject:
      case ops.paintSolidColorImageMask:
        boxOf(ctm);
        break;
      case ops.paintImageXObjectRepeat: {
        const [, sx, sy, positions] = args as [unknown, number, number, number[]];
        for (let p = 0; p + 1 < positions.length; p += 2) boxOf(multiply(ctm, [sx, 0, 0, sy, positions[p]!, positions[p + 1]!]));
        break;
      }
      case ops.paintImageMaskXObjectRepeat: {
        const [, sx, kx, ky, sy, positions] = args as [unknown, number, number, number, number, number[]];
        for (let p = 0; p + 1 < positions.length; p += 2) boxOf(multiply(ctm, [sx, kx, ky, sy, positions[p]!, positions[p + 1]!]));
        break;
      }
      case ops.constructPath: {
        const [paint, buffers, minMax] = args as [number, (Float32Array | null)[], ArrayLike<number> | null];
        path(paint, buffers?.[0] ?? null, minMax);
        break;
      }
    }
  }
  return out;
}

/**
 * Bold and italic from the font's name as well as pdf.js's flags: embedded subsets are named like
 * "AAEWKY+NimbusRomNo9L-Medi", "NimbusRomNo9L-ReguItal", "Arial-BoldMT", "CMBX10" (TeX's bold
 * extended), "Times-Italic".
 */
export function fontInfo(name: string, flags: { bold?: boolean; black?: boolean; italic?: boolean }): FontInfo {
  const base = name.replace(/^[A-Z]{6}\+/, "");
  const bold = flags.bold === true || flags.black === true || /bold|black|heavy|semibold|demi|medi(?:um)?\b|-medi|\bbd\b|[-,]b$|^cmbx|^cmb\d|^cmssbx|extrabold|ultrabold/i.test(base);
  const italic = flags.italic === true || /italic|oblique|-ital|ital$|\bit\b|[-,]i$|^cmti|^cmmi|^cmsl|^cmssi/i.test(base);
  return { name: base, bold, italic };
}
