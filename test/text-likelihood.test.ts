/**
 * The text gate before OCR (ocr/text-likelihood.ts, images/text-gate.ts): rows of character-like
 * marks, dark on light or light on dark, pass; smooth photos, plain colours and shapes do not.
 */
import { describe, expect, test } from "bun:test";
import sharp from "sharp";
import { textLikelihoodOf } from "../src/images/text-gate.ts";
import { renderImage } from "../src/images/variants.ts";
import { photo, solid, textImage } from "./support/images.ts";

const gate = async (bytes: Buffer) => textLikelihoodOf((await renderImage(bytes)).pixels);

describe("text gate", () => {
  test("black text on white passes, one row per line", async () => {
    const result = await gate(await textImage(["Delivery note 1042", "Pallet 3 of 7, fragile", "Site B, bay 12"]));
    expect(result.lines).toBeGreaterThanOrEqual(3);
  });

  test("light text on a dark sign passes, and so does a single line in a large photo", async () => {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="2400" height="1600">
      <rect width="100%" height="100%" fill="rgb(90,120,160)"/>
      <rect x="700" y="600" width="1000" height="260" fill="rgb(30,30,40)"/>
      <text x="760" y="770" font-family="DejaVu Sans" font-size="110" fill="rgb(240,230,200)">FRESH BREAD</text></svg>`;
    expect((await gate(await sharp(Buffer.from(svg)).jpeg({ quality: 85 }).toBuffer())).lines).toBeGreaterThan(0);
  });

  test("photos of shapes and gradients, and plain colours, hold no rows of marks", async () => {
    for (let seed = 0; seed < 8; seed++) expect((await gate(await photo(seed, 1600, 1200))).lines).toBe(0);
    expect((await gate(await solid(800, 600, [200, 40, 40]))).lines).toBe(0);
  });
});
