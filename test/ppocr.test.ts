import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { onnx } from "onnx-proto";
import { boxesFromProbabilityMap, convexHull, mergeLineOverlaps, minAreaRect } from "../src/ocr/ppocr/db-boxes.ts";
import { ctcDecode, wordsOf } from "../src/ocr/ppocr/ctc.ts";
import { onnxMetadata } from "../src/ocr/ppocr/onnx-metadata.ts";
import { OcrEngine } from "../src/ocr/ocr.ts";
import { OcrRouter } from "../src/ocr/ocr-router.ts";
import { PpOcrEngine, toResult } from "../src/ocr/ppocr/ppocr-engine.ts";
import { barsImage, buildFixturePpOcrModel } from "./support/ppocr-model.ts";
import { tempDir } from "./support/temp-dir.ts";

/** A probability map with the given rectangles (x0,y0,x1,y1 inclusive) at probability p. */
function mapWith(width: number, height: number, rects: { x0: number; y0: number; x1: number; y1: number; p: number }[]): Float32Array {
  const map = new Float32Array(width * height);
  for (const r of rects) for (let y = r.y0; y <= r.y1; y++) for (let x = r.x0; x <= r.x1; x++) map[y * width + x] = r.p;
  return map;
}

describe("DB box extraction", () => {
  test("each blob becomes its core rectangle grown by area x 1.6 / perimeter on every side, scaled to the image", () => {
    // A 41x11 core (pixel centres 10..50, 20..30; the 2x2 dilation adds a row and column), and a second line below.
    const map = mapWith(100, 80, [
      { x0: 10, y0: 20, x1: 49, y1: 29, p: 0.9 },
      { x0: 10, y0: 50, x1: 69, y1: 59, p: 0.8 },
    ]);
    const boxes = boxesFromProbabilityMap(map, 100, 80, 200, 160);
    expect(boxes).toHaveLength(2);
    const first = boxes.find((b) => b.quad[0].y < 60)!;
    // Core: 40 wide (10..50), 10 tall (20..30): grown by 40*10*1.6/(2*50) = 6.4 on each side.
    const [tl, tr, br, bl] = first.quad;
    expect(tl.x).toBeCloseTo(2 * (10 - 6.4), -0.5);
    expect(tl.y).toBeCloseTo(2 * (20 - 6.4), -0.5);
    expect(br.x).toBeCloseTo(2 * (50 + 6.4), -0.5);
    expect(br.y).toBeCloseTo(2 * (30 + 6.4), -0.5);
    expect(tr.y).toBe(tl.y);
    expect(bl.x).toBe(tl.x);
    // The mean is over the dilated blob, whose added row and column are 0: 40x10 of 41x11 pixels at 0.9.
    expect(first.score).toBeCloseTo((0.9 * 400) / 451, 2);
  });

  test("a blob the detector is unsure of (mean under 0.5) and a speck under 3 px are dropped", () => {
    const map = mapWith(100, 60, [
      { x0: 10, y0: 10, x1: 60, y1: 20, p: 0.4 },
      { x0: 80, y0: 40, x1: 81, y1: 41, p: 0.99 },
    ]);
    expect(boxesFromProbabilityMap(map, 100, 60, 100, 60)).toEqual([]);
  });

  test("a slanted line gets a rotated box along its slant", () => {
    const width = 200, height = 120;
    const map = new Float32Array(width * height);
    const angle = (15 * Math.PI) / 180;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const u = (x - 100) * Math.cos(angle) + (y - 60) * Math.sin(angle);
        const v = -(x - 100) * Math.sin(angle) + (y - 60) * Math.cos(angle);
        if (Math.abs(u) <= 60 && Math.abs(v) <= 8) map[y * width + x] = 0.9;
      }
    }
    const [box] = boxesFromProbabilityMap(map, width, height, width, height);
    const [tl, tr] = box!.quad;
    expect((Math.atan2(tr.y - tl.y, tr.x - tl.x) * 180) / Math.PI).toBeCloseTo(15, 0);
  });

  test("overlapping boxes of one line merge; boxes of neighbouring lines that overlap by half do not", () => {
    const box = (x0: number, y0: number, x1: number, y1: number) => ({
      quad: [{ x: x0, y: y0 }, { x: x1, y: y0 }, { x: x1, y: y1 }, { x: x0, y: y1 }] as [{ x: number; y: number }, { x: number; y: number }, { x: number; y: number }, { x: number; y: number }],
      score: 0.9,
    });
    const merged = mergeLineOverlaps([box(120, 12, 300, 50), box(10, 10, 130, 50), box(10, 30, 300, 70)]);
    expect(merged.map((b) => [b.quad[0], b.quad[2]])).toEqual([
      [{ x: 10, y: 10 }, { x: 300, y: 50 }],
      [{ x: 10, y: 30 }, { x: 300, y: 70 }],
    ]);
  });

  test("minimum-area rectangle of a rotated square's hull is the square", () => {
    const square = [
      { x: 0, y: 5 },
      { x: 5, y: 0 },
      { x: 10, y: 5 },
      { x: 5, y: 10 },
      { x: 5, y: 5 },
    ];
    const hull = convexHull(square);
    expect(hull).toHaveLength(4);
    const rect = minAreaRect(hull);
    expect(rect.width * rect.height).toBeCloseTo(50, 6);
    expect(rect.cx).toBeCloseTo(5, 9);
    expect(rect.cy).toBeCloseTo(5, 9);
  });
});

