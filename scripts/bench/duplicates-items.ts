/**
 * bench:duplicates' items: every version of every source decoded as the pipeline decodes it (the
 * pixels of the large_1024 variant), fingerprinted and embedded from them as the pipeline does. With
 * MEDIABOX_BENCH_CACHE=<file> the items are written there, and read back on the next run with
 * the same sources (to compare rules without rendering 1,400 images again).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { fingerprint, type Fingerprint } from "../../src/duplicates/fingerprint.ts";
import { VARIANT_SIZES } from "../../src/files/variants.ts";
import { VisionModels } from "../../src/images/vision.ts";
import { TRANSFORMS, type Source } from "./duplicates-set.ts";

export interface Item {
  id: string;
  source: string;
  transform: string;
  fingerprint: Fingerprint;
  /** The pipeline's image embedding (MobileNetV2 features), unit length. */
  embedding: Float32Array;
}

interface CachedItem extends Omit<Item, "fingerprint" | "embedding"> {
  fingerprint: Omit<Fingerprint, "thumb"> & { thumb: number[] };
  embedding: number[];
}

export async function benchItems(sources: Source[]): Promise<Item[]> {
  const cache = process.env.MEDIABOX_BENCH_CACHE;
  const key = sources.map((s) => s.id).join("\n");
  if (cache && existsSync(cache)) {
    const cached = JSON.parse(readFileSync(cache, "utf8")) as { key: string; items: CachedItem[] };
    if (cached.key === key) {
      console.log(`${cached.items.length} images read from ${cache}\n`);
      return cached.items.map((i) => ({ ...i, fingerprint: { ...i.fingerprint, thumb: Uint8Array.from(i.fingerprint.thumb) }, embedding: Float32Array.from(i.embedding) }));
    }
  }
  const modelsDir = mkdtempSync(join(tmpdir(), "mediabox-bench-duplicates-"));
  const vision = new VisionModels({ modelsDir });
  const started = performance.now();
  const items: Item[] = [];
  try {
    for (const source of sources) {
      const base = await source.image();
      const versions = Object.entries(TRANSFORMS).map(([name, transform]) => [name, () => transform(base)] as const);
      for (const [name, image] of Object.entries(source.extra ?? {})) versions.push([name, image]);
      for (const [name, version] of versions) {
        // The pixels renderImage decodes once for every variant and later stage (upright RGBA, at most 1024 px).
        const { data, info } = await sharp(await version())
          .rotate()
          .resize(VARIANT_SIZES.large_1024, VARIANT_SIZES.large_1024, { fit: "inside", withoutEnlargement: true })
          .toColourspace("srgb")
          .ensureAlpha()
          .raw()
          .toBuffer({ resolveWithObject: true });
        const pixels = { data, width: info.width, height: info.height, channels: 4 as const };
        const [print, embedding] = await Promise.all([fingerprint(pixels), vision.embed(pixels)]);
        items.push({ id: `${source.id}/${name}`, source: source.id, transform: name, fingerprint: print, embedding: embedding.vector });
      }
      if (items.length % 140 < 7) console.log(`  ${items.length} images…`);
    }
  } finally {
    await vision.close();
    rmSync(modelsDir, { recursive: true, force: true });
  }
  console.log(`${items.length} images rendered, fingerprinted and embedded in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  if (cache) {
    const plain = items.map((i) => ({ ...i, fingerprint: { ...i.fingerprint, thumb: [...i.fingerprint.thumb] }, embedding: [...i.embedding] }));
    writeFileSync(cache, JSON.stringify({ key, items: plain }));
  }
  return items;
}
