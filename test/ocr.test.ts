import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import sharp from "sharp";
import { OcrEngine, type BoundingBox, type OcrResult } from "../src/ocr/ocr.ts";

const WIDTH = 1200;
const HEIGHT = 500;
const FONT_SIZE = 48;
const LINES = [
  { text: "INVOICE 2024-0042", x: 60, baseline: 110 },
  { text: "Total due: 1,250.00 EUR", x: 60, baseline: 250 },
  { text: "Thank you for your business", x: 60, baseline: 390 },
];

function svg(lines: typeof LINES): Buffer {
  const texts = lines.map((l) => `<text x="${l.x}" y="${l.baseline}">${l.text}</text>`).join("");
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}">` +
      `<rect width="100%" height="100%" fill="white"/>` +
      `<g font-family="DejaVu Sans" font-size="${FONT_SIZE}" fill="black">${texts}</g></svg>`,
  );
}

const render = (lines: typeof LINES) => sharp(svg(lines)).png().toBuffer();

/** Where a line's ink really is: render it alone and let sharp trim the white around it. */
async function inkBox(line: (typeof LINES)[number]): Promise<BoundingBox> {
  const { info } = await sharp(svg([line])).trim({ background: "#ffffff" }).toBuffer({ resolveWithObject: true });
  const left = -(info.trimOffsetLeft ?? 0);
  const top = -(info.trimOffsetTop ?? 0);
  return { x_min: left / WIDTH, y_min: top / HEIGHT, x_max: (left + info.width) / WIDTH, y_max: (top + info.height) / HEIGHT };
}

const words = (s: string) => s.toLowerCase().split(/\s+/).filter(Boolean);

/** Fraction of the expected words OCR found; tolerant of a misread character, not of garbage. */
function wordRecall(expected: string, actual: string): number {
  const found = new Set(words(actual));
  const want = words(expected);
  return want.filter((w) => found.has(w)).length / want.length;
}

function expectInvoiceText(result: OcrResult) {
  for (const line of LINES) expect(wordRecall(line.text, result.text)).toBeGreaterThanOrEqual(0.75);
  const normalized = words(result.text).join(" ");
  expect(normalized).toContain("total due: 1,250.00 eur");
}

function expectBoxNear(actual: BoundingBox, expected: BoundingBox, tolerance: number) {
  for (const key of ["x_min", "y_min", "x_max", "y_max"] as const) {
    expect(Math.abs(actual[key] - expected[key])).toBeLessThanOrEqual(tolerance);
  }
}

const engine = new OcrEngine({ workers: 2 });
afterAll(async () => {
  await engine.close();
  await engine.close();
});