describe("CTC decoding", () => {
  const alphabet = ["", "a", "b", " "];
  /** One-hot-ish probabilities for a class per step. */
  function steps(classes: number[]): Float32Array {
    const out = new Float32Array(classes.length * alphabet.length).fill(0.02);
    classes.forEach((c, t) => (out[t * alphabet.length + c] = 0.94));
    return out;
  }

  test("repeats collapse, blanks separate a doubled letter, and spaces split words placed along the line", () => {
    // a a _ a b b _ ␠ _ b _ _ (12 steps)
    const line = ctcDecode(steps([1, 1, 0, 1, 2, 2, 0, 3, 0, 2, 0, 0]), 12, alphabet.length, alphabet);
    expect(line.text).toBe("aab b");
    expect(line.confidence).toBeCloseTo(0.94, 5);
    expect(line.chars.map((c) => [c.char, c.first, c.last])).toEqual([["a", 0, 1], ["a", 3, 3], ["b", 4, 5], [" ", 7, 7], ["b", 9, 9]]);
    const words = wordsOf(line);
    expect(words.map((w) => w.text)).toEqual(["aab", "b"]);
    expect(words[0]!.start).toBe(0);
    expect(words[0]!.end).toBeCloseTo(6.5 / 12, 6);
    expect(words[1]!.start).toBeCloseTo(8.5 / 12, 6);
    // The line filled half the model's input: positions are fractions of the line, not the input.
    expect(wordsOf(line, 0.5)[1]!.start).toBeCloseTo(1, 6);
  });

  test("the second item of a batch is read from its own rows; nothing read is confidence 0", () => {
    const batch = new Float32Array([...steps([1, 0, 2]), ...steps([0, 0, 0])]);
    expect(ctcDecode(batch, 3, alphabet.length, alphabet, 0).text).toBe("ab");
    const blank = ctcDecode(batch, 3, alphabet.length, alphabet, 1);
    expect([blank.text, blank.confidence, blank.chars]).toEqual(["", 0, []]);
  });
});

describe("ONNX metadata", () => {
  test("reads metadata_props past a large graph, and a model without any has none", () => {
    const big = new Float32Array(300_000).fill(1.5);
    const graph = {
      name: "g",
      node: [{ opType: "Identity", input: ["w"], output: ["y"] }],
      initializer: [{ name: "w", dataType: onnx.TensorProto.DataType.FLOAT, dims: [big.length], rawData: new Uint8Array(big.buffer) }],
      output: [{ name: "y" }],
    };
    const encode = (metadataProps: { key: string; value: string }[]) =>
      onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ version: 13 }], graph, metadataProps })).finish();
    const meta = onnxMetadata(encode([{ key: "character", value: "a\nb\nä\n€" }, { key: "other", value: "" }]));
    expect(meta.get("character")).toBe("a\nb\nä\n€");
    expect(meta.get("other")).toBe("");
    expect(onnxMetadata(encode([])).size).toBe(0);
    expect(() => onnxMetadata(encode([{ key: "k", value: "v" }]).subarray(0, 1000))).toThrow(/truncated/);
  });
});

