/**
 * Counting people from detector boxes: planning overlapping tiles, mapping tile boxes back to the
 * image, merging duplicates, and combining face boxes with person (body) boxes.
 *
 * Pure geometry, no models: vision.ts runs the detectors and uses these to add up what they saw.
 * Boxes are in pixels of the analyzed image.
 */

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
  score: number;
}

export interface Tile {
  left: number;
  top: number;
  size: number;
}

/**
 * Square tiles of `size` covering a width x height image, neighbours overlapping by at least
 * `overlap` of a tile so a face or body cut by one tile edge is whole in the next one. Tiles
 * never leave the image (the last row and column are pushed back inside); an image no larger
 * than one tile gets no tiles, since the whole-image pass already saw it at full detail.
 */
export function planTiles(width: number, height: number, size: number, overlap = 0.25): Tile[] {
  if (width <= size && height <= size) return [];
  const starts = (extent: number): number[] => {
    if (extent <= size) return [0];
    const count = Math.ceil((extent - size) / (size * (1 - overlap))) + 1;
    const step = (extent - size) / (count - 1);
    return Array.from({ length: count }, (_, i) => Math.round(i * step));
  };
  const side = Math.min(size, width, height);
  return starts(height).flatMap((top) => starts(width).map((left) => ({ left: Math.min(left, width - side), top: Math.min(top, height - side), size: side })));
}

/** A box found inside a tile, moved to image coordinates. */
export function fromTile(box: Box, tile: Tile): Box {
  return { ...box, x: box.x + tile.left, y: box.y + tile.top };
}

function intersection(a: Box, b: Box): number {
  const w = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

/**
 * Whether two boxes are the same thing seen twice. Plain IoU misses the common tiling case of a
 * face cut by a tile edge (a half box inside the whole one), so a box mostly inside a box of
 * similar scale counts as the same too. The scale test keeps a small face inside a large one
 * (a picture on a T-shirt, a face at the back of a crowd) from being swallowed.
 */
function sameObject(a: Box, b: Box, iou: number): boolean {
  const inter = intersection(a, b);
  if (inter === 0) return false;
  const areaA = a.w * a.h, areaB = b.w * b.h;
  if (inter / (areaA + areaB - inter) >= iou) return true;
  const smaller = Math.min(areaA, areaB), larger = Math.max(areaA, areaB);
  return inter / smaller >= 0.7 && smaller / larger >= 0.25;
}

/** Non-maximum suppression: best-scoring boxes first, each dropping its duplicates. */
export function mergeBoxes(boxes: Box[], iou = 0.4): Box[] {
  const kept: Box[] = [];
  for (const box of [...boxes].sort((a, b) => b.score - a.score)) {
    if (!kept.some((k) => sameObject(k, box, iou))) kept.push(box);
  }
  return kept;
}

/**
 * People = faces + person boxes that have no face of their own. A face belongs to a person box
 * when its centre lies inside it; each box takes at most one face and each face one box, pairing
 * first where the face sits where a head would (centred, near the top), so in a crowd, where one
 * body box overlaps several faces, each body gets its own face rather than a neighbour's.
 */
export function countPeople(faces: Box[], persons: Box[]): number {
  const pairs: { face: number; person: number; cost: number }[] = [];
  faces.forEach((f, fi) => {
    const cx = f.x + f.w / 2, cy = f.y + f.h / 2;
    persons.forEach((p, pi) => {
      if (cx < p.x || cx > p.x + p.w || cy < p.y || cy > p.y + p.h) return;
      // A face far larger than the body box is not that body's head.
      if (f.w > p.w * 1.5) return;
      const cost = Math.abs(cx - (p.x + p.w / 2)) / p.w + Math.abs(cy - (p.y + Math.min(p.h, p.w) * 0.3)) / p.h;
      pairs.push({ face: fi, person: pi, cost });
    });
  });
  const usedFaces = new Set<number>(), usedPersons = new Set<number>();
  for (const pair of pairs.sort((a, b) => a.cost - b.cost)) {
    if (usedFaces.has(pair.face) || usedPersons.has(pair.person)) continue;
    usedFaces.add(pair.face);
    usedPersons.add(pair.person);
  }
  return faces.length + persons.length - usedPersons.size;
}
