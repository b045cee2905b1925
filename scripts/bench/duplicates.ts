/**
 * Near-duplicate grouping against known groups.
 *
 *   nice -n 10 bun scripts/bench/duplicates.ts       (or: npm run bench:duplicates)
 *
 * MEDIABOX_DATASETS (default ../shared/datasets beside the checkout) adds the receipts and pages;
 * MEDIABOX_BENCH_PHOTOS adds scikit-image's sample photos and the framings of scenes
 * (duplicates-set.ts says how to get them); MEDIABOX_BENCH_CACHE=<file> keeps the decoded,
 * fingerprinted and embedded items between runs (duplicates-items.ts).
 *
 * Every version goes through the pipeline's own functions (the pixels of its large_1024 variant,
 * the fingerprint, the image embedding), then each rule pairs and groups them. Sources are split
 * into the fixed tuning and held-out halves (splits.ts; the framings of one scene fall in one
 * half); each half is grouped on its own. Prints pairwise precision and recall, the groups holding
 * more than one source (unrelated photos grouped: must be 0) and recall per version, for the
 * whole-image hash alone, the rule shipped before, the one shipped now and two variants with the
 * image embedding that were dropped.
 */
import { cropTolerantDistance, hammingDistance, thumbCorrelation } from "../../src/duplicates/fingerprint.ts";
import { groupsOf, NEAR_DUPLICATE, nearDuplicatePair } from "../../src/duplicates/near-duplicates.ts";
import { benchSources, splitSources } from "./duplicates-set.ts";
import { benchItems, type Item } from "./duplicates-items.ts";
import { HALVES } from "./splits.ts";

const sources = benchSources();
console.log(`${sources.length} sources (${[...new Set(sources.map((s) => s.kind))].map((k) => `${sources.filter((s) => s.kind === k).length} ${k}`).join(", ")})`);
const items = await benchItems(sources);

interface Score {
  precision: number;
  recall: number;
  truePairs: number;
  mixedGroups: number;
  /** Framings of one scene grouped together (different photos of one scene). */
  framingsGrouped: number;
  recallByTransform: Record<string, number>;
}

type Verdict = (a: Item, b: Item) => boolean;

function score(pool: Item[], duplicate: Verdict): Score {
  const pairs: [string, string][] = [];
  for (let i = 0; i < pool.length; i++) {
    for (let j = i + 1; j < pool.length; j++) if (duplicate(pool[i]!, pool[j]!)) pairs.push([pool[i]!.id, pool[j]!.id]);
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
      // Recall per version: the version found with its original.
      if (same && a.transform === "original") {
        const counts = (found[b.transform] ??= [0, 0]);
        counts[1]++;
        if (together) counts[0]++;
      }
    }
  }
  const mixed = groups.filter((group) => new Set(group.map((id) => sourceOf.get(id))).size > 1);
  const sceneOf = (id: string) => /^scene-(.+)-(top|bottom) (left|right)$/.exec(sourceOf.get(id)!)?.[1];
  return {
    precision: tp + fp === 0 ? 1 : tp / (tp + fp),
    recall: tp + fn === 0 ? 1 : tp / (tp + fn),
    truePairs: tp + fn,
    mixedGroups: mixed.length,
    framingsGrouped: mixed.filter((group) => group.some((id) => sceneOf(id))).length,
    recallByTransform: Object.fromEntries(Object.entries(found).map(([name, [hit, all]]) => [name, hit / all])),
  };
}

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
const split = splitSources(sources);
const pct = (n: number) => `${(n * 100).toFixed(1)} %`;
const R = NEAR_DUPLICATE;
const rules: [string, Verdict][] = [
  ["whole-image hash alone, <= 6 bits (baseline)", (a, b) => hammingDistance(a.fingerprint.phash, b.fingerprint.phash) <= 6],
  [
    "before: crop-tolerant hash <= 6, or <= 24 with thumbnail correlation >= 0.95",
    (a, b) => {
      const hash = cropTolerantDistance(a.fingerprint, b.fingerprint);
      return hash <= 6 || (hash <= 24 && thumbCorrelation(a.fingerprint.thumb, b.fingerprint.thumb) >= 0.95);
    },
  ],
  [
    "dropped: the above, or hash <= 24 with correlation >= 0.9 and image-embedding cosine >= 0.92",
    (a, b) => {
      const hash = cropTolerantDistance(a.fingerprint, b.fingerprint);
      const correlation = thumbCorrelation(a.fingerprint.thumb, b.fingerprint.thumb);
      return hash <= 6 || (hash <= 24 && (correlation >= 0.95 || (correlation >= 0.9 && cosine(a.embedding, b.embedding) >= 0.92)));
    },
  ],
  [
    `shipped: crop-tolerant hash <= ${R.sameHash}, or <= ${R.candidateHash} with the thumbnails correlating >= ${R.correlation} shifted by up to a pixel`,
    (a, b) => nearDuplicatePair(a.fingerprint, b.fingerprint).duplicate,
  ],
  [
    "dropped: crop-tolerant hash <= 6, or <= 24 with the shifted correlation >= 0.85 and image-embedding cosine >= 0.94",
    (a, b) => {
      const verdict = nearDuplicatePair(a.fingerprint, b.fingerprint, { ...R, correlation: 0.85 });
      return verdict.hamming <= R.sameHash || (verdict.duplicate && cosine(a.embedding, b.embedding) >= 0.94);
    },
  ],
];
for (const [label, verdict] of rules) {
  console.log(label);
  for (const half of HALVES) {
    const ids = new Set(split[half].map((s) => s.id));
    const s = score(items.filter((item) => ids.has(item.source)), verdict);
    console.log(
      `  ${half.padEnd(8)}  precision ${pct(s.precision)}  recall ${pct(s.recall)}  (${ids.size} sources, ${s.truePairs} true pairs)  groups mixing unrelated photos: ${s.mixedGroups} (framings of one scene: ${s.framingsGrouped})`,
    );
    console.log(`            recall by version: ${Object.entries(s.recallByTransform).map(([name, r]) => `${name} ${pct(r)}`).join(", ")}`);
  }
}

process.exit(0);
