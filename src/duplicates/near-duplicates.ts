/**
 * When two images are near-duplicates (the same shot resized, re-encoded, cropped a little,
 * exposed differently, or the next frame of a burst), how they form groups, and which one of a
 * group is the best to keep. Thresholds are set on the tuning half of bench:duplicates and
 * checked on its held-out half (docs/photos.md).
 */
import { cropTolerantDistance, shiftedThumbCorrelation, type Fingerprint } from "./fingerprint.ts";

export interface NearDuplicateRule {
  /** Crop-tolerant hash distances this small are the same picture on their own. */
  sameHash: number;
  /** Up to this distance, the same picture when the thumbnails correlate at least `correlation`, shifted by up to a pixel. */
  candidateHash: number;
  correlation: number;
}

/**
 * Set on bench:duplicates' tuning half and kept because the held-out half improved as much, with
 * no unrelated pair grouped on either half (docs/photos.md). The best look-alike pair of
 * different pages there correlates 0.895. The image embedding (MobileNetV2 features) was tried
 * as a further test and added nothing: where the shifted thumbnails fall short, it puts
 * unrelated look-alike pages at cosine 0.99 as well.
 */
export const NEAR_DUPLICATE: NearDuplicateRule = { sameHash: 6, candidateHash: 24, correlation: 0.93 };

/** Whether a pair is near-duplicate: `hamming` is their crop-tolerant hash distance, `correlation` their thumbnails' shift-tolerant correlation (null when one has none). */
export function isNearDuplicate(hamming: number, correlation: number | null, rule: NearDuplicateRule = NEAR_DUPLICATE): boolean {
  if (hamming <= rule.sameHash) return true;
  return hamming <= rule.candidateHash && correlation !== null && correlation >= rule.correlation;
}

/** The pair's verdict from the two fingerprints (what the appliance and the bench both call). */
export function nearDuplicatePair(a: Fingerprint, b: Fingerprint, rule: NearDuplicateRule = NEAR_DUPLICATE): { hamming: number; correlation: number | null; duplicate: boolean } {
  const hamming = cropTolerantDistance(a, b);
  const correlation = hamming > rule.sameHash && hamming <= rule.candidateHash ? shiftedThumbCorrelation(a.thumb, b.thumb) : null;
  return { hamming, correlation, duplicate: isNearDuplicate(hamming, correlation, rule) };
}

/** Connected groups (two or more members) of the pairs, members and groups in a stable order. */
export function groupsOf(pairs: Iterable<[string, string]>): string[][] {
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let root = x;
    while (parent.get(root)! !== root) root = parent.get(root)!;
    // Path compression keeps later finds short.
    while (parent.get(x)! !== root) {
      const next = parent.get(x)!;
      parent.set(x, root);
      x = next;
    }
    return root;
  };
  for (const [a, b] of pairs) {
    if (!parent.has(a)) parent.set(a, a);
    if (!parent.has(b)) parent.set(b, b);
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent.set(ra < rb ? rb : ra, ra < rb ? ra : rb);
  }
  const groups = new Map<string, string[]>();
  for (const id of parent.keys()) {
    const root = find(id);
    const group = groups.get(root);
    if (group) group.push(id);
    else groups.set(root, [id]);
  }
  return [...groups.values()].filter((g) => g.length > 1).map((g) => g.sort());
}

export interface Candidate {
  id: string;
  /** Width × height of the original. */
  pixels: number;
  sharpness: number;
  sizeBytes: number;
  createdAt: string;
}

/** Within this share of the largest, images count as the same size. */
const SAME_SIZE = 0.98;
/**
 * Copies saved with under this share of the best-kept copy's bytes per pixel are recompressed:
 * JPEG's blocking raises the Laplacian's variance, so they would otherwise pass for the sharpest.
 */
const RECOMPRESSED = 0.7;

/**
 * The one to keep: the largest (most pixels); among those of about the largest size and not
 * recompressed harder than the others, the sharpest; then the largest file; then the oldest upload.
 */
export function chooseBest(members: Candidate[]): Candidate {
  const largest = Math.max(...members.map((m) => m.pixels));
  const big = members.filter((m) => m.pixels >= largest * SAME_SIZE);
  const density = (m: Candidate) => m.sizeBytes / Math.max(1, m.pixels);
  const densest = Math.max(...big.map(density));
  const kept = big.filter((m) => density(m) >= densest * RECOMPRESSED);
  return kept.sort((a, b) => b.sharpness - a.sharpness || b.sizeBytes - a.sizeBytes || a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))[0]!;
}
