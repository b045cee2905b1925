import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import path from "node:path";
import sharp from "sharp";
import { COCO_LABELS, VisionModels, type ImageAnalysis } from "../src/images/vision.ts";
import { withLoopWatch } from "./support/event-loop.ts";

// Every fetch() in this file's process is recorded: vision must never touch the network (the
// models come from node_modules and the models directory), so the list must stay empty.
const fetchCalls: string[] = [];
const realFetch = globalThis.fetch;
beforeAll(() => {
  globalThis.fetch = Object.assign(
    async (input: string | URL | Request) => {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      fetchCalls.push(url);
      throw new Error(`network access attempted: ${url}`);
    },
    { preconnect: () => {} },
  ) as typeof fetch;
});
afterAll(() => {
  globalThis.fetch = realFetch;
});

let modelsDir: string;
let vision: VisionModels;
beforeAll(async () => {
  modelsDir = await mkdtemp(path.join(tmpdir(), "mediabox-vision-"));
  vision = new VisionModels({ modelsDir });
});
afterAll(async () => {
  await vision.close();
  await rm(modelsDir, { recursive: true, force: true });
});

// ---------- synthetic scenes (deterministic) ----------

function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

const svg = (body: string, w = 640, h = 480) =>
  sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${body}</svg>`));

/** Beach: sky gradient, sun, sea with wave lines, sand. */
async function beach(): Promise<Buffer> {
  const r = rng(1);
  let waves = "";
  for (let i = 0; i < 40; i++) {
    const y = 250 + r() * 110;
    const x = r() * 600;
    waves += `<path d="M${x} ${y} q 15 -6 30 0 t 30 0" stroke="#e0f4ff" stroke-width="2" fill="none" opacity="0.7"/>`;
  }
  return svg(`
    <defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#1e5fb8"/><stop offset="1" stop-color="#bfe3ff"/></linearGradient></defs>
    <rect width="640" height="250" fill="url(#sky)"/>
    <circle cx="500" cy="90" r="45" fill="#fff3a0"/>
    <rect y="240" width="640" height="130" fill="#1d7fa8"/>${waves}
    <path d="M0 370 Q 320 330 640 370 L 640 480 L 0 480 Z" fill="#e8cf94"/>`)
    .jpeg({ quality: 92 })
    .toBuffer();
}

/** Night city: dark sky, building blocks with lit windows. */
async function nightCity(): Promise<Buffer> {
  const r = rng(2);
  let body = `<rect width="640" height="480" fill="#0b0c1a"/>`;
  for (let b = 0; b < 9; b++) {
    const x = b * 72 + r() * 10;
    const top = 120 + r() * 200;
    body += `<rect x="${x}" y="${top}" width="64" height="${480 - top}" fill="#22232e"/>`;
    for (let wy = top + 8; wy < 470; wy += 18) {
      for (let wx = x + 6; wx < x + 58; wx += 14) {
        if (r() < 0.45) body += `<rect x="${wx}" y="${wy}" width="8" height="10" fill="#ffd66b"/>`;
      }
    }
  }
  return svg(body).png().toBuffer();
}

/** Forest: tree trunks and foliage blobs on green. */
async function forest(): Promise<Buffer> {
  const r = rng(3);
  let body = `<rect width="640" height="480" fill="#2f5d2a"/>`;
  for (let i = 0; i < 60; i++) {
    body += `<circle cx="${r() * 640}" cy="${r() * 300}" r="${20 + r() * 50}" fill="${r() < 0.5 ? "#3f7a33" : "#1f4a1c"}"/>`;
  }
  for (let i = 0; i < 12; i++) {
    const x = r() * 620;
    body += `<rect x="${x}" y="${150 + r() * 80}" width="${10 + r() * 18}" height="400" fill="#5a3b1e"/>`;
  }
  return svg(body).webp().toBuffer();
}

