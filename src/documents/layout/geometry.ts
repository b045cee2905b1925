/**
 * Rectangles in page units (top-left origin) and the little arithmetic the layout modules share.
 */
export interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export const area = (r: Rect) => Math.max(0, r.x1 - r.x0) * Math.max(0, r.y1 - r.y0);

export function intersection(a: Rect, b: Rect): number {
  return Math.max(0, Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0)) * Math.max(0, Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0));
}

/** Whether the centre of `inner` lies inside `outer` (grown by `slack`). */
export function centreInside(inner: Rect, outer: Rect, slack = 0): boolean {
  const cx = (inner.x0 + inner.x1) / 2;
  const cy = (inner.y0 + inner.y1) / 2;
  return cx >= outer.x0 - slack && cx <= outer.x1 + slack && cy >= outer.y0 - slack && cy <= outer.y1 + slack;
}

export const union = (a: Rect, b: Rect): Rect => ({ x0: Math.min(a.x0, b.x0), y0: Math.min(a.y0, b.y0), x1: Math.max(a.x1, b.x1), y1: Math.max(a.y1, b.y1) });

export function unionAll(rects: Rect[]): Rect {
  return rects.reduce(union);
}

/**
 * Rectangles that overlap or lie within `gap` of each other, merged until none do. Sweeps in
 * order of top edge, so thousands of chart marks merge in a few passes, not n² comparisons each.
 */
export function mergeNear(rects: Rect[], gap: number): Rect[] {
  let current = rects.map((r) => ({ ...r }));
  for (let pass = 0; pass < 50; pass++) {
    current.sort((a, b) => a.y0 - b.y0);
    const out: Rect[] = [];
    let merged = false;
    for (const r of current) {
      let target: Rect | null = r;
      // Scan back over the groups still open at this height (sorted by top, so stop once far above).
      for (let k = out.length - 1; k >= 0 && target; k--) {
        const a = out[k]!;
        if (a.y1 + gap < r.y0 && k < out.length - 64) break;
        if (a.x0 <= target.x1 + gap && target.x0 <= a.x1 + gap && a.y0 <= target.y1 + gap && target.y0 <= a.y1 + gap) {
          out[k] = union(a, target);
          target = null;
          merged = true;
        }
      }
      if (target) out.push(target);
    }
    current = out;
    if (!merged) break;
  }
  return current;
}
