/**
 * Near-duplicate grouping against known groups.
 *
 *   nice -n 10 bun scripts/bench/duplicates.ts       (or: npm run bench:duplicates)
 *
 * Sources: real photos from @vladmandic/human's assets (the face-match screenshot's 92 face
 * thumbnails, the people and group photos of samples.jpg, its large party photo) and, when
 * ../shared/datasets (or MEDIABOX_DATASETS) is there, the scanned receipts (SROIE) and page images (PubLayNet,
 * DocBank): look-alike documents are the hard negatives. Each source makes a group: itself,
 * resized to half, re-encoded at JPEG quality 35, cropped 5 % off each side, exposure +25 % and
 * -25 %, and a burst neighbour (shifted 3 % and a degree turned). Every image goes through the
 * pipeline's own functions (its large_1024 variant as renderImage makes it, the fingerprint),
 * then the appliance's rule pairs and groups them. Sources are split into the fixed tuning and
 * held-out halves (splits.ts); each half is grouped on its own.
 *
 * Prints pairwise precision and recall, the groups holding more than one source (unrelated
 * photos grouped: must be 0) and recall per transform, for the shipped rule and for the
 * whole-image hash alone.
 */
import { existsSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import sharp from "sharp";
import { fingerprint, hammingDistance, type Fingerprint } from "../../src/duplicates/fingerprint.ts";
import { groupsOf, NEAR_DUPLICATE, nearDuplicatePair } from "../../src/duplicates/near-duplicates.ts";
import { VARIANT_SIZES } from "../../src/files/variants.ts";
import { HALVES, splitItems } from "./splits.ts";

const assets = join(createRequire(import.meta.url).resolve("@vladmandic/human"), "..", "..", "assets");
const DATASETS = resolve(process.env.MEDIABOX_DATASETS ?? join(import.meta.dir, "../../../shared/datasets"));

interface Source {
  id: string;
  kind: string;
  image: () => Promise<Buffer>;
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
      sources.push({ id: `face-${row}-${column}`, kind: "face", image: crop("screenshot-facematch.jpg", left + 2, top + 2, width - 4, bottom - top - 3) });
    }
  });
  // samples.jpg's top strip: people and two group photos, separated by dark columns.
  const strip: [number, number][] = [[166, 316], [326, 536], [545, 633], [641, 788], [797, 902], [910, 1124], [1133, 1279]];
  strip.forEach(([left, right], i) => sources.push({ id: `sample-${i}`, kind: "photo", image: crop("samples.jpg", left, 0, right - left + 1, 158) }));
  sources.push({ id: "party", kind: "photo", image: crop("samples.jpg", 0, 200, 1280, 958) });
  return sources;
}

function datasetSources(): Source[] {
  const sources: Source[] = [];
  const add = (dir: string, kind: string) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir).filter((n) => n.endsWith(".jpg")).sort()) sources.push({ id: `${kind}-${name}`, kind, image: () => sharp(join(dir, name)).toBuffer() });
  };
  add(join(DATASETS, "ocr", "sroie"), "receipt");
  add(join(DATASETS, "layout", "publaynet", "image"), "page");
  add(join(DATASETS, "layout", "docbank", "image"), "page");
  return sources;
}

