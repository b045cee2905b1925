/**
 * bench:duplicates' images: each source makes a group of versions that must be found together,
 * and no two sources may be grouped (each source's versions are compared with every other
 * source's of its half).
 *
 * Sources:
 * - Human's assets (always there): the face-match screenshot's 103 face thumbnails (eight real
 *   photos of one man among them: different photos of one person, hard negatives), the people
 *   and group photos of samples.jpg and its large party photo;
 * - ../shared/datasets (MEDIABOX_DATASETS), when present: scanned receipts and page images
 *   (look-alike documents, hard negatives);
 * - scikit-image's sample photos (MEDIABOX_BENCH_PHOTOS: the `skimage/data` folder of the
 *   scikit-image 0.26.0 wheel, `pip download --no-deps scikit-image==0.26.0` and unzip), when
 *   given: natural photos (a cat, a camera man, coins, three look-alike textures, the moon, a
 *   motorcycle), and five scenes (coffee, an astronaut, a rocket, a retina, a deep-field sky) each
 *   taken as four overlapping framings (65 % of each side, from each corner): different photos of
 *   the same scene, which must stay apart. The motorcycle's other stereo view (a second camera
 *   beside the first, the same instant) is its one real "burst" neighbour.
 *
 * Versions of each source: itself, resized to half, re-encoded at JPEG quality 35, cropped 5 %
 * off each side, exposure +25 % and -25 %, and a burst neighbour (shifted 3 % and a degree
 * turned); the motorcycle also has its stereo view.
 */
import { existsSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import sharp from "sharp";
import { halves, type Half } from "./splits.ts";

const assets = join(createRequire(import.meta.url).resolve("@vladmandic/human"), "..", "..", "assets");
const DATASETS = resolve(process.env.MEDIABOX_DATASETS ?? join(import.meta.dir, "../../../shared/datasets"));
const PHOTOS = process.env.MEDIABOX_BENCH_PHOTOS ? resolve(process.env.MEDIABOX_BENCH_PHOTOS) : null;

export interface Source {
  id: string;
  kind: string;
  /** Sources of one scene fall in the same half, so that they are compared with each other. */
  splitKey: string;
  image: () => Promise<Buffer>;
  /** Versions beyond the generated ones (a real second shot). */
  extra?: Record<string, () => Promise<Buffer>>;
}

function humanSources(): Source[] {
  const sources: Source[] = [];
  const crop = (file: string, left: number, top: number, width: number, height: number) => () =>
    sharp(join(assets, file)).extract({ left, top, width, height }).jpeg({ quality: 95 }).toBuffer();
  // screenshot-facematch.jpg: 18 columns × 6 rows of face thumbnails (see test/support/crowd-fixtures.ts).
  const rows: [number, number][] = [[283, 389], [395, 502], [508, 614], [620, 727], [732, 839], [845, 951]];
  const skipped = new Set(["0,7", "0,12", "0,16", "4,3", "5,6"]); // a second face cut in at the edge
  rows.forEach(([top, bottom], row) => {
    for (let column = 0; column < 18; column++) {
      if (skipped.has(`${row},${column}`)) continue;
      const left = Math.round((column * 1920) / 18);
      const width = Math.round(((column + 1) * 1920) / 18) - left;
      const id = `face-${row}-${column}`;
      sources.push({ id, kind: "face", splitKey: id, image: crop("screenshot-facematch.jpg", left + 2, top + 2, width - 4, bottom - top - 3) });
    }
  });
  // samples.jpg's top strip: people and two group photos, separated by dark columns.
  const strip: [number, number][] = [[166, 316], [326, 536], [545, 633], [641, 788], [797, 902], [910, 1124], [1133, 1279]];
  strip.forEach(([left, right], i) => sources.push({ id: `sample-${i}`, kind: "photo", splitKey: `sample-${i}`, image: crop("samples.jpg", left, 0, right - left + 1, 158) }));
  sources.push({ id: "party", kind: "photo", splitKey: "party", image: crop("samples.jpg", 0, 200, 1280, 958) });
  return sources;
}

function datasetSources(): Source[] {
  const sources: Source[] = [];
  const add = (dir: string, kind: string) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir).filter((n) => n.endsWith(".jpg")).sort()) {
      const id = `${kind}-${name}`;
      sources.push({ id, kind, splitKey: id, image: () => sharp(join(dir, name)).toBuffer() });
    }
  };
  add(join(DATASETS, "ocr", "sroie"), "receipt");
  add(join(DATASETS, "layout", "publaynet", "image"), "page");
  add(join(DATASETS, "layout", "docbank", "image"), "page");
  return sources;
}

