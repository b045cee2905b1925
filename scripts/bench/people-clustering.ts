/**
 * bench:people, part 2: clustering faces into people, scored by pairwise precision and recall.
 *
 * Faces: @vladmandic/human's face-match screenshot, 18 × 6 real face photos sorted by likeness to
 * one man. Its first nine (row 0, columns 0-8) are nine different photos of that man (checked by
 * eye): a real identity with real changes of pose, light and camera. Cells whose identity is
 * unsure (row 0 columns 9-17 and row 1 columns 0-3: men who may be him) and cells with a second
 * face are left out; every other cell is taken as a person of its own, and appears in three
 * "photos" made from its thumbnail (pasted into different synthetic scenes at different sizes,
 * mirrored, brighter or darker): those pairs test robustness to photographic changes only, not
 * to real ones, so their recall is optimistic. Each photo goes through VisionModels.faces (the
 * pipeline's detector and faceres embedding); faces are then assigned in upload order exactly as
 * the appliance does (personFor against the 16 nearest earlier faces) and the rest clustered
 * (clusterFaces). Identities are split into the fixed tuning and held-out halves (splits.ts).
 * Also prints a sweep of the same-person threshold on the tuning half.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import sharp from "sharp";
import type { VisionModels } from "../../src/images/vision.ts";
import { CLUSTERING, clusterFaces, personFor, type ClusterRule } from "../../src/people/clustering.ts";
import { photo } from "../../test/support/images.ts";
import { HALVES, splitItems } from "./splits.ts";

const assets = join(dirname(createRequire(import.meta.url).resolve("@vladmandic/human")), "..", "assets");
const TOPS = [283, 395, 508, 620, 732, 845];
/** A second face cut in at the edge (see test/support/crowd-fixtures.ts), and the unsure cells. */
const LEFT_OUT = new Set(["0,7", "0,12", "0,16", "4,3", "5,6", ...[9, 10, 11, 12, 13, 14, 15, 16, 17].map((c) => `0,${c}`), ...[0, 1, 2, 3].map((c) => `1,${c}`)]);
const THE_MAN = new Set([0, 1, 2, 3, 4, 5, 6, 7, 8].map((c) => `0,${c}`));

interface Photo {
  id: string;
  identity: string;
  real: boolean;
  image: Buffer;
}

function cell(row: number, column: number): Promise<Buffer> {
  const left = Math.round((column * 1920) / 18) + 3;
  const width = Math.round(((column + 1) * 1920) / 18) - left - 3;
  return sharp(join(assets, "screenshot-facematch.jpg")).extract({ left, top: TOPS[row]! + 3, width, height: 100 }).toBuffer();
}

async function scene(face: Buffer, seed: number): Promise<Buffer> {
  const size = 200 + ((seed * 37) % 120);
  let pasted = sharp(face).resize(size, size);
  if (seed % 2) pasted = pasted.flop();
  pasted = pasted.modulate({ brightness: 0.85 + ((seed * 13) % 30) / 100 });
  const [width, height] = [900, 700];
  const left = Math.round((((seed * 53) % 100) / 100) * (width - size));
  const top = Math.round((((seed * 29) % 100) / 100) * (height - size));
  return sharp(await photo(seed, width, height))
    .composite([{ input: await pasted.toBuffer(), left, top }])
    .jpeg({ quality: 85 })
    .toBuffer();
}

async function photos(): Promise<Photo[]> {
  const out: Photo[] = [];
  let seed = 1;
  for (let row = 0; row < TOPS.length; row++) {
    for (let column = 0; column < 18; column++) {
      const key = `${row},${column}`;
      if (LEFT_OUT.has(key)) continue;
      const face = await cell(row, column);
      if (THE_MAN.has(key)) out.push({ id: `the man ${key}`, identity: "the man", real: true, image: await scene(face, seed++) });
      else for (let copy = 0; copy < 3; copy++) out.push({ id: `${key} #${copy}`, identity: key, real: false, image: await scene(face, seed++) });
    }
  }
  return out;
}

interface Face {
  photo: Photo;
  vector: Float32Array;
}

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
};