describe("PP-OCR results", () => {
  test("lines on one row are one region, left to right, with their words; far rows start a paragraph; symbol-only rows go", () => {
    const quad = (x0: number, y0: number, x1: number, y1: number) =>
      [{ x: x0, y: y0 }, { x: x1, y: y0 }, { x: x1, y: y1 }, { x: x0, y: y1 }] as [{ x: number; y: number }, { x: number; y: number }, { x: number; y: number }, { x: number; y: number }];
    const line = (text: string, x0: number, y0: number, x1: number, y1: number) => ({
      text,
      confidence: 0.9,
      quad: quad(x0, y0, x1, y1),
      words: text.split(" ").map((w, i, all) => ({ text: w, quad: quad(x0 + ((x1 - x0) * i) / all.length, y0, x0 + ((x1 - x0) * (i + 1)) / all.length, y1) })),
    });
    // Padded 10 px above, as a wide image is: boxes come back in the unpadded image's coordinates.
    const result = toResult([line("12.50", 300, 22, 380, 40), line("TOTAL DUE", 10, 20, 150, 40), line("Thanks", 10, 45, 100, 62), line("Come again", 10, 120, 150, 140), line("■ -", 200, 170, 240, 190)], 400, 200, 10);
    expect(result.text).toBe("TOTAL DUE 12.50\nThanks\n\nCome again");
    expect(result.regions.map((r) => r.text)).toEqual(["TOTAL DUE 12.50", "Thanks", "Come again"]);
    expect(result.regions[0]!.bounding_box).toEqual({ x_min: 0.025, y_min: 0.05, x_max: 0.95, y_max: 0.15 });
    expect(result.regions[0]!.words!.map((w) => w.text)).toEqual(["TOTAL", "DUE", "12.50"]);
    expect(result.regions[0]!.words![2]!.bounding_box.x_min).toBe(0.75);
  });
});

describe("PP-OCR through onnxruntime (fixture models)", () => {
  const modelsDir = tempDir("mediabox-ppocr-");
  const folder = buildFixturePpOcrModel(modelsDir);
  const engine = new PpOcrEngine({ folder });
  afterAll(() => engine.close());

  test("the fixture's alphabet is in rec.onnx's metadata", () => {
    expect(onnxMetadata(readFileSync(path.join(folder, "rec.onnx"))).get("character")).toBe("I");
  });

  test("detects each bar, reads it, and places it: two bars on a row are one region, a bar below another", async () => {
    const result = await engine.recognize(await barsImage(800, 600, [[100, 100, 60, 80], [400, 100, 60, 80], [100, 500, 60, 80]]));
    expect([result.width, result.height]).toEqual([800, 600]);
    expect(result.text).toBe("I I\n\nI");
    expect(result.regions).toHaveLength(2);
    const [row, below] = result.regions;
    expect(row!.words!.map((w) => w.text)).toEqual(["I", "I"]);
    // The bars span x 100..160 and 400..460, y 100..180 of 800x600. The detector's boxes are grown
    // well past them; the reported boxes hug the ink found in the line's strip (a pixel or two).
    const near = (actual: number, expected: number, size: number) => expect(Math.abs(actual - expected / size)).toBeLessThan(3 / size);
    const box = row!.bounding_box;
    near(box.x_min, 100, 800);
    near(box.x_max, 460, 800);
    near(box.y_min, 100, 600);
    near(box.y_max, 180, 600);
    const [first, second] = row!.words!.map((w) => w.bounding_box);
    near(first!.x_min, 100, 800);
    near(first!.x_max, 160, 800);
    near(second!.x_min, 400, 800);
    near(second!.x_max, 460, 800);
    expect(below!.bounding_box.y_min).toBeGreaterThan(350 / 600);
    // Kept lines read at >= 0.5 (RapidOCR's text score); steps straddling a bar's edge are only partly dark.
    expect(row!.confidence).toBeGreaterThanOrEqual(0.5);
    expect(row!.confidence).toBeLessThanOrEqual(1);
  });

  test("a blank picture has no text; an undecodable one is refused and the engine keeps working", async () => {
    expect(await engine.recognize(await barsImage(300, 200, []))).toEqual({ text: "", regions: [], width: 300, height: 200 });
    await expect(engine.recognize(Buffer.from("not an image"))).rejects.toThrow(/could not be decoded/);
    expect((await engine.recognize(await barsImage(300, 200, [[50, 50, 40, 60]]))).text).toBe("I");
  });

  test("a folder without the models fails naming what is missing", async () => {
    const missing = new PpOcrEngine({ folder: path.join(modelsDir, "absent") });
    try {
      await expect(missing.recognize(await barsImage(300, 200, [[50, 50, 40, 60]]))).rejects.toThrow(/has no det\.onnx/);
    } finally {
      missing.close();
    }
  });
});

