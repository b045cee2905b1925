/**
 * Face and people counts that hold up in group photos. Human shrinks the whole image to its
 * detectors' inputs (BlazeFace 256 px, CenterNet 512 px), so in a group photo or a crowd most
 * faces end up a few pixels wide and are missed. When the first, whole-image pass suggests people
 * who are small in the frame, BlazeFace looks again at overlapping tiles; the face boxes are
 * mapped back, duplicates merged, and combined with the whole-image person boxes into one count
 * (people-count.ts). A single large subject (a portrait) costs one pass, as before.
 */
import type { ObjectResult } from "@vladmandic/human";
import { detectRegions, type DetectRegion, type FaceDescriptor } from "./vision-tfjs.ts";
import { countPeople, fromTile, mergeBoxes, planTiles, type Box } from "./people-count.ts";

/**
 * Tiles of CenterNet's input side, 512 px of the analyzed image (at most 1024 px), seen by
 * BlazeFace at half scale. Measured with bench:people on the 8-30 people composites: 256 px tiles
 * (BlazeFace's own side) counted worse (10.3 % mean error against 7.1 %) at almost twice the time,
 * since every face in four times as many overlaps goes through the face mesh again. Tiling
 * CenterNet as well (for bodies) doubled the time and made the count no better: it reads the face
 * crops as people too, and cut bodies at tile edges come back as extra people.
 */
const TILE = 512;
/** A person box below this score counts nobody, but still hints that people may be present. */
const PERSON_SCORE = 0.4;
const PERSON_HINT_SCORE = 0.25;
/**
 * What a face found only in a tile must show. Tiles put BlazeFace and the face mesh in front of
 * more background than the whole-image pass does, and on the busy composites the mesh passed
 * blobs and wall art at 0.29-0.32 with lopsided boxes (121 x 82), while real faces scored 0.48
 * and up and their boxes stayed square.
 */
const TILE_FACE_SCORE = 0.45;
const MAX_FACE_ASPECT = 1.3;
/** Caps on the extra work for one image; what was found before a cap hit still counts. */
const MAX_TILES = 9;
const TILE_BUDGET_MS = 8_000;

export interface TiledDetections {
  /** Whole-image objects (the tiles only add faces). */
  objects: ObjectResult[];
  faces: number;
  people: number;
  /** With `recognize`: the whole-image pass's faces with their faceres descriptors (what the faces stage needs). */
  recognized?: FaceDescriptor[];
}

export interface TileOptions {
  /** false: the whole-image pass only. */
  tiles?: boolean;
  /** Also describe the whole-image pass's faces (faceres), so that they need no second detection. */
  recognize?: boolean;
}

export async function detectWithTiles(rgb: Uint8Array, width: number, height: number, options: TileOptions = {}): Promise<TiledDetections> {
  const [whole] = await detectRegions(rgb, width, height, [{ faces: true, objects: true, describe: options.recognize === true }]);
  const wholeFaces: Box[] = whole!.faceBoxes;
  const wholePersons = personBoxes(whole!.objects, PERSON_HINT_SCORE);
  const regions = options.tiles === false ? [] : tileRegions(width, height, wholeFaces, wholePersons);
  let faces = wholeFaces;
  // CenterNet already suppressed its duplicates; merging again would drop people standing behind others.
  const persons = wholePersons.filter((p) => p.score >= PERSON_SCORE);
  if (regions.length) {
    const started = performance.now();
    const results = await detectRegions(rgb, width, height, regions, () => performance.now() - started > TILE_BUDGET_MS);
    const tileFaces = results.flatMap((r, i) => r.faceBoxes.filter(plausibleFace).map((b) => fromTile(b, regions[i]!.tile!)));
    faces = mergeBoxes([...faces, ...tileFaces]);
  }
  return { objects: whole!.objects, faces: faces.length, people: countPeople(faces, persons), ...(whole!.descriptors ? { recognized: whole!.descriptors } : {}) };
}

function plausibleFace(f: Box): boolean {
  return f.score >= TILE_FACE_SCORE && Math.max(f.w, f.h) <= MAX_FACE_ASPECT * Math.min(f.w, f.h);
}

function personBoxes(objects: ObjectResult[], minScore: number): Box[] {
  return objects
    .filter((o) => o.label === "person" && o.score >= minScore)
    .map((o) => ({ x: o.box[0], y: o.box[1], w: o.box[2], h: o.box[3], score: o.score }));
}

/**
 * Which tiles to look at again, if any. Only when the image is larger than a tile and the
 * whole-image pass saw someone small: a face under an eighth of the long side (under 32 px of
 * BlazeFace's 256 px input, where it starts missing faces) or a body under half the height (even
 * a faint one), so that neighbours of theirs may have been too small to be seen at all. A
 * 1024 x 768 image makes 6 tiles.
 */
export function tileRegions(width: number, height: number, faces: Box[], persons: Box[]): DetectRegion[] {
  if (Math.max(width, height) <= TILE) return [];
  const long = Math.max(width, height);
  const smallFace = faces.some((f) => Math.max(f.w, f.h) < long / 8);
  const smallPerson = persons.some((p) => p.h < height / 2);
  if (!smallFace && !smallPerson) return [];
  return planTiles(width, height, TILE).slice(0, MAX_TILES).map((tile) => ({ tile, faces: true, objects: false }));
}
