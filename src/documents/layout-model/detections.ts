/**
 * What a layout model finds on a page, and the non-maximum suppression that leaves one box per
 * thing: a detector proposes many overlapping boxes per region, of one class and often of two
 * (a paragraph also scored as a list item, a caption as text).
 */

/** The kinds of page region Mediabox reads; each model's classes map onto these (layout-models.ts). */
export const REGION_KINDS = ["text", "title", "list_item", "table", "figure", "caption", "footnote", "formula", "header", "footer"] as const;
export type RegionKind = (typeof REGION_KINDS)[number];

/** A box with corners x0 < x1, y0 < y1 (any unit). */
export interface Corners {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export interface Detection extends Corners {
  kind: RegionKind;
  score: number;
}

export const area = (b: Corners) => Math.max(0, b.x1 - b.x0) * Math.max(0, b.y1 - b.y0);

export function intersection(a: Corners, b: Corners): number {
  return Math.max(0, Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0)) * Math.max(0, Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0));
}

export function iou(a: Corners, b: Corners): number {
  const inter = intersection(a, b);
  const union = area(a) + area(b) - inter;
  return union > 0 ? inter / union : 0;
}

/**
 * Greedy NMS: best score first, a box is dropped when it overlaps a kept box of its own kind by
 * IoU over `sameKind`, or one of any kind by over `anyKind` (two labels for one region: the
 * better-scored stands), or lies `nested` or more of its area inside a kept box of its kind
 * (a paragraph's box again inside the paragraph).
 */
export function suppress(detections: readonly Detection[], { sameKind = 0.45, anyKind = 0.8, nested = 0.85 } = {}): Detection[] {
  const kept: Detection[] = [];
  for (const d of [...detections].sort((a, b) => b.score - a.score)) {
    const clash = kept.some((k) => {
      const overlap = iou(k, d);
      if (overlap > anyKind) return true;
      if (k.kind !== d.kind) return false;
      return overlap > sameKind || intersection(k, d) >= area(d) * nested;
    });
    if (!clash) kept.push(d);
  }
  return kept;
}