describe("OcrEngine", () => {
  test("reads each line with its text, position and confidence, in reading order", async () => {
    const result = await engine.recognize(await render(LINES));

    expect(result.width).toBe(WIDTH);
    expect(result.height).toBe(HEIGHT);
    expectInvoiceText(result);
    expect(result.text.split("\n").filter(Boolean)).toHaveLength(3);

    expect(result.regions).toHaveLength(LINES.length);
    for (const [i, line] of LINES.entries()) {
      const region = result.regions[i]!;
      expect(wordRecall(line.text, region.text)).toBeGreaterThanOrEqual(0.75);
      expect(region.text).toBe(region.text.trim());
      expect(region.confidence).toBeGreaterThanOrEqual(0.5);
      expect(region.confidence).toBeLessThanOrEqual(1);

      // From the SVG geometry alone: text starts at x, caps rise ~0.73 em above the baseline.
      const box = region.bounding_box;
      expect(Math.abs(box.x_min - line.x / WIDTH)).toBeLessThanOrEqual(0.02);
      expect(Math.abs(box.y_min - (line.baseline - 0.73 * FONT_SIZE) / HEIGHT)).toBeLessThanOrEqual(0.05);
      expect(Math.abs(box.y_max - line.baseline / HEIGHT)).toBeLessThanOrEqual(0.05);
      // And tight against the rendered ink on every edge.
      expectBoxNear(box, await inkBox(line), 0.02);
    }
  });

  test("applies EXIF orientation: a sideways JPEG tagged to display upright is read upright", async () => {
    const upright = await render(LINES);
    // Stored rotated 90° clockwise; orientation 8 tells viewers to turn it back counter-clockwise.
    const sideways = await sharp(upright).rotate(90).jpeg({ quality: 90 }).withMetadata({ orientation: 8 }).toBuffer();
    const stored = await sharp(sideways).metadata();
    expect([stored.width, stored.height, stored.orientation]).toEqual([HEIGHT, WIDTH, 8]);

    const result = await engine.recognize(sideways);
    expect([result.width, result.height]).toEqual([WIDTH, HEIGHT]);
    expectInvoiceText(result);
    expect(result.regions).toHaveLength(LINES.length);
    for (const [i, line] of LINES.entries()) expectBoxNear(result.regions[i]!.bounding_box, await inkBox(line), 0.02);
  });

  test("a blank image has no text", async () => {
    const blank = await sharp({ create: { width: 800, height: 600, channels: 3, background: "#ffffff" } }).png().toBuffer();
    const result = await engine.recognize(blank);
    expect(result.text).toBe("");
    expect(result.regions).toEqual([]);
  });

  test("transparent text image is flattened onto white and small images are upscaled", async () => {
    // The transparent pixels are black (0,0,0,0): dropping alpha instead of compositing onto white
    // would leave black text on black.
    const small = await sharp(Buffer.from(svg(LINES).toString().replace(`<rect width="100%" height="100%" fill="white"/>`, "")))
      .resize(600)
      .png()
      .toBuffer();
    const result = await engine.recognize(small);
    expect([result.width, result.height]).toEqual([1000, Math.round((HEIGHT * 1000) / WIDTH)]);
    expectInvoiceText(result);
  });

  test("an undecodable image rejects clearly and the engine keeps working", async () => {
    const good = await render(LINES);
    const garbage = Buffer.from(crypto.getRandomValues(new Uint8Array(4096)));
    const truncated = good.subarray(0, Math.floor(good.length / 2));

    for (const bad of [garbage, truncated]) {
      await expect(engine.recognize(bad)).rejects.toThrow(/could not be decoded \(.+\)/);
    }
    expectInvoiceText(await engine.recognize(good));
  });

  test("concurrent calls both succeed", async () => {
    const image = await render(LINES);
    const other = await render([{ text: "Concurrent requests welcome", x: 100, baseline: 200 }]);
    const [a, b] = await Promise.all([engine.recognize(image), engine.recognize(other)]);
    expectInvoiceText(a);
    expect(wordRecall("Concurrent requests welcome", b.text)).toBeGreaterThanOrEqual(0.66);
    expect(b.regions).toHaveLength(1);
  });

  test("never writes the language model into the working directory", () => {
    expect(existsSync(path.join(process.cwd(), "eng.traineddata"))).toBe(false);
  });

  test("an engine closed before use closes cleanly and refuses further work", async () => {
    const idle = new OcrEngine();
    await idle.close();
    await expect(idle.recognize(await render(LINES))).rejects.toThrow(/closed/);
  });
});

describe("OCR languages beyond the bundled English", () => {
  const GERMAN = [
    { text: "Prüfbericht für Größe", x: 60, baseline: 110 },
    { text: "Übergabe an Jürgen Maßmann", x: 60, baseline: 250 },
  ];
  const deuPackage = path.join(path.dirname(require.resolve("@tesseract.js-data/deu/package.json")), "4.0.0_best_int", "deu.traineddata.gz");

  test("a language file in <models>/tesseract/ is read with the bundled English; missing ones are named, and found once added", async () => {
    const modelsDir = mkdtempSync(path.join(tmpdir(), "mediabox-ocr-models-"));
    const german = new OcrEngine({ languages: ["eng", "deu"], modelsDir });
    const englishOnly = new OcrEngine();
    try {
      const image = await render(GERMAN);
      await expect(german.recognize(image)).rejects.toThrow(`OCR model is missing: language "deu" needs ${path.join(modelsDir, "tesseract")}/deu.traineddata (or .gz)`);
      mkdirSync(path.join(modelsDir, "tesseract"));
      copyFileSync(deuPackage, path.join(modelsDir, "tesseract", "deu.traineddata.gz"));
      const read = await german.recognize(image);
      expect(german.modelDescription).toBe("tesseract.js eng+deu");
      for (const word of ["Größe", "Übergabe", "Jürgen", "Maßmann"]) expect(read.text).toContain(word);
      // English alone has no umlauts or ß in its alphabet: the same image reads differently.
      const plain = await englishOnly.recognize(image);
      expect(["Größe", "Übergabe", "Maßmann"].filter((word) => plain.text.includes(word))).toEqual([]);
    } finally {
      await Promise.all([german.close(), englishOnly.close()]);
      rmSync(modelsDir, { recursive: true, force: true });
    }
  }, 120_000);
});