describe("OcrRouter", () => {
  test("tesseract reads while the PP-OCR folder is absent; once installed PP-OCR reads images and video frames, tesseract scans", async () => {
    const modelsDir = tempDir("mediabox-ocr-router-");
    const checked: string[] = [];
    const router = new OcrRouter(new OcrEngine(), { modelsDir, check: async (name) => void checked.push(name) });
    const page = await sharp(
      Buffer.from(
        `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="200"><rect width="100%" height="100%" fill="white"/>` +
          `<text x="40" y="120" font-family="DejaVu Sans" font-size="56" fill="black">Invoice 2024 total</text></svg>`,
      ),
    )
      .png()
      .toBuffer();
    try {
      expect(router.modelFor("image")).toBe("tesseract.js eng");
      expect(router.detectsTextFirst("image")).toBe(false); // the image pipeline's text gate decides
      expect((await router.recognize(page, { input: "image" })).text.toLowerCase()).toContain("invoice 2024 total");
      expect(checked).toEqual([]);

      buildFixturePpOcrModel(modelsDir);
      expect(router.modelFor("image")).toBe("PP-OCR (ppocr)");
      expect(router.modelFor("video-frame")).toBe("PP-OCR (ppocr)");
      expect(router.modelFor("scan")).toBe("tesseract.js eng");
      expect([router.detectsTextFirst("image"), router.detectsTextFirst("scan")]).toEqual([true, false]);
      // The fixture models read each black bar as "I": these were read by PP-OCR.
      const bars = await barsImage(600, 200, [[100, 60, 50, 80], [300, 60, 50, 80]]);
      expect((await router.recognize(bars, { input: "image" })).text).toBe("I I");
      expect((await router.recognize(bars, { input: "video-frame" })).text).toBe("I I");
      expect((await router.recognize(page, { input: "scan", segmentation: "page" })).text.toLowerCase()).toContain("invoice 2024 total");
      expect(checked).toEqual(["ppocr", "ppocr"]);
    } finally {
      await router.close();
    }
  });

  test("a PP-OCR folder the manifest refuses fails the read with the reason; other languages stay with tesseract", async () => {
    const modelsDir = tempDir("mediabox-ocr-router-");
    buildFixturePpOcrModel(modelsDir);
    const refused = new OcrRouter(new OcrEngine(), { modelsDir, check: async (name) => { throw new Error(`model folder "${name}" is refused: rec.onnx is missing`); } });
    const german = new OcrRouter(new OcrEngine({ languages: ["deu"], modelsDir }), { modelsDir });
    try {
      const image = await sharp({ create: { width: 200, height: 100, channels: 3, background: "#ffffff" } }).png().toBuffer();
      await expect(refused.recognize(image)).rejects.toThrow(/"ppocr" is refused: rec.onnx is missing/);
      expect(german.modelFor("image")).toBe("tesseract.js deu");
    } finally {
      await Promise.all([refused.close(), german.close()]);
    }
  });
});
