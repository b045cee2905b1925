/**
 * Group pictures with a known number of people, for counting tests and bench:people.
 *
 * There is no crowd dataset offline, so these are composites of real photos shipped with
 * @vladmandic/human: face thumbnails from the face-match screenshot's grid and full-length
 * single-person thumbnails from the top strip of samples.jpg. Every pasted crop was checked by
 * eye to hold exactly one person; the count of a composite is the number of crops pasted.
 * Everything is made deterministically at run time from node_modules (nothing binary committed).
 */
import { createRequire } from "node:module";
import path from "node:path";
import sharp, { type OverlayOptions } from "sharp";

const assets = path.join(path.dirname(createRequire(import.meta.url).resolve("@vladmandic/human")), "..", "assets");

// screenshot-facematch.jpg (1920x954): 18 columns x 6 rows of face thumbnails from y = 283,
// rows separated by dark lines.
const GRID_ROWS: [number, number][] = [[283, 389], [395, 502], [508, 614], [620, 727], [732, 839], [845, 951]];
const GRID_COLUMNS = 18;
// Cells left out, as "row,column": a second face cut in at the edge (0,7 0,12 0,16 4,3 5,6),
// blurred past recognition in the source (1,2 1,3 1,9 1,10 1,11 1,13 2,9 4,11), and
// computer-rendered faces (4,0 5,3 5,12).
const SKIPPED_CELLS = new Set(["0,7", "0,12", "0,16", "4,3", "5,6", "1,2", "1,3", "1,9", "1,10", "1,11", "1,13", "2,9", "4,11", "4,0", "5,3", "5,12"]);

// samples.jpg top strip, rows 0..157: one real person per thumbnail (columns found from the
// dark separators; the first thumbnail, a 3D render, and the two group photos are left out).
const PERSON_COLUMNS: [number, number][] = [[166, 316], [326, 536], [545, 633], [641, 788], [797, 902]];
const STRIP_HEIGHT = 158;

interface Crop {
  kind: "face" | "person";
  file: string;
  region: { left: number; top: number; width: number; height: number };
}

function faceCrops(): Crop[] {
  const crops: Crop[] = [];
  GRID_ROWS.forEach(([top, bottom], row) => {
    for (let column = 0; column < GRID_COLUMNS; column++) {
      if (SKIPPED_CELLS.has(`${row},${column}`)) continue;
      const left = Math.round((column * 1920) / GRID_COLUMNS);
      const width = Math.round(((column + 1) * 1920) / GRID_COLUMNS) - left;
      crops.push({ kind: "face", file: "screenshot-facematch.jpg", region: { left, top, width, height: bottom - top + 1 } });
    }
  });
  return crops;
}

function personCrops(): Crop[] {
  return PERSON_COLUMNS.map(([left, right]) => ({ kind: "person", file: "samples.jpg", region: { left, top: 0, width: right - left + 1, height: STRIP_HEIGHT } }));
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

export type Background = "plain" | "busy";

/** Shapes, stripes and a gradient: texture for false detections to come from. */
function background(kind: Background, width: number, height: number, random: () => number): Buffer {
  if (kind === "plain") return Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#9aa3ad"/></svg>`);
  const hue = () => Math.floor(random() * 360);
  let shapes = "";
  for (let i = 0; i < 80; i++) {
    const [x, y, s] = [random() * width, random() * height, 20 + random() * 200];
    shapes += i % 3 === 0
      ? `<circle cx="${x}" cy="${y}" r="${s / 2}" fill="hsl(${hue()},60%,55%)" opacity="0.8"/>`
      : i % 3 === 1
        ? `<rect x="${x}" y="${y}" width="${s}" height="${s * 0.6}" fill="hsl(${hue()},50%,40%)" transform="rotate(${random() * 90} ${x} ${y})"/>`
        : `<line x1="${x}" y1="${y}" x2="${x + s}" y2="${y + s * (random() - 0.5)}" stroke="hsl(${hue()},70%,70%)" stroke-width="${2 + random() * 8}"/>`;
  }
  return Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="hsl(${hue()},40%,70%)"/><stop offset="1" stop-color="hsl(${hue()},40%,25%)"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/>${shapes}</svg>`);
}

export interface CrowdFixture {
  name: string;
  /** People pasted in: the true count. */
  people: number;
  image: Buffer;
}

/**
 * `people` crops (about a third full-length people, the rest faces) on a width x height canvas:
 * one per cell of a grid with a few spare cells, so no two overlap, each at a random scale and
 * place inside its cell. Faces come out 48-220 px wide, people 40-95 % of a cell's height.
 */
export async function crowdComposite(people: number, kind: Background, seed: number, width = 2000, height = 1500): Promise<CrowdFixture> {
  const random = rng(seed);
  const faces = faceCrops(), persons = personCrops();
  const columns = Math.ceil(Math.sqrt((people * width) / height));
  const rows = Math.ceil(people / columns);
  const cells = Array.from({ length: columns * rows }, (_, i) => i).sort(() => random() - 0.5).slice(0, people);
  const [cellW, cellH] = [width / columns, height / rows];
  const layers: OverlayOptions[] = [];
  for (let i = 0; i < people; i++) {
    const crop = i % 3 === 1 ? persons[(seed + i) % persons.length]! : faces[(seed * 7 + i * 5) % faces.length]!;
    const aspect = crop.region.width / crop.region.height;
    let h = crop.kind === "face"
      ? Math.min(220, Math.max(48, Math.min(cellW, cellH) * (0.35 + random() * 0.35)))
      : Math.min(crop.region.height * 2.5, cellH * (0.4 + random() * 0.55));
    h = Math.min(h, (cellW * 0.95) / aspect);
    const w = Math.round(h * aspect);
    h = Math.round(h);
    const cell = cells[i]!;
    const left = Math.round((cell % columns) * cellW + random() * (cellW - w));
    const top = Math.round(Math.floor(cell / columns) * cellH + random() * (cellH - h));
    const input = await sharp(path.join(assets, crop.file)).extract(crop.region).resize(w, h, { fit: "fill" }).toBuffer();
    layers.push({ input, left, top });
  }
  const image = await sharp(background(kind, width, height, random)).composite(layers).jpeg({ quality: 90 }).toBuffer();
  return { name: `${people} people, ${kind}`, people, image };
}

/** The same picture at half size, re-encoded: the "resized copy" a count must survive. */
export async function resizedCopy(fixture: CrowdFixture): Promise<CrowdFixture> {
  const { width = 0 } = await sharp(fixture.image).metadata();
  const image = await sharp(fixture.image).resize({ width: Math.round(width / 2) }).jpeg({ quality: 85 }).toBuffer();
  return { name: `${fixture.name}, half size`, people: fixture.people, image };
}

export const CROWD_SIZES = [1, 3, 8, 15, 30] as const;

/** Every size on both backgrounds, each followed by its half-size copy. */
export async function crowdFixtures(): Promise<CrowdFixture[]> {
  const out: CrowdFixture[] = [];
  for (const people of CROWD_SIZES) {
    for (const kind of ["plain", "busy"] as const) {
      const original = await crowdComposite(people, kind, people * 10 + (kind === "busy" ? 1 : 0));
      out.push(original, await resizedCopy(original));
    }
  }
  return out;
}

/** A real portrait: one seated woman filling most of a thumbnail of samples.jpg. */
export function portrait(): Promise<Buffer> {
  return sharp(path.join(assets, "samples.jpg")).extract({ left: 165, top: 0, width: 150, height: 158 }).jpeg({ quality: 95 }).toBuffer();
}
