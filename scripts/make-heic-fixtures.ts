/**
 * Writes the HEIC test fixtures in test/fixtures/heic/. They are committed because no HEVC
 * encoder can be installed from npm, and sharp's libvips cannot write HEIC; regenerating them
 * needs `heif-enc` (Debian: apt-get install libheif-examples). The source images are the same
 * generated ones the other image tests use, so the tests know exactly what the pixels hold.
 *
 *   bun scripts/make-heic-fixtures.ts
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { HEIC_TEXT_LINES } from "../test/support/heic.ts";
import { textImage } from "../test/support/images.ts";

const out = join(import.meta.dir, "..", "test", "fixtures", "heic");
mkdirSync(out, { recursive: true });

/** Left half red, right half blue, 800×400. */
const halves = () =>
  sharp(
    Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="800" height="400">
      <rect width="50%" height="100%" fill="rgb(220,30,30)"/><rect x="50%" width="50%" height="100%" fill="rgb(30,30,220)"/></svg>`),
  )
    .png()
    .toBuffer();

const sources: Record<string, () => Promise<Buffer>> = {
  "halves.heic": halves,
  "text.heic": () => textImage(HEIC_TEXT_LINES),
};

for (const [name, make] of Object.entries(sources)) {
  const png = join(out, `${name}.png`);
  await Bun.write(png, await make());
  const enc = Bun.spawnSync(["heif-enc", "-q", "80", png, "-o", join(out, name)]);
  rmSync(png);
  if (enc.exitCode !== 0) throw new Error(`heif-enc failed for ${name}: ${enc.stderr.toString()}`);
  console.log(`wrote ${join(out, name)} (${Bun.file(join(out, name)).size} bytes)`);
}