const TRANSFORMS: Record<string, (image: Buffer) => Promise<Buffer>> = {
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

interface Item {
  id: string;
  source: string;
  transform: string;
  fingerprint: Fingerprint;
}

const sources = [...humanSources(), ...datasetSources()];
console.log(`${sources.length} sources (${[...new Set(sources.map((s) => s.kind))].map((k) => `${sources.filter((s) => s.kind === k).length} ${k}`).join(", ")}) × ${Object.keys(TRANSFORMS).length} versions`);

const started = performance.now();
const items: Item[] = [];
for (const source of sources) {
  const base = await source.image();
  for (const [name, transform] of Object.entries(TRANSFORMS)) {
    // The large_1024 variant as renderImage makes it (upright, at most 1024 px, WebP q80), without its other variants.
    const variant = await sharp(await transform(base)).rotate().resize(VARIANT_SIZES.large_1024, VARIANT_SIZES.large_1024, { fit: "inside", withoutEnlargement: true }).webp({ quality: 80, effort: 2 }).toBuffer();
    items.push({ id: `${source.id}/${name}`, source: source.id, transform: name, fingerprint: await fingerprint(variant) });
  }
  if (items.length % 140 === 0) console.log(`  ${items.length} images…`);
}
console.log(`${items.length} images rendered and fingerprinted in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);

interface Score {
  precision: number;
  recall: number;
  truePairs: number;
  mixedGroups: number;
  recallByTransform: Record<string, number>;
}

type Verdict = (a: Fingerprint, b: Fingerprint) => boolean;

function score(pool: Item[], duplicate: Verdict): Score {
  const pairs: [string, string][] = [];
  for (let i = 0; i < pool.length; i++) {
    for (let j = i + 1; j < pool.length; j++) if (duplicate(pool[i]!.fingerprint, pool[j]!.fingerprint)) pairs.push([pool[i]!.id, pool[j]!.id]);
  }
  const sourceOf = new Map(pool.map((item) => [item.id, item.source]));
  const groupOf = new Map<string, number>();
  const groups = groupsOf(pairs);
  groups.forEach((group, g) => group.forEach((id) => groupOf.set(id, g)));
  let tp = 0;
  let fp = 0;
  let fn = 0;
  const found: Record<string, [number, number]> = {};
  for (let i = 0; i < pool.length; i++) {
    for (let j = i + 1; j < pool.length; j++) {
      const a = pool[i]!;
      const b = pool[j]!;
      const together = groupOf.has(a.id) && groupOf.get(a.id) === groupOf.get(b.id);
      const same = a.source === b.source;
      if (together && same) tp++;
      else if (together) fp++;
      else if (same) fn++;
      // Recall per transform: the version found with its original.
      if (same && a.transform === "original") {
        const counts = (found[b.transform] ??= [0, 0]);
        counts[1]++;
        if (together) counts[0]++;
      }
    }
  }
  const mixedGroups = groups.filter((group) => new Set(group.map((id) => sourceOf.get(id))).size > 1).length;
  return {
    precision: tp + fp === 0 ? 1 : tp / (tp + fp),
    recall: tp + fn === 0 ? 1 : tp / (tp + fn),
    truePairs: tp + fn,
    mixedGroups,
    recallByTransform: Object.fromEntries(Object.entries(found).map(([name, [hit, all]]) => [name, hit / all])),
  };
}

const split = splitItems("duplicates", sources, (s) => s.id);
const pct = (n: number) => `${(n * 100).toFixed(1)} %`;
const R = NEAR_DUPLICATE;
for (const [label, verdict] of [
  ["whole-image hash alone, <= 6 bits (baseline)", (a: Fingerprint, b: Fingerprint) => hammingDistance(a.phash, b.phash) <= R.sameHash],
  [`shipped: crop-tolerant hash <= ${R.sameHash}, or <= ${R.candidateHash} with thumbnail correlation >= ${R.correlation}`, (a: Fingerprint, b: Fingerprint) => nearDuplicatePair(a, b).duplicate],
] as const) {
  console.log(label);
  for (const half of HALVES) {
    const ids = new Set(split[half].map((s) => s.id));
    const s = score(items.filter((item) => ids.has(item.source)), verdict);
    console.log(
      `  ${half.padEnd(8)}  precision ${pct(s.precision)}  recall ${pct(s.recall)}  (${ids.size} sources, ${s.truePairs} true pairs)  groups mixing unrelated photos: ${s.mixedGroups}`,
    );
    console.log(`            recall by version: ${Object.entries(s.recallByTransform).map(([name, r]) => `${name} ${pct(r)}`).join(", ")}`);
  }
}

process.exit(0);