/** The same picture as a smaller, re-encoded copy (what a re-upload usually looks like). */
async function degradedCopy(image: Buffer): Promise<Buffer> {
  const meta = await sharp(image).metadata();
  return sharp(image)
    .resize(Math.round(meta.width! / 2))
    .jpeg({ quality: 60 })
    .toBuffer();
}

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const norm = (a: Float32Array) => Math.sqrt(a.reduce((s, x) => s + x * x, 0));

// Real photos ship inside the @vladmandic/human package (its demo assets), so the detectors can be
// checked on real content with no download.
const humanAssets = path.join(path.dirname(createRequire(import.meta.url).resolve("@vladmandic/human")), "..", "assets");
async function photo(name: string, crop?: { left: number; top: number; width: number; height: number }): Promise<Buffer> {
  const bytes = await readFile(path.join(humanAssets, name));
  return crop ? sharp(bytes).extract(crop).jpeg({ quality: 95 }).toBuffer() : bytes;
}

// ---------- tests ----------

const cocoLabels = new Set(COCO_LABELS);
function expectWellFormed(r: ImageAnalysis) {
  expect(Number.isInteger(r.faces)).toBe(true);
  expect(r.faces).toBeGreaterThanOrEqual(0);
  expect(r.objects.length).toBeLessThanOrEqual(20);
  expect(new Set(r.objects.map((o) => o.label)).size).toBe(r.objects.length);
  for (const o of r.objects) {
    expect(cocoLabels.has(o.label)).toBe(true);
    expect(o.score).toBeGreaterThanOrEqual(0.4);
    expect(o.score).toBeLessThanOrEqual(1);
    const { x_min, y_min, x_max, y_max } = o.box;
    for (const v of [x_min, y_min, x_max, y_max]) {
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(1);
    }
    expect(x_max).toBeGreaterThan(x_min);
    expect(y_max).toBeGreaterThan(y_min);
  }
}


describe("embed", () => {
  test("vectors are L2-normalized and a degraded copy is nearer than unrelated scenes", async () => {
    const dim = await vision.embeddingDimension();
    expect(dim).toBe(480);
    const [a, b, c] = await Promise.all([beach(), nightCity(), forest()]);
    const aCopy = await degradedCopy(a);
    // Concurrent calls must be safe: issue them together.
    const [ea, eaCopy, eb, ec] = await Promise.all([a, aCopy, b, c].map((img) => vision.embed(img)));
    for (const e of [ea!, eaCopy!, eb!, ec!]) {
      expect(e.model).toBe("mobilenet_v2-nsfwjs");
      expect(e.vector).toBeInstanceOf(Float32Array);
      expect(e.vector.length).toBe(dim);
      expect(norm(e.vector)).toBeCloseTo(1, 4);
      expect(e.vector.every(Number.isFinite)).toBe(true);
    }
    const sameScene = cosine(ea!.vector, eaCopy!.vector);
    const toB = cosine(ea!.vector, eb!.vector);
    const toC = cosine(ea!.vector, ec!.vector);
    expect(sameScene).toBeGreaterThan(0.9);
    expect(sameScene).toBeGreaterThan(toB + 0.05);
    expect(sameScene).toBeGreaterThan(toC + 0.05);
    // Deterministic: the same bytes give the same vector.
    const again = await vision.embed(a);
    expect(cosine(again.vector, ea!.vector)).toBeCloseTo(1, 5);
  });

  test("EXIF orientation is applied before embedding", async () => {
    const a = await beach();
    // Stored rotated by 90 degrees with orientation 6 ("rotate 90 CW to display"): displays as a.
    const stored = await sharp(a).rotate(-90).withMetadata({ orientation: 6 }).jpeg({ quality: 92 }).toBuffer();
    const [ea, es, ewrong] = await Promise.all([vision.embed(a), vision.embed(stored), vision.embed(await sharp(a).rotate(-90).jpeg().toBuffer())]);
    expect(cosine(ea.vector, es.vector)).toBeGreaterThan(cosine(ea.vector, ewrong.vector));
    expect(cosine(ea.vector, es.vector)).toBeGreaterThan(0.95);
  });
});