const NATURAL = ["camera.png", "chelsea.png", "coins.png", "grass.png", "gravel.png", "brick.png", "moon.png", "clock_motion.png", "motorcycle_left.png"];
const SCENES = ["coffee.png", "astronaut.png", "rocket.jpg", "retina.jpg", "hubble_deep_field.jpg"];
/** A framing keeps this share of each side; four framings from the corners overlap by 46 % of their width and height. */
const FRAMING = 0.65;

function photoSources(): Source[] {
  if (!PHOTOS) return [];
  if (!existsSync(join(PHOTOS, "chelsea.png"))) throw new Error(`MEDIABOX_BENCH_PHOTOS=${PHOTOS} is not scikit-image's skimage/data folder`);
  const file = (name: string) => () => sharp(join(PHOTOS, name)).jpeg({ quality: 95 }).toBuffer();
  const sources: Source[] = NATURAL.map((name) => ({ id: `photo-${name}`, kind: "natural photo", splitKey: `photo-${name}`, image: file(name) }));
  sources.find((s) => s.id === "photo-motorcycle_left.png")!.extra = { "real neighbour (stereo view)": file("motorcycle_right.png") };
  for (const name of SCENES) {
    for (const [corner, fx, fy] of [["top left", 0, 0], ["top right", 1, 0], ["bottom left", 0, 1], ["bottom right", 1, 1]] as const) {
      sources.push({
        id: `scene-${name}-${corner}`,
        kind: "framing of a scene",
        splitKey: `scene-${name}`,
        image: async () => {
          const { width = 0, height = 0 } = await sharp(join(PHOTOS, name)).metadata();
          const w = Math.round(width * FRAMING);
          const h = Math.round(height * FRAMING);
          return sharp(join(PHOTOS, name)).extract({ left: fx * (width - w), top: fy * (height - h), width: w, height: h }).jpeg({ quality: 95 }).toBuffer();
        },
      });
    }
  }
  return sources;
}

export function benchSources(): Source[] {
  return [...humanSources(), ...datasetSources(), ...photoSources()];
}

export const TRANSFORMS: Record<string, (image: Buffer) => Promise<Buffer>> = {
  original: async (image) => image,
  "resized 50 %": async (image) => {
    const { width = 0 } = await sharp(image).metadata();
    return sharp(image).resize(Math.max(16, Math.round(width / 2))).jpeg({ quality: 90 }).toBuffer();
  },
  "re-encoded q35": (image) => sharp(image).jpeg({ quality: 35 }).toBuffer(),
  "cropped 5 %": async (image) => {
    const { width = 0, height = 0 } = await sharp(image).metadata();
    const dx = Math.round(width * 0.05);
    const dy = Math.round(height * 0.05);
    return sharp(image).extract({ left: dx, top: dy, width: width - 2 * dx, height: height - 2 * dy }).jpeg({ quality: 90 }).toBuffer();
  },
  "exposure +25 %": (image) => sharp(image).modulate({ brightness: 1.25 }).jpeg({ quality: 90 }).toBuffer(),
  "exposure -25 %": (image) => sharp(image).modulate({ brightness: 0.75 }).jpeg({ quality: 90 }).toBuffer(),
  "burst (shifted 3 %, turned 1°)": async (image) => {
    const { width = 0, height = 0 } = await sharp(image).metadata();
    const turned = await sharp(image).rotate(1, { background: "#808080" }).toBuffer({ resolveWithObject: true });
    // The turned copy is larger by its corners: cut the original's size back out, 3 % to the right.
    const left = Math.floor((turned.info.width - width) / 2) + Math.round(width * 0.03);
    const top = Math.floor((turned.info.height - height) / 2);
    return sharp(turned.data)
      .extract({ left, top, width: Math.min(width, turned.info.width - left), height: Math.min(height, turned.info.height - top) })
      .jpeg({ quality: 90 })
      .toBuffer();
  },
};

/** Sources in the fixed tuning and held-out halves, all framings of one scene in the same half. */
export function splitSources(sources: Source[]): Record<Half, Source[]> {
  const half = halves("duplicates", [...new Set(sources.map((s) => s.splitKey))]);
  return { tuning: sources.filter((s) => half.get(s.splitKey) === "tuning"), "held-out": sources.filter((s) => half.get(s.splitKey) === "held-out") };
}
