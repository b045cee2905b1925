/**
 * What sharing the image pipeline's passes saves (issue 42), before and after in one run:
 *
 *   nice -n 10 bun scripts/bench/shared-passes.ts       (or: npm run bench:shared-passes)
 *
 * - faces: before, the objects stage ran BlazeFace and the face mesh (analyze()) and the faces
 *   stage ran them again with faceres (faces()); after, one pass gives both
 *   (analyze(..., { recognizeFaces: true })). The faces found and their descriptors must be the same.
 * - duplicates: before, the fingerprint decoded the stored WebP variant five times (metadata,
 *   centre crop re-encoded, two hashes, thumbnail and sharpness copies; the function is kept
 *   below as the baseline); after, it reads the pixels the variants were made from. The hashes
 *   must stay close (bench:duplicates scores the grouping itself).
 *
 * Images: bench:people's crowd composites (1-30 real faces, plain and busy backgrounds, each with
 * a half-size copy), its real portrait and four generated photos without faces, each rendered by
 * renderImage as the pipeline does. Each image runs before then after, alternating, and the
 * process's CPU time (all threads) is summed per path.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import phash from "sharp-phash";
import sharp from "sharp";
import { fingerprint, hammingDistance, thumbCorrelation, type Fingerprint } from "../../src/duplicates/fingerprint.ts";
import { renderImage } from "../../src/images/variants.ts";
import { VisionModels, type RecognizedFace } from "../../src/images/vision.ts";
import { crowdFixtures, portrait } from "../../test/support/crowd-fixtures.ts";
import { photo } from "../../test/support/images.ts";
import { cpuSeconds } from "./process-stats.ts";

/** The fingerprint as it was computed before (from the encoded WebP variant), the baseline. */
async function fingerprintOfEncoded(image: Buffer): Promise<Omit<Fingerprint, "sharpness">> {
  const { width = 0, height = 0 } = await sharp(image).metadata();
  const dx = Math.round(width * 0.05);
  const dy = Math.round(height * 0.05);
  const center = await sharp(image).extract({ left: dx, top: dy, width: Math.max(1, width - 2 * dx), height: Math.max(1, height - 2 * dy) }).toBuffer();
  const [hash, centerHash, , thumb] = await Promise.all([
    phash(image),
    phash(center),
    sharp(image).resize(256, 256, { fit: "inside" }).greyscale().raw().toBuffer({ resolveWithObject: true }),
    sharp(image).resize(32, 32, { fit: "fill" }).greyscale().raw().toBuffer(),
  ]);
  return { phash: hash, phashCenter: centerHash, thumb: new Uint8Array(thumb) };
}

const modelsDir = mkdtempSync(join(tmpdir(), "mediabox-bench-passes-"));
const vision = new VisionModels({ modelsDir });
const images: { name: string; image: Buffer }[] = [
  { name: "portrait", image: await portrait() },
  ...(await Promise.all([1, 2, 3, 4].map(async (seed) => ({ name: `generated photo ${seed}`, image: await photo(seed, 1600, 1200) })))),
  ...(await crowdFixtures()).map((f) => ({ name: f.name, image: f.image })),
];

const cpu = () => cpuSeconds(process.pid).total;
const totals = { facesBefore: 0, facesAfter: 0, printBefore: 0, printAfter: 0 };
let faceCountsDiffer = 0;
let facesCompared = 0;
let worstDescriptor = 1;
const hashDistances: number[] = [];
const thumbCorrelations: number[] = [];

// Loads every model (faceres too) so that no path pays for loading.
const warm = await renderImage(images[0]!.image);
await vision.analyze(warm.pixels, { recognizeFaces: true });
await vision.faces(warm.pixels);

const sameFaces = (a: RecognizedFace[], b: RecognizedFace[]) => {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const dot = a[i]!.embedding.reduce((s, x, k) => s + x * b[i]!.embedding[k]!, 0);
    worstDescriptor = Math.min(worstDescriptor, dot);
    facesCompared++;
  }
  return true;
};

for (const { name, image } of images) {
  const rendered = await renderImage(image);
  const webp = rendered.variants.find((v) => v.type === "large_1024")!.data;

  let started = cpu();
  const before = await vision.analyze(rendered.pixels);
  const facesBefore = before.faces !== 0 ? await vision.faces(rendered.pixels) : [];
  totals.facesBefore += cpu() - started;

  started = cpu();
  const after = await vision.analyze(rendered.pixels, { recognizeFaces: true });
  const facesAfter = after.faces !== 0 ? after.recognizedFaces! : [];
  totals.facesAfter += cpu() - started;
  if (!sameFaces(facesBefore, facesAfter) || before.people !== after.people) faceCountsDiffer++;

  started = cpu();
  const old = await fingerprintOfEncoded(webp);
  totals.printBefore += cpu() - started;
  started = cpu();
  const now = await fingerprint(rendered.pixels);
  totals.printAfter += cpu() - started;
  hashDistances.push(hammingDistance(old.phash, now.phash), hammingDistance(old.phashCenter, now.phashCenter));
  thumbCorrelations.push(thumbCorrelation(old.thumb, now.thumb));
  console.log(`${name.padEnd(34)} faces ${String(facesBefore.length).padStart(2)} / ${String(facesAfter.length).padStart(2)}   hash moved ${hashDistances.at(-2)} / ${hashDistances.at(-1)} bits`);
}
await vision.close();
rmSync(modelsDir, { recursive: true, force: true });

const n = images.length;
const ms = (s: number) => `${Math.round((s * 1000) / n)} ms`;
console.log(`\n${n} images, CPU per image (all threads):`);
console.log(`  objects + faces stages: before ${ms(totals.facesBefore)}, after ${ms(totals.facesAfter)} (${(totals.facesAfter / totals.facesBefore).toFixed(2)}x)`);
console.log(`  duplicates fingerprint: before ${ms(totals.printBefore)}, after ${ms(totals.printAfter)} (${(totals.printAfter / totals.printBefore).toFixed(2)}x)`);
console.log(`faces: ${faceCountsDiffer} images with other faces or people after; ${facesCompared} descriptors compared, lowest cosine ${worstDescriptor.toFixed(4)}`);
const sorted = [...hashDistances].sort((a, b) => a - b);
console.log(`fingerprint: hash bits moved by the change: median ${sorted[Math.floor(sorted.length / 2)]}, max ${sorted.at(-1)}; thumbnail correlation old/new min ${Math.min(...thumbCorrelations).toFixed(3)}`);
process.exit(0);