describe("analyze", () => {
  test("finds the person and the one face in a real portrait photo", async () => {
    // A thumbnail from Human's sample sheet: one woman seated, filling most of the frame.
    const portrait = await photo("samples.jpg", { left: 165, top: 0, width: 150, height: 158 });
    const r = await vision.analyze(portrait);
    expectWellFormed(r);
    expect(r.faces).toBe(1);
    const person = r.objects.find((o) => o.label === "person");
    expect(person).toBeDefined();
    expect(person!.score).toBeGreaterThan(0.5);
    // The box covers the middle of the frame, where she sits.
    expect(person!.box.x_min).toBeLessThan(0.5);
    expect(person!.box.x_max).toBeGreaterThan(0.5);
    expect(person!.box.y_min).toBeLessThan(0.5);
  });

  test("counts several faces in a real group picture", async () => {
    const r = await vision.analyze(await photo("screenshot-facedetect.jpg"));
    expectWellFormed(r);
    expect(r.faces).toBeGreaterThanOrEqual(5);
    expect(r.objects.map((o) => o.label)).toContain("person");
  });

  test("synthetic scenes with no people give no faces and well-formed objects", async () => {
    const blank = await sharp({ create: { width: 320, height: 240, channels: 3, background: "#808080" } }).png().toBuffer();
    const withAlpha = await sharp({ create: { width: 200, height: 100, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
      .png()
      .toBuffer();
    const results = await Promise.all([beach(), nightCity(), forest(), Promise.resolve(blank), Promise.resolve(withAlpha)].map(async (p) => vision.analyze(await p)));
    for (const r of results) {
      expectWellFormed(r);
      expect(r.faces).toBe(0);
    }
    expect(results[3]!.objects).toEqual([]);
  });
});

describe("threads and decoded pixels", () => {
  test("the models run on threads of their own: the event loop keeps ticking through a group photo's tiled analysis", async () => {
    const group = await photo("screenshot-facedetect.jpg");
    const { result: [analysis, embedding], worstGapMs } = await withLoopWatch(() => Promise.all([vision.analyze(group), vision.embed(group)]));
    expect(analysis.faces).toBeGreaterThanOrEqual(5);
    expect(embedding.vector.length).toBe(480);
    // On the event loop the wasm inference blocked it for seconds (CenterNet, BlazeFace on up to
    // nine tiles, MobileNetV2); on the threads it only pauses for scheduling, decoding's hand-off
    // and GC, which a busy 2-core machine stretches to a few hundred ms.
    expect(worstGapMs).toBeLessThan(1_500);
  });

  test("pixels decoded once (the image pipeline's) give what the encoded image gives", async () => {
    const image = await beach();
    const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const pixels = { data, width: info.width, height: info.height, channels: 4 as const };
    const [fromBytes, fromPixels] = await Promise.all([vision.embed(image), vision.embed(pixels)]);
    expect(cosine(fromBytes.vector, fromPixels.vector)).toBeGreaterThan(0.99);
    const [seen, seenFromPixels] = await Promise.all([vision.analyze(image), vision.analyze(pixels)]);
    expect(seenFromPixels.faces).toBe(seen.faces);
    expect(seenFromPixels.objects.map((o) => o.label)).toEqual(seen.objects.map((o) => o.label));
  });
});

describe("errors", () => {
  test("a corrupt image rejects clearly and the instance keeps working", async () => {
    const jpeg = await beach();
    const corrupt = Buffer.concat([jpeg.subarray(0, 20), Buffer.alloc(2000, 0x5a)]);
    const garbage = Buffer.from("this is not an image at all");
    // Failures interleaved with good calls must not poison the shared inference queue.
    const [bad1, good1, bad2, good2, bad3] = await Promise.allSettled([
      vision.analyze(corrupt),
      vision.analyze(jpeg),
      vision.embed(garbage),
      vision.embed(jpeg),
      vision.embed(Buffer.alloc(0)),
    ]);
    for (const bad of [bad1, bad2, bad3]) {
      expect(bad!.status).toBe("rejected");
      const reason = (bad as PromiseRejectedResult).reason;
      expect(reason).toBeInstanceOf(Error);
      expect(reason.message).toMatch(/^could not decode image: /);
    }
    expect(good1!.status).toBe("fulfilled");
    expect(good2!.status).toBe("fulfilled");
    expectWellFormed(await vision.analyze(jpeg));
    expect((await vision.embed(jpeg)).vector.length).toBe(await vision.embeddingDimension());
  });

  test("a configured CLIP folder that does not exist is named in the error, with no network access", async () => {
    const v = new VisionModels({ modelsDir, imageEmbeddingModel: "clip-vit-base-patch32" });
    const folder = path.join(modelsDir, "clip-vit-base-patch32");
    await expect(v.embed(await beach())).rejects.toThrow(folder);
    await expect(v.embeddingDimension()).rejects.toThrow(folder);
    expect(fetchCalls).toEqual([]);
    await v.close();
    await expect(v.embed(await beach())).rejects.toThrow(/closed/);
  });
});

// ---------- CLIP path with a fixture model ----------
// No CLIP weights exist offline, so the transformers.js path runs on a tiny ONNX graph written
// here with the CLIP vision export's interface: pixel_values [batch, 3, H, W] -> image_embeds
// [batch, 8] (per-channel mean times a fixed 3x8 matrix). It proves loading from the models
// directory, preprocessing, the session run and output handling; not embedding quality.

/** Minimal protobuf writer: enough of the wire format for an ONNX ModelProto. */
const pb = {
  varint(n: number): number[] {
    const out: number[] = [];
    do {
      let b = n % 128;
      n = Math.floor(n / 128);
      if (n > 0) b |= 0x80;
      out.push(b);
    } while (n > 0);
    return out;
  },
  int(field: number, n: number): number[] {
    return [...pb.varint(field * 8), ...pb.varint(n)];
  },
  bytes(field: number, data: ArrayLike<number>): number[] {
    return [...pb.varint(field * 8 + 2), ...pb.varint(data.length), ...Array.from(data)];
  },
  str(field: number, s: string): number[] {
    return pb.bytes(field, new TextEncoder().encode(s));
  },
};

function onnxFixture(embedDim: number): Uint8Array {
  const FLOAT = 1;
  const dim = (d: number | string) => pb.bytes(1, typeof d === "number" ? pb.int(1, d) : pb.str(2, d));
  const valueInfo = (name: string, dims: (number | string)[]) =>
    [...pb.str(1, name), ...pb.bytes(2, pb.bytes(1, [...pb.int(1, FLOAT), ...pb.bytes(2, dims.flatMap(dim))]))];
  const weights = new Float32Array(3 * embedDim).map((_, i) => Math.sin(i * 1.7 + 0.3));
  const initializer = [...pb.int(1, 3), ...pb.int(1, embedDim), ...pb.int(2, FLOAT), ...pb.str(8, "proj"), ...pb.bytes(9, new Uint8Array(weights.buffer))];
  const reduceMean = [
    ...pb.str(1, "pixel_values"), ...pb.str(2, "pooled"), ...pb.str(3, "pool"), ...pb.str(4, "ReduceMean"),
    ...pb.bytes(5, [...pb.str(1, "axes"), ...pb.int(8, 2), ...pb.int(8, 3), ...pb.int(20, 7 /* INTS */)]),
    ...pb.bytes(5, [...pb.str(1, "keepdims"), ...pb.int(3, 0), ...pb.int(20, 2 /* INT */)]),
  ];
  const matMul = [...pb.str(1, "pooled"), ...pb.str(1, "proj"), ...pb.str(2, "image_embeds"), ...pb.str(3, "project"), ...pb.str(4, "MatMul")];
  const graph = [
    ...pb.bytes(1, reduceMean),
    ...pb.bytes(1, matMul),
    ...pb.str(2, "clip_vision_fixture"),
    ...pb.bytes(5, initializer),
    ...pb.bytes(11, valueInfo("pixel_values", ["batch_size", 3, "height", "width"])),
    ...pb.bytes(12, valueInfo("image_embeds", ["batch_size", embedDim])),
  ];
  return new Uint8Array([
    ...pb.int(1, 8), // ir_version
    ...pb.str(2, "mediabox-test"),
    ...pb.bytes(7, graph),
    ...pb.bytes(8, [...pb.str(1, ""), ...pb.int(2, 13)]), // opset 13: ReduceMean takes axes as an attribute
  ]);
}

async function writeClipFixture(dir: string, embedDim: number): Promise<void> {
  await mkdir(path.join(dir, "onnx"), { recursive: true });
  await writeFile(
    path.join(dir, "config.json"),
    JSON.stringify({ model_type: "clip_vision_model", architectures: ["CLIPVisionModelWithProjection"], projection_dim: embedDim }),
  );
  await writeFile(
    path.join(dir, "preprocessor_config.json"),
    JSON.stringify({
      image_processor_type: "CLIPImageProcessor",
      do_resize: true,
      size: { shortest_edge: 32 },
      resample: 3,
      do_center_crop: true,
      crop_size: { height: 32, width: 32 },
      do_rescale: true,
      rescale_factor: 1 / 255,
      do_normalize: true,
      image_mean: [0.48145466, 0.4578275, 0.40821073],
      image_std: [0.26862954, 0.26130258, 0.27577711],
      do_convert_rgb: true,
    }),
  );
  await writeFile(path.join(dir, "onnx", "vision_model_quantized.onnx"), onnxFixture(embedDim));
}

describe("CLIP-style model from the models directory", () => {
  test("is loaded offline through transformers.js and used for embed()", async () => {
    await writeClipFixture(path.join(modelsDir, "clip-fixture"), 8);
    const v = new VisionModels({ modelsDir, imageEmbeddingModel: "clip-fixture" });
    try {
      expect(await v.embeddingDimension()).toBe(8);
      const [a, b] = await Promise.all([beach(), forest()]);
      const [ea, ea2, eb] = await Promise.all([v.embed(a), v.embed(a), v.embed(b)]);
      expect(ea.model).toBe("clip:clip-fixture");
      expect(ea.vector.length).toBe(8);
      expect(norm(ea.vector)).toBeCloseTo(1, 4);
      expect(cosine(ea.vector, ea2.vector)).toBeCloseTo(1, 5);
      expect(cosine(ea.vector, eb.vector)).toBeLessThan(0.999);
      await expect(v.embed(Buffer.from("nope"))).rejects.toThrow(/could not decode image/);
      // analyze() does not depend on the embedding model.
      expectWellFormed(await v.analyze(a));
    } finally {
      await v.close();
    }
  });

  test("a folder without the ONNX weights names the missing file", async () => {
    const dir = path.join(modelsDir, "clip-no-weights");
    await writeClipFixture(dir, 8);
    await rm(path.join(dir, "onnx"), { recursive: true });
    const v = new VisionModels({ modelsDir, imageEmbeddingModel: "clip-no-weights" });
    await expect(v.embed(await beach())).rejects.toThrow(path.join(dir, "onnx", "vision_model_quantized.onnx"));
    await v.close();
  });
});

describe("network", () => {
  test("no fetch() happened in this file", () => {
    expect(fetchCalls).toEqual([]);
  });
});