/** Person labels as the appliance would give them: incremental assignment in order, then clustering of the rest. */
function cluster(faces: Face[], rule: ClusterRule): Map<string, string> {
  const person = new Map<string, string>();
  let next = 0;
  faces.forEach((face, i) => {
    const earlier = faces
      .slice(0, i)
      .map((other) => ({ faceId: other.photo.id, fileId: other.photo.id, personId: person.get(other.photo.id) ?? null, similarity: cosine(face.vector, other.vector) }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, 16);
    const joined = personFor(face.photo.id, earlier, rule);
    if (joined) person.set(face.photo.id, joined);
  });
  const left = faces.filter((f) => !person.has(f.photo.id)).map((f) => ({ id: f.photo.id, fileId: f.photo.id, vector: f.vector }));
  for (const members of clusterFaces(left, rule)) {
    const id = `p${next++}`;
    for (const member of members) person.set(member, id);
  }
  return person;
}

function score(faces: Face[], rule: ClusterRule) {
  const person = cluster(faces, rule);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let realTp = 0;
  let realPairs = 0;
  for (let i = 0; i < faces.length; i++) {
    for (let j = i + 1; j < faces.length; j++) {
      const a = faces[i]!.photo;
      const b = faces[j]!.photo;
      const together = person.has(a.id) && person.get(a.id) === person.get(b.id);
      const same = a.identity === b.identity;
      if (together && same) tp++;
      else if (together) fp++;
      else if (same) fn++;
      if (same && a.real) {
        realPairs++;
        if (together) realTp++;
      }
    }
  }
  return {
    precision: tp + fp === 0 ? 1 : tp / (tp + fp),
    recall: tp + fn === 0 ? 1 : tp / (tp + fn),
    realRecall: realPairs ? realTp / realPairs : null,
    pairs: tp + fn,
    people: new Set(person.values()).size,
  };
}

export async function clusteringBench(vision: VisionModels): Promise<void> {
  console.log("\nClustering faces into people (pairwise precision and recall)");
  const started = performance.now();
  const all = await photos();
  const faces: Face[] = [];
  let missed = 0;
  for (const p of all) {
    const found = await vision.faces(p.image);
    // The pasted face is the largest (the scenes hold none of their own).
    const face = found.sort((a, b) => (b.box.x_max - b.box.x_min) * (b.box.y_max - b.box.y_min) - (a.box.x_max - a.box.x_min) * (a.box.y_max - a.box.y_min))[0];
    if (face) faces.push({ photo: p, vector: face.embedding });
    else missed++;
  }
  const identities = [...new Set(all.map((p) => p.identity))];
  console.log(
    `${all.length} photos of ${identities.length} identities (the man: ${all.filter((p) => p.real).length} real photos), faces found in ${faces.length} (${missed} missed) in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  const split = splitItems("people-clustering", identities, (id) => id);
  const pct = (n: number | null) => (n === null ? "   -  " : `${(n * 100).toFixed(1)} %`);
  for (const half of HALVES) {
    const ids = new Set(split[half]);
    const s = score(faces.filter((f) => ids.has(f.photo.identity)), CLUSTERING);
    console.log(
      `  ${half.padEnd(8)}  precision ${pct(s.precision)}  recall ${pct(s.recall)}  (real photos of one man: recall ${pct(s.realRecall)})  ${ids.size} identities, ${s.pairs} true pairs, ${s.people} people made`,
    );
  }
  const tuning = new Set(split.tuning);
  const tuningFaces = faces.filter((f) => tuning.has(f.photo.identity));
  const sweep = [0.55, 0.6, 0.65, 0.7, 0.75, 0.8].map((samePerson) => {
    const s = score(tuningFaces, { ...CLUSTERING, samePerson });
    return `${samePerson.toFixed(2)}: P ${pct(s.precision)} R ${pct(s.recall)}`;
  });
  console.log(`  tuning half, same-person threshold (shipped ${CLUSTERING.samePerson}): ${sweep.join("  |  ")}`);
  // Real variation, whichever half the man fell in: how many of his 36 pairs each threshold keeps.
  const man = faces.filter((f) => f.photo.real);
  const manSweep = [0.55, 0.6, 0.65, 0.7, 0.75].map((samePerson) => `${samePerson.toFixed(2)}: ${pct(score(man, { ...CLUSTERING, samePerson }).recall)}`);
  console.log(`  the man's real photos alone, recall by threshold: ${manSweep.join("  ")}`);
}
