/**
 * The image pipeline through real HTTP: variants (sizes, format, orientation, no upscaling),
 * blurhash, EXIF capture time, OCR text and boxes, descriptions and tags (auto_describe, the
 * monthly quota), similar images, custom-schema and compliance extractions, reviews, markdown,
 * trigger-variants, /images/analyze (sync and async), corrupt input and the purge of derived data.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decode as decodeBlurHash } from "blurhash";
import sharp from "sharp";
import { ManualClock } from "../src/clock.ts";
import { purgeDeletedFiles } from "../src/library/file-edits.ts";
import { recordUsage } from "../src/usage/usage.ts";
import { pdf } from "./support/fixtures.ts";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadConfig } from "../src/config.ts";
import { buildFixtureClipModel } from "./support/clip-model.ts";
import { barsImage, buildFixturePpOcrModel } from "./support/ppocr-model.ts";
import { HEIC_TEXT_LINES, heicHalves, heicText } from "./support/heic.ts";
import { corruptPng, exifRotatedJpeg, photo, solid, textImage } from "./support/images.ts";
import { jobDone, processed, waitFor } from "./support/polling.ts";
import { ApiClient, startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { uploadFile } from "./support/uploads.ts";
import { perTest } from "./support/per-test.ts";

let server: TestServer;
let owner: Tenant;
const clock = new ManualClock(Date.now());

beforeAll(async () => {
  server = await startTestServer({ clock });
  owner = await server.tenant({ tier: "CUSTOM" });
});
afterAll(() => server.close());

const { defer, startServer: startExtraServer, dir: scratchDir } = perTest();

const upload = (tenant: Tenant, bytes: Uint8Array, filename: string, fields: Record<string, string> = {}) => uploadFile(tenant.api, bytes, filename, fields);

async function fetchRedirect(tenant: Tenant, path: string) {
  const res = await tenant.api.get(path);
  expect(res.status, JSON.stringify(res.body)).toBe(302);
  const location = res.headers.get("location")!;
  const bytes = Buffer.from(await (await fetch(location)).arrayBuffer());
  return { location, bytes };
}

describe("variants, blurhash, EXIF", () => {
  test("a photo gets four WebP variants by longest side, signed URLs and its dimensions", async () => {
    const id = await upload(owner, await photo(1, 2000, 1500), "sunset.jpg");
    const file = await processed(owner, id);
    expect(file.variant_status).toBe("completed");
    expect(file.variant_count).toBe(4);
    expect(file.dimensions).toEqual({ width: 2000, height: 1500 });
    expect(file.format).toBe("jpeg");
    for (const url of [file.thumbnail_url, file.medium_url, file.full_url, file.original_url]) expect(url).toStartWith("http");

    const expected = { tiny_64: [64, 48], small_256: [256, 192], medium_750: [750, 563], large_1024: [1024, 768] } as const;
    for (const [type, [w, h]] of Object.entries(expected)) {
      const { bytes } = await fetchRedirect(owner, `/files/${id}/variant/${type}`);
      const meta = await sharp(bytes).metadata();
      expect([type, meta.format, meta.width, meta.height]).toEqual([type, "webp", w, h]);
    }
    const original = await fetchRedirect(owner, `/files/${id}/variant/original`);
    expect((await sharp(original.bytes).metadata()).width).toBe(2000);
    const thumb = Buffer.from(await (await fetch(file.thumbnail_url)).arrayBuffer());
    expect((await sharp(thumb).metadata()).width).toBe(256);
  });

  test("webp, gif, tiff and avif inputs get variants and their format", async () => {
    const base = await photo(31, 900, 600, "png");
    const inputs = {
      webp: await sharp(base).webp().toBuffer(),
      gif: await sharp(base).gif().toBuffer(),
      tiff: await sharp(base).tiff().toBuffer(),
      avif: await sharp(base).avif({ effort: 0 }).toBuffer(),
    };
    const ids = await Promise.all(Object.entries(inputs).map(([ext, bytes]) => upload(owner, bytes, `in.${ext}`, { auto_describe: "false" })));
    const files = await Promise.all(ids.map((id) => processed(owner, id)));
    expect(files.map((f) => [f.format, f.variant_status, f.variant_count, f.dimensions.width])).toEqual(
      Object.keys(inputs).map((format) => [format, "completed", 4, 900]),
    );
  });

  test("small images are never upscaled", async () => {
    const id = await upload(owner, await photo(2, 300, 200, "png"), "small.png");
    const file = await processed(owner, id);
    expect(file.format).toBe("png");
    const large = await sharp((await fetchRedirect(owner, `/files/${id}/variant/large_1024`)).bytes).metadata();
    const small = await sharp((await fetchRedirect(owner, `/files/${id}/variant/small_256`)).bytes).metadata();
    expect([large.width, large.height]).toEqual([300, 200]);
    expect([small.width, small.height]).toEqual([256, 171]);
  });

  test("EXIF orientation is applied and the capture time becomes content_created_at", async () => {
    const id = await upload(owner, await exifRotatedJpeg(800, 400), "sideways.jpg");
    const file = await processed(owner, id);
    expect(file.dimensions).toEqual({ width: 400, height: 800 });
    expect(file.content_created_at).toBe("2021-06-01T10:34:56.000Z");
    const { data, info } = await sharp((await fetchRedirect(owner, `/files/${id}/variant/medium_750`)).bytes).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([375, 750]);
    const pixel = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
    // The stored left half (red) is the displayed top after a 90° clockwise turn.
    expect(pixel(187, 50)[0]).toBeGreaterThan(180);
    expect(pixel(187, 700)[2]).toBeGreaterThan(180);
  });

  test("HEIC (HEVC) photos are decoded by libheif: variants, dimensions, colours and OCR as for any image", async () => {
    const id = await upload(owner, heicHalves(), "IMG_0001.HEIC", { auto_describe: "false" });
    const file = await processed(owner, id);
    expect(file.variant_status).toBe("completed");
    expect(file.format).toBe("heic");
    expect(file.dimensions).toEqual({ width: 800, height: 400 });
    const { data, info } = await sharp((await fetchRedirect(owner, `/files/${id}/variant/medium_750`)).bytes).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height, info.channels]).toEqual([750, 375, 3]);
    const pixel = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
    for (const [channel, value] of [220, 30, 30].entries()) expect(Math.abs(pixel(100, 187)[channel]! - value)).toBeLessThan(20);
    for (const [channel, value] of [30, 30, 220].entries()) expect(Math.abs(pixel(650, 187)[channel]! - value)).toBeLessThan(20);
    const original = await fetchRedirect(owner, `/files/${id}/variant/original`);
    expect(Buffer.from(original.bytes).equals(heicHalves())).toBe(true);

    const text = await processed(owner, await upload(owner, heicText(), "scan.heic", { auto_describe: "false" }));
    expect(text.visible_text).toContain(HEIC_TEXT_LINES[0]);
    expect(text.visible_text).toContain(HEIC_TEXT_LINES[1]);

    // A cut-off HEIC fails its processing with libheif's own reason (which libheif-js only prints:
    // the decoding thread catches it), not its bare "HEIF processing error".
    const cut = heicHalves().subarray(0, 1000);
    const broken = await processed(owner, await upload(owner, cut, "cut.heic", { auto_describe: "false" }));
    expect(broken.variant_status).toBe("failed");
    const status = (await owner.api.get(`/files/uploads-status/${broken.id}`)).body;
    expect(status.error_message).toContain("libheif could not decode the HEIC: Invalid input");
  });

  test("the blurhash decodes to the image's average colour", async () => {
    const id = await upload(owner, await solid(640, 480, [200, 40, 40], "jpeg"), "red.jpg", { auto_describe: "false" });
    const file = await processed(owner, id);
    expect(file.blur_hash).toMatch(/^[0-9A-Za-z#$%*+,-.:;=?@[\]^_{|}~]{20,}$/);
    const pixels = decodeBlurHash(file.blur_hash, 16, 12);
    const mean = [0, 1, 2].map((c) => pixels.filter((_, i) => i % 4 === c).reduce((a, b) => a + b, 0) / (16 * 12));
    expect(Math.abs(mean[0]! - 200)).toBeLessThan(12);
    expect(Math.abs(mean[1]! - 40)).toBeLessThan(12);
    expect(Math.abs(mean[2]! - 40)).toBeLessThan(12);
  });

  test("a corrupt image fails its processing with a clear error and the worker goes on", async () => {
    const bad = await upload(owner, corruptPng(), "broken.png");
    const file = await processed(owner, bad);
    expect(file.variant_status).toBe("failed");
    expect(file.description_status).toBe("failed");
    expect(file.description_error).toContain("could not be decoded");
    const status = (await owner.api.get(`/files/uploads-status/${bad}`)).body;
    expect(status.unified_status).toBe("failed");
    expect(status.error_message).toContain("could not be decoded");
    const missing = await owner.api.get(`/files/${bad}/variant/small_256`);
    expect(missing.status).toBe(404);

    const good = await processed(owner, await upload(owner, await photo(3, 400, 300), "after.jpg", { auto_describe: "false" }));
    expect(good.variant_status).toBe("completed");
  });

  test("variant endpoints answer 400 for other media types and bad variant names, 404 for unknown files", async () => {
    const doc = await upload(owner, pdf(), "doc.pdf");
    expect((await owner.api.get(`/files/${doc}/variant/small_256`)).status).toBe(400);
    expect((await owner.api.post(`/files/${doc}/trigger-variants`)).status).toBe(400);
    expect((await owner.api.get(`/files/${doc}/similar`)).status).toBe(400);
    const img = await upload(owner, await photo(4, 300, 300), "x.jpg", { auto_describe: "false" });
    const bad = await owner.api.get(`/files/${img}/variant/huge_4096`);
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain("variant_type");
    expect((await owner.api.get(`/files/${crypto.randomUUID()}/variant/small_256`)).status).toBe(404);
  });

  test("trigger-variants re-renders; a second request while one is queued is a skipped duplicate", async () => {
    const id = await upload(owner, await photo(5, 1200, 900), "again.jpg", { auto_describe: "false" });
    await processed(owner, id);
    const [first, second] = await Promise.all([owner.api.post(`/files/${id}/trigger-variants`), owner.api.post(`/files/${id}/trigger-variants`)]);
    const bodies = [first.body, second.body];
    expect(bodies.map((b) => b.success)).toEqual([true, true]);
    expect(bodies.filter((b) => b.skipped_duplicate === true)).toHaveLength(1);
    expect(new Set(bodies.map((b) => b.task_id)).size).toBe(1);
    const job = await jobDone(owner, first.body.task_id);
    expect(job.status).toBe("completed");
    expect((await owner.api.get(`/files/${id}`)).body.variant_count).toBe(4);
  });
});

describe("OCR", () => {
  test("visible text and line boxes; searchable with search_mode=visible_text", async () => {
    const lines = ["INVOICE 2024-0042", "Total due: 1,250.00 EUR", "Thank you for your business"];
    const id = await upload(owner, await textImage(lines), "scan.png", { auto_describe: "false" });
    const file = await processed(owner, id);
    expect(file.visible_text).toContain("INVOICE 2024-0042");
    expect(file.visible_text).toContain("1,250.00");
    expect(file.text_regions).toHaveLength(3);
    const height = 120 + 3 * 110;
    file.text_regions.forEach((region: { text: string; bounding_box: Record<string, number> }, i: number) => {
      expect(region.text.toLowerCase()).toContain(lines[i]!.split(" ")[0]!.toLowerCase());
      const baseline = (110 + i * 110) / height;
      expect(region.bounding_box.x_min).toBeCloseTo(60 / 1400, 1);
      expect(region.bounding_box.y_max).toBeGreaterThan(baseline - 0.04);
      expect(region.bounding_box.y_max).toBeLessThan(baseline + 0.06);
      expect(region.bounding_box.y_min).toBeLessThan(baseline);
    });
    const found = await owner.api.get("/files?search=thank%20business&search_mode=visible_text");
    expect(found.body.items.map((f: { id: string }) => f.id)).toContain(id);
    const metadataOnly = await owner.api.get("/files?search=thank%20business&search_mode=metadata");
    expect(metadataOnly.body.items.map((f: { id: string }) => f.id)).not.toContain(id);
  });

  test("a photo without text is not read by tesseract: the text gate is the source, and there is no visible text", async () => {
    const file = await processed(owner, await upload(owner, await photo(3, 1600, 1200), "hills.jpg", { auto_describe: "false" }));
    expect(file.extractions.find((e: { domain: string }) => e.domain === "text_regions").source).toStartWith("mediabox text gate");
    expect(file.text_regions).toEqual([]);
    expect(file.visible_text).toBeNull();
  });

  test("MEDIABOX_OCR_LANGUAGES reads further languages from <models>/tesseract/; bad codes are refused at start", async () => {
    expect(() => loadConfig({}, { MEDIABOX_OCR_LANGUAGES: "eng+../etc" })).toThrow("--ocr-languages / MEDIABOX_OCR_LANGUAGES: expected tesseract language codes");
    expect(loadConfig({}, { MEDIABOX_OCR_LANGUAGES: "eng+deu,eng" }).ocrLanguages).toEqual(["eng", "deu"]);
    const modelsDir = scratchDir("mediabox-ocr-models-");
    mkdirSync(join(modelsDir, "tesseract"));
    const deu = join(dirname(require.resolve("@tesseract.js-data/deu/package.json")), "4.0.0_best_int", "deu.traineddata.gz");
    copyFileSync(deu, join(modelsDir, "tesseract", "deu.traineddata.gz"));
    const other = await startExtraServer({ env: { MEDIABOX_MODELS_DIR: modelsDir, MEDIABOX_OCR_LANGUAGES: "eng+deu" } });
    const tenant = await other.tenant({ tier: "ENTERPRISE" });
    const file = await processed(tenant, await upload(tenant, await textImage(["Übergabe an Jürgen Maßmann"]), "brief.png", { auto_describe: "false" }));
    expect(file.visible_text).toContain("Übergabe an Jürgen");
    expect(file.extractions.find((e: { domain: string }) => e.domain === "text_regions").source).toBe("tesseract.js eng+deu");
  });

  test("with PP-OCR's folder installed, images are read by PP-OCR (the fixture model reads each stroke as \"I\")", async () => {
    const modelsDir = scratchDir("mediabox-ppocr-models-");
    buildFixturePpOcrModel(modelsDir);
    expect(loadConfig({}, {}).ocrEngine).toBe("auto");
    expect(() => loadConfig({}, { MEDIABOX_OCR_ENGINE: "paddle" })).toThrow("--ocr-engine / MEDIABOX_OCR_ENGINE: expected auto or tesseract");
    const other = await startExtraServer({ env: { MEDIABOX_MODELS_DIR: modelsDir, MEDIABOX_OCR_ENGINE: "auto" } });
    const tenant = await other.tenant({ tier: "ENTERPRISE" });
    const image = await barsImage(800, 600, [[100, 100, 60, 80], [400, 100, 60, 80], [100, 400, 60, 80]]);
    const file = await processed(tenant, await upload(tenant, image, "bars.png", { auto_describe: "false" }));
    expect(file.extractions.find((e: { domain: string }) => e.domain === "text_regions").source).toBe("PP-OCR (ppocr)");
    expect(file.text_regions.map((r: { text: string }) => r.text)).toEqual(["I I", "I"]);
    expect(file.visible_text).toBe("I I\n\nI");
    expect(file.text_regions[0].bounding_box.y_max).toBeLessThan(file.text_regions[1].bounding_box.y_min);
  });
});

describe("descriptions and tags", () => {
  test("a description from the local detectors, merged tags, full_descriptions and has_full_description", async () => {
    const id = await upload(owner, await textImage(["MEDIABOX SAMPLE LABEL", "Batch 7731"]), "label.png", { tags: "mine,Labels" });
    const file = await processed(owner, id);
    expect(file.description_status).toBe("completed");
    expect(file.description_error).toBeNull();
    expect(file.upload_description).toContain("PNG image");
    expect(file.upload_description).toContain("MEDIABOX SAMPLE LABEL");
    expect(file.description_generated_at).toBeString();
    expect(file.tags.slice(0, 2)).toEqual(["mine", "Labels"]);
    expect(file.tags).toContain("text");
    expect(file.full_descriptions).toHaveLength(1);
    expect(file.full_descriptions[0]).toMatchObject({ kind: "summary", text: file.upload_description });
    expect(file.full_descriptions[0].model).toContain("tesseract");
    const listed = (await owner.api.get(`/files?ids=${id}`)).body.items[0];
    expect(listed.has_full_description).toBe(true);
    expect(listed.text_regions).toBeUndefined();
  });

  test("auto_describe=false skips the description and reserves no quota", async () => {
    const tenant = await server.tenant({ tier: "ENTERPRISE" });
    const id = await upload(tenant, await photo(6, 500, 400), "quiet.jpg", { auto_describe: "false" });
    const file = await processed(tenant, id);
    expect(file.description_status).toBe("skipped");
    expect(file.upload_description).toBeNull();
    expect(file.full_descriptions).toEqual([]);
    expect(file.variant_status).toBe("completed");
    expect((await tenant.api.get("/files/quota-check?file_count=1")).body.current_usage).toBe(0);
  });

  test("past the monthly AI-description quota the description is skipped with the reason", async () => {
    const tenant = await server.tenant({ tier: "STARTER" });
    await recordUsage(server.ctx.sql, tenant.orgId, "ai_descriptions", 499, clock.now());
    const within = await processed(tenant, await upload(tenant, await photo(7, 400, 300), "499.jpg"));
    expect(within.description_status).toBe("completed");
    const over = await processed(tenant, await upload(tenant, await photo(8, 400, 300), "501.jpg"));
    expect(over.description_status).toBe("skipped");
    expect(over.description_error).toContain("quota");
    expect(over.upload_description).toBeNull();
    const quota = (await tenant.api.get("/files/quota-check?file_count=1")).body;
    expect([quota.current_usage, quota.available, quota.can_proceed]).toEqual([500, 0, false]);
  });

  test("a configured captioning model that is missing fails the description naming its folder (never the server's path to it)", async () => {
    const other = await startExtraServer({ env: { MEDIABOX_CAPTION_MODEL: "vit-gpt2-image-captioning" } });
    const tenant = await other.tenant({ tier: "ENTERPRISE" });
    const form = new FormData();
    form.append("file", new File([(await photo(9, 400, 300)) as Uint8Array<ArrayBuffer>], "c.jpg"));
    const id = (await tenant.api.form("/files/upload", form)).body.image_id;
    const file = await processed(tenant, id);
    expect(file.description_status).toBe("failed");
    expect(file.description_error).toContain("vit-gpt2-image-captioning");
    expect(file.description_error).not.toContain(other.ctx.config.modelsDir);
    expect(file.upload_description).toBeNull();
    expect(file.variant_status).toBe("completed");
  });
});

describe("CLIP model folders (fixture CLIP model): zero-shot categories and switching models", () => {
  const RED: [number, number, number] = [220, 30, 30];
  const BLUE: [number, number, number] = [30, 30, 220];
  const WHITE: [number, number, number] = [255, 255, 255];

  test("an image left as general gets the category whose prompt CLIP ranks clearly first; the uploader's choice is kept", async () => {
    const modelsDir = scratchDir("mediabox-clip-models-");
    // "computer" is only in the screenshot prompt, "blue" only in the blueprint one, "everyday" only in general's.
    buildFixtureClipModel(modelsDir, "clip-fixture", { computer: RED, blue: BLUE, everyday: WHITE });
    const other = await startExtraServer({ env: { MEDIABOX_MODELS_DIR: modelsDir, MEDIABOX_IMAGE_EMBEDDING_MODEL: "clip-fixture" } });
    const tenant = await other.tenant({ tier: "ENTERPRISE" });
    const red = await processed(tenant, await upload(tenant, await solid(320, 240, RED, "jpeg"), "red.jpg"));
    expect([red.description_status, red.content_category]).toEqual(["completed", "screenshot"]);
    const blue = await processed(tenant, await upload(tenant, await solid(320, 240, BLUE, "jpeg"), "blue.jpg"));
    expect(blue.content_category).toBe("blueprint");
    const white = await processed(tenant, await upload(tenant, await solid(320, 240, WHITE, "jpeg"), "white.jpg"));
    expect(white.content_category).toBe("general");
    const chosen = await processed(tenant, await upload(tenant, await solid(320, 240, RED, "jpeg"), "mine.jpg", { content_category: "artwork" }));
    expect(chosen.content_category).toBe("artwork");
    // The category came from the same CLIP vector similarity search uses.
    expect(await other.ctx.sql.one("SELECT embedding_model AS m FROM image_facts WHERE file_id = ?", [red.id])).toEqual({ m: "clip:clip-fixture" });
  });

  test("after switching the image model, a restart re-embeds the library so similar images keep working", async () => {
    const modelsDir = scratchDir("mediabox-clip-models-");
    buildFixtureClipModel(modelsDir, "clip-fixture", {}, { textTower: false });
    const dataDir = scratchDir("mediabox-restart-");
    const ids: string[] = [];
    const modelOf = (server: TestServer) =>
      Promise.all(ids.map(async (id) => (await server.ctx.sql.one<{ m: string }>("SELECT embedding_model AS m FROM image_facts WHERE file_id = ?", [id]))!.m));
    const first = await startExtraServer({ dataDir });
    const tenant = await first.tenant({ tier: "ENTERPRISE" });
    const key = tenant.key;
    for (const [name, colour] of [["red.jpg", RED], ["red-too.jpg", [200, 40, 40]], ["blue.jpg", BLUE]] as const) {
      ids.push(await upload(tenant, await solid(320, 240, colour as [number, number, number], "jpeg"), name, { auto_describe: "false" }));
    }
    for (const id of ids) await processed(tenant, id);
    expect(await modelOf(first)).toEqual(["mobilenet_v2-nsfwjs", "mobilenet_v2-nsfwjs", "mobilenet_v2-nsfwjs"]);
    await first.close();

    const second = await startExtraServer({ dataDir, env: { MEDIABOX_MODELS_DIR: modelsDir, MEDIABOX_IMAGE_EMBEDDING_MODEL: "clip-fixture" } });
    let models: string[] = [];
    await waitFor(async () => (models = await modelOf(second)).every((m) => m === "clip:clip-fixture"), {
      what: () => `every image to be embedded again with clip-fixture (now: ${models.join(", ")})`,
    });
    expect(await modelOf(second)).toEqual(["clip:clip-fixture", "clip:clip-fixture", "clip:clip-fixture"]);
    const similar = (await new ApiClient(second.url, key).get(`/files/${ids[0]}/similar`)).body;
    expect(similar.items.map((i: { image_id: string }) => i.image_id)).toEqual([ids[1], ids[2]]);
  });

  test("without a text tower the rules decide, as without CLIP", async () => {
    const modelsDir = scratchDir("mediabox-clip-models-");
    buildFixtureClipModel(modelsDir, "clip-vision-only", {}, { textTower: false });
    const other = await startExtraServer({ env: { MEDIABOX_MODELS_DIR: modelsDir, MEDIABOX_IMAGE_EMBEDDING_MODEL: "clip-vision-only" } });
    const tenant = await other.tenant({ tier: "ENTERPRISE" });
    const red = await processed(tenant, await upload(tenant, await solid(320, 240, RED, "jpeg"), "red.jpg"));
    expect([red.description_status, red.content_category]).toEqual(["completed", "general"]);
  });
});

describe("optional OpenAI-compatible vision endpoint", () => {
  test("when configured it writes the caption, picks the content category and fills the custom schema; the local summary is kept", async () => {
    const requests: { model: string; hasImage: boolean; wantsJson: boolean }[] = [];
    const endpoint = Bun.serve({
      port: 0,
      async fetch(req) {
        const body = (await req.json()) as { model: string; messages: { content: { type: string; image_url?: { url: string } }[] }[]; response_format?: unknown };
        const image = body.messages[0]!.content.find((c) => c.type === "image_url");
        requests.push({ model: body.model, hasImage: image?.image_url?.url.startsWith("data:image/jpeg;base64,") ?? false, wantsJson: !!body.response_format });
        const schema = JSON.stringify(body.response_format ?? "");
        const content = !body.response_format
          ? "A lighthouse on a rocky coast at dusk."
          : schema.includes("real_estate")
            ? JSON.stringify({ category: "real_estate" })
            : JSON.stringify({ invoice_number: "FROM-ENDPOINT" });
        return Response.json({ model: body.model, choices: [{ message: { role: "assistant", content }, finish_reason: "stop" }] });
      },
    });
    defer(() => endpoint.stop(true));
    const other = await startExtraServer({
      env: { MEDIABOX_VISION_ENDPOINT_URL: `http://127.0.0.1:${endpoint.port}/v1`, MEDIABOX_VISION_ENDPOINT_MODEL: "llava:13b" },
    });
    const tenant = await other.tenant({ tier: "ENTERPRISE" });
    const schema = await tenant.api.post("/custom-extraction-schemas", { name: "ep", schema: { type: "object", properties: { invoice_number: { type: "string" } } } });
    const form = new FormData();
    form.append("file", new File([(await photo(21, 800, 600)) as Uint8Array<ArrayBuffer>], "coast.jpg"));
    form.append("custom_schema_id", schema.body.id);
    const id = (await tenant.api.form("/files/upload", form)).body.image_id;
    const file = await processed(tenant, id);
    expect(file.description_status).toBe("completed");
    expect(file.upload_description).toBe("A lighthouse on a rocky coast at dusk.");
    expect(file.full_descriptions.map((d: { kind: string; model: string }) => [d.kind, d.model.split(" ")[0]])).toEqual([
      ["caption", "llava:13b"],
      ["summary", "mediabox-composer"],
    ]);
    const extraction = file.extractions.find((e: { domain: string }) => e.domain === "custom_schema");
    expect(extraction.data.value).toEqual({ invoice_number: "FROM-ENDPOINT" });
    expect(extraction.source).toBe("vision endpoint");
    expect(requests.every((r) => r.model === "llava:13b" && r.hasImage)).toBe(true);
    // caption, zero-shot category, custom schema
    expect(requests.map((r) => r.wantsJson).sort()).toEqual([false, true, true]);
    expect(file.content_category).toBe("real_estate");
  });
});

describe("similar images", () => {
  test("a resized, recompressed copy ranks above unrelated images; self, deleted and other tenants are excluded", async () => {
    const tenant = await server.tenant({ tier: "ENTERPRISE" });
    const original = await photo(11, 1200, 900);
    const copy = await sharp(original).resize(600).jpeg({ quality: 70 }).toBuffer();
    const ids = {
      a: await upload(tenant, original, "a.jpg", { auto_describe: "false" }),
      copy: await upload(tenant, copy, "a-small.jpg", { auto_describe: "false" }),
      b: await upload(tenant, await photo(24, 1200, 900), "b.jpg", { auto_describe: "false" }),
      c: await upload(tenant, await textImage(["Completely different"]), "c.png", { auto_describe: "false" }),
      gone: await upload(tenant, await sharp(original).flop().jpeg().toBuffer(), "gone.jpg", { auto_describe: "false" }),
    };
    const stranger = await server.tenant({ tier: "ENTERPRISE" });
    const strangerId = await upload(stranger, original, "theirs.jpg", { auto_describe: "false" });
    for (const id of Object.values(ids)) await processed(tenant, id);
    await processed(stranger, strangerId);
    expect((await tenant.api.delete(`/files/${ids.gone}`)).status).toBe(200);

    const res = await tenant.api.get(`/files/${ids.a}/similar?limit=10`);
    expect(res.status).toBe(200);
    expect(res.body.reference_image_id).toBe(ids.a);
    const found = res.body.items.map((i: { image_id: string }) => i.image_id);
    expect(found[0]).toBe(ids.copy);
    expect(found).not.toContain(ids.a);
    expect(found).not.toContain(ids.gone);
    expect(found).not.toContain(strangerId);
    expect(found.sort()).toEqual([ids.b, ids.c, ids.copy].sort());
    expect(res.body.total_count).toBe(3);
    const [top, next] = res.body.items;
    expect(top.vector_similarity).toBeGreaterThan(next.vector_similarity);
    expect(top.relevance_score).toBeGreaterThan(0);
    expect(top.relevance_score).toBeLessThanOrEqual(1);
    expect(top.thumbnail_url).toStartWith("http");

    expect((await tenant.api.get(`/files/${ids.a}/similar?limit=1`)).body.items).toHaveLength(1);
    for (const limit of ["0", "51", "x"]) expect((await tenant.api.get(`/files/${ids.a}/similar?limit=${limit}`)).status).toBe(400);
    expect((await stranger.api.get(`/files/${ids.a}/similar`)).status).toBe(404);
  });
});

describe("custom schema, compliance, review, markdown", () => {
  let schemaId: string;
  let invoiceId: string;

  beforeAll(async () => {
    const created = await owner.api.post("/custom-extraction-schemas", {
      name: `invoice-${crypto.randomUUID().slice(0, 6)}`,
      schema: {
        type: "object",
        properties: {
          invoice_number: { type: "string" },
          total: { type: "number" },
          has_person: { type: "boolean" },
        },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    schemaId = created.body.id;
    invoiceId = await upload(owner, await textImage(["Invoice number: INV-0042", "Total: 1,250.00"]), "inv.png", {
      custom_schema_id: schemaId,
      compliance_type: "mls",
      compliance_standard: "reso",
    });
    await processed(owner, invoiceId);
  });

  test("the custom schema is filled from OCR and shown on detail as an extraction", async () => {
    const file = (await owner.api.get(`/files/${invoiceId}`)).body;
    const extraction = file.extractions.find((e: { domain: string }) => e.domain === "custom_schema");
    expect(extraction.data.schema_id).toBe(schemaId);
    expect(extraction.data.value).toMatchObject({ invoice_number: "INV-0042", total: 1250, has_person: false });
    expect(extraction.source).toContain("local evidence");
  });

  test("an unknown custom_schema_id or compliance standard is refused before anything is stored", async () => {
    const before = (await owner.api.get("/files?limit=1")).body.total_count;
    const form = (fields: Record<string, string>) => {
      const f = new FormData();
      f.append("file", new File([new Uint8Array(16)], "x.png"));
      for (const [k, v] of Object.entries(fields)) f.append(k, v);
      return f;
    };
    const unknownSchema = await owner.api.form("/files/upload", form({ custom_schema_id: crypto.randomUUID() }));
    expect(unknownSchema.status).toBe(404);
    const unknownStandard = await owner.api.form("/files/upload", form({ compliance_type: "mls", compliance_standard: "atlantis" }));
    expect(unknownStandard.status).toBe(400);
    expect(unknownStandard.body.detail).toContain("reso");
    expect((await owner.api.get("/files?limit=1")).body.total_count).toBe(before);
  });

  test("compliance is stored as mls_compliance and drives compliance_status and the listing filter", async () => {
    const file = (await owner.api.get(`/files/${invoiceId}`)).body;
    expect(file.compliance_status).toBe("fail");
    const compliance = file.extractions.find((e: { domain: string }) => e.domain === "mls_compliance");
    const failed = compliance.data.checks.filter((c: { passed: boolean; level: string }) => !c.passed && c.level === "required").map((c: { rule: string }) => c.rule);
    expect(failed.length).toBeGreaterThan(0);
    expect(JSON.stringify(compliance.data.checks)).toContain("INV-0042");

    const good = await upload(owner, await photo(12, 1600, 1200), "listing.jpg", { compliance_type: "mls", compliance_standard: "reso", auto_describe: "false" });
    expect((await processed(owner, good)).compliance_status).toBe("pass");
    const passing = (await owner.api.get("/files?compliance_status=pass")).body.items.map((f: { id: string }) => f.id);
    const failing = (await owner.api.get("/files?compliance_status=fail")).body.items.map((f: { id: string }) => f.id);
    expect(passing).toContain(good);
    expect(passing).not.toContain(invoiceId);
    expect(failing).toContain(invoiceId);
  });

  test("reviews layer over the original and merge additively", async () => {
    const before = (await owner.api.get(`/files/${invoiceId}`)).body;
    expect(before.text_regions).toHaveLength(2);
    const first = await owner.api.patch(`/files/${invoiceId}/extractions/text_regions/review`, {
      field_edits: { "regions.0.text": "Invoice number: INV-0042 (checked)" },
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ image_id: invoiceId, domain_name: "text_regions", corrections: { item_reviews: {}, field_edits: { "regions.0.text": "Invoice number: INV-0042 (checked)" } } });
    const second = await owner.api.patch(`/files/${invoiceId}/extractions/text_regions/review`, { item_reviews: { "regions.1": "rejected" } });
    expect(second.body.corrections).toEqual({
      item_reviews: { "regions.1": "rejected" },
      field_edits: { "regions.0.text": "Invoice number: INV-0042 (checked)" },
    });
    const after = (await owner.api.get(`/files/${invoiceId}`)).body;
    expect(after.text_regions.map((r: { text: string }) => r.text)).toEqual(["Invoice number: INV-0042 (checked)"]);
    const stored = after.extractions.find((e: { domain: string }) => e.domain === "text_regions");
    expect(stored.data.regions).toHaveLength(2);
    expect(stored.reviewed_at).toBeString();

    const schemaEdit = await owner.api.patch(`/files/${invoiceId}/extractions/mls_compliance/review`, { item_reviews: { "checks.0": "confirmed" } });
    expect(schemaEdit.status).toBe(200);
  });

  test("review errors: 400 invalid domain, bad body or not an image; 404 missing file or extraction", async () => {
    const path = (id: string, domain: string) => `/files/${id}/extractions/${domain}/review`;
    const body = { item_reviews: { "regions.0": "confirmed" } };
    expect((await owner.api.patch(path(invoiceId, "weather"), body)).status).toBe(400);
    expect((await owner.api.patch(path(invoiceId, "text_regions"), {})).status).toBe(400);
    expect((await owner.api.patch(path(invoiceId, "text_regions"), { item_reviews: { "regions.0": "maybe" } })).status).toBe(400);
    expect((await owner.api.patch(path(invoiceId, "text_regions"), { item_reviews: { "regions.9": "rejected" } })).status).toBe(400);
    const doc = await upload(owner, pdf(), "r.pdf");
    expect((await owner.api.patch(path(doc, "text_regions"), body)).status).toBe(400);
    expect((await owner.api.patch(path(crypto.randomUUID(), "text_regions"), body)).status).toBe(404);
    const missing = await owner.api.patch(path(invoiceId, "real_estate"), { field_edits: { rooms: 3 } });
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain("real_estate");
  });

  test("format=markdown adds formatted_document built from description, text and extractions", async () => {
    const res = await owner.api.get(`/files/${invoiceId}?format=markdown`);
    expect(res.status).toBe(200);
    const doc = res.body.formatted_document;
    expect(doc.format).toBe("markdown");
    expect(doc.content).toStartWith("# inv.png");
    expect(doc.content).toContain("## Visible text");
    expect(doc.content).toContain("INV-0042");
    expect(doc.content).toContain("## Extractions");
    expect(doc.content).toContain("Compliance: reso (fail)");
    expect((await owner.api.get(`/files/${invoiceId}`)).body.formatted_document).toBeUndefined();
  });
});

describe("/images/analyze", () => {
  const form = (bytes: Uint8Array, name: string, fields: Record<string, string> = {}) => {
    const f = new FormData();
    f.append("file", new File([bytes as Uint8Array<ArrayBuffer>], name));
    for (const [k, v] of Object.entries(fields)) f.append(k, v);
    return f;
  };

  test("waits for the description and returns it with tags and visible text", async () => {
    const res = await owner.api.form("/images/analyze", form(await textImage(["QUARTERLY HARVEST REPORT"]), "report.png", { tags: "farm" }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe("completed");
    expect(res.body.description).toContain("QUARTERLY HARVEST REPORT");
    expect(res.body.tags).toContain("farm");
    expect(res.body.visible_text).toContain("HARVEST");
    expect(res.body.text_regions).toHaveLength(1);
    expect((await owner.api.get(`/files/${res.body.image_id}`)).status).toBe(200);
  });

  test("async returns a job whose results carry description and tags", async () => {
    const res = await owner.api.form("/images/analyze/async", form(await photo(13, 640, 480), "async.jpg"));
    expect(res.status).toBe(202);
    expect(res.body.poll_url).toBe(`/api/v2/job/${res.body.job_id}`);
    await jobDone(owner, res.body.job_id);
    const job = (await owner.api.get(`/job/${res.body.job_id}`)).body;
    expect(job.status).toBe("completed");
    expect(job.results[0].description).toContain("JPEG image (640×480)");
    expect(job.results[0].tags).toBeArray();
    expect(job.results[0].image_id).toBe(res.body.image_id);
    expect(job.results[0].stages.variants.status).toBe("completed");
  });

  test("refuses documents and bad timeouts without storing anything", async () => {
    const before = (await owner.api.get("/files?limit=1")).body.total_count;
    const doc = await owner.api.form("/images/analyze", form(pdf(), "a.pdf"));
    expect(doc.status).toBe(400);
    expect(doc.body.detail).toContain("image");
    const slow = await owner.api.form("/images/analyze", form(await photo(14, 100, 100), "t.jpg", { timeout: "3" }));
    expect(slow.status).toBe(400);
    expect(slow.body.detail).toContain("timeout");
    expect((await owner.api.get("/files?limit=1")).body.total_count).toBe(before);
  });
});

describe("purge", () => {
  test("purging a deleted image removes its variant blobs and vectors", async () => {
    const tenant = await server.tenant({ tier: "ENTERPRISE" });
    const id = await upload(tenant, await photo(15, 800, 600), "purge.jpg", { auto_describe: "false" });
    const file = await processed(tenant, id);
    const keys = (await server.ctx.sql.all<{ blob_key: string }>("SELECT blob_key FROM image_variants WHERE file_id = ?", [id])).map((r) => r.blob_key);
    expect(keys).toHaveLength(4);
    const model = (await server.ctx.sql.one<{ m: string }>("SELECT embedding_model AS m FROM image_facts WHERE file_id = ?", [id]))!.m;
    expect((await (await server.ctx.spaces.find("image", model))!.vectorsOf([id])).has(id)).toBe(true);
    expect(file.full_url).toStartWith("http");

    await tenant.api.delete(`/files/${id}`);
    clock.advance(31 * 24 * 3600 * 1000);
    expect(await purgeDeletedFiles(server.ctx)).toBeGreaterThanOrEqual(1);
    for (const key of keys) expect(await server.ctx.blobs.size(key)).toBeNull();
    expect((await (await server.ctx.spaces.find("image", model))!.vectorsOf([id])).has(id)).toBe(false);
    expect(await server.ctx.sql.one("SELECT count(*) AS n FROM image_variants WHERE file_id = ?", [id])).toEqual({ n: 0 });
  });
});
