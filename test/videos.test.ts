/**
 * The video pipeline through real HTTP: probe fields, poster variants and blurhash, keyframes
 * with times, OCR of text shown in the video, similar-image search between frames and images,
 * descriptions and the 2-credit reservation, Range playback, limits, broken files, and the purge
 * of keyframes. The fixtures are committed (test/fixtures/video, see scripts/make-video-fixtures.ts);
 * one video is made here from images with known text. The real clips in ../shared are checked
 * against their ffprobe truth when present.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { ManualClock } from "../src/clock.ts";
import { purgeDeletedFiles } from "../src/library/file-edits.ts";
import { resolveFfmpegPaths } from "../src/video/ffmpeg-tools.ts";
import { keyframeItemId } from "../src/video/keyframe-store.ts";
import { photo, textImage } from "./support/images.ts";
import { processed, terminalStatus, waitFor } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { postFile } from "./support/uploads.ts";
import { perTest } from "./support/per-test.ts";

const FIXTURES = join(import.meta.dir, "fixtures", "video");
const fixture = (name: string) => readFileSync(join(FIXTURES, name));
const SHARED_VIDEOS = join(import.meta.dir, "..", "..", "shared", "datasets", "video");

let server: TestServer;
let owner: Tenant;
const clock = new ManualClock(Date.now());
beforeAll(async () => {
  server = await startTestServer({ clock });
  owner = await server.tenant({ tier: "CUSTOM" });
});
afterAll(() => server.close());

const { defer, dir: scratchDir } = perTest();

async function upload(tenant: Tenant, bytes: Uint8Array, filename: string, fields: Record<string, string> = {}) {
  const res = await postFile(tenant.api, bytes, filename, fields);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body).toMatchObject({ media_type: "video", status: "processing", thumbnail_generation_started: true, analysis_started: true });
  return res.body.image_id as string;
}

/** A video made of still images, each shown for `seconds` (H.264, 25 fps), by the same ffmpeg the server runs. */
async function slideshow(images: Buffer[], seconds: number, size = { width: 640, height: 360 }): Promise<Buffer> {
  const dir = scratchDir("mediabox-slides-");
  for (const [i, image] of images.entries()) {
    await sharp(image).resize(size.width, size.height, { fit: "contain", background: "#ffffff" }).flatten({ background: "#ffffff" }).png().toFile(join(dir, `${i}.png`));
  }
  const out = join(dir, "slides.mp4");
  const { ffmpeg } = resolveFfmpegPaths();
  const run = Bun.spawnSync([
    ffmpeg, "-nostdin", "-v", "error", "-y", "-framerate", `1/${seconds}`, "-i", join(dir, "%d.png"),
    "-vf", "fps=25,format=yuv420p", "-c:v", "libx264", "-preset", "veryfast", "-crf", "20", out,
  ]);
  if (run.exitCode !== 0) throw new Error(`ffmpeg: ${run.stderr.toString()}`);
  return readFileSync(out);
}

describe("probe, poster and keyframes", () => {
  test("an H.264 video gets every video field, a poster past the black opening and keyframes at its cuts", async () => {
    const id = await upload(owner, fixture("scenes.mp4"), "scenes.mp4", { title: "Test card" });
    const file = await processed(owner, id, 120_000);
    expect(file).toMatchObject({
      media_type: "video",
      video_codec: "h264",
      resolution: "320x240",
      frame_rate: 25,
      analysis_status: "completed",
      analysis_error: null,
      container: "mp4",
      has_audio: true,
      content_created_at: "2021-06-15T10:20:30.000Z",
    });
    expect(file.duration_seconds).toBeCloseTo(10, 0);
    expect(file.bit_rate).toBeGreaterThan(0);
    for (const url of [file.thumbnail_url, file.medium_url, file.full_url, file.video_url]) expect(url).toStartWith("http");
    expect(file.blur_hash).toMatch(/^[0-9A-Za-z#$%*+,\-.:;=?@[\]^_{|}~]{6,}$/);

    // The poster is a variant like an image's: WebP, never upscaled.
    const thumb = Buffer.from(await (await fetch(file.thumbnail_url)).arrayBuffer());
    const meta = await sharp(thumb).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["webp", 256, 192]);
    // The poster is not the black opening second.
    const { channels } = await sharp(thumb).stats();
    expect(Math.max(...channels.slice(0, 3).map((c) => c.mean))).toBeGreaterThan(40);

    // Keyframes: time order, at most one per 2 s, one near each cut (1, 4, 7 s), each a JPEG that loads.
    const times = file.keyframes.map((k: any) => k.time_seconds);
    expect(times).toEqual([...times].sort((a: number, b: number) => a - b));
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(1.9);
    for (const cut of [1, 4, 7]) expect(times.some((t: number) => Math.abs(t - cut) < 0.5)).toBe(true);
    expect(file.keyframes.filter((k: any) => k.is_poster)).toHaveLength(1);
    const frame = await fetch(file.keyframes[0].url);
    expect(frame.status).toBe(200);
    expect((await sharp(Buffer.from(await frame.arrayBuffer())).metadata()).format).toBe("jpeg");

    // The description is machine-made and says so; the listing shows the video with its poster.
    expect(file.description_status).toBe("completed");
    expect(file.upload_description).toContain("10-second landscape video (320×240, H264) with sound");
    expect(file.full_descriptions.map((d: any) => d.model)).toEqual([expect.stringContaining("mediabox-composer (video keyframes")]);
    const listed = await owner.api.get(`/files?media_types=video&ids=${id}`);
    expect(listed.body.items[0]).toMatchObject({ id, resolution: "320x240", analysis_status: "completed" });
    expect(listed.body.items[0].thumbnail_url).toStartWith("http");
    expect(listed.body.items[0]).not.toHaveProperty("keyframes");

    // processing-status works for videos; the export's video columns are filled.
    const status = await owner.api.get(`/files/${id}/processing-status`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ media_type: "video", processing_status: "completed" });
    const exported = await owner.api.post("/files/export", {
      format: "csv",
      file_ids: [id],
      columns: ["filename", "duration_seconds", "frame_rate", "video_codec", "resolution"].map((field_key) => ({ field_key })),
    });
    expect(exported.status, JSON.stringify(exported.body)).toBe(200);
    const csv = await (await fetch(exported.body.download_url)).text();
    const [header, row] = csv.trim().split(/\r?\n/);
    expect(header).toContain("Video codec");
    expect(row).toMatch(/^scenes\.mp4,\d+(\.\d+)?,25,h264,320x240$/);
  }, 150_000);

  test.each([
    ["vp9.webm", { video_codec: "vp9", resolution: "320x240", frame_rate: 24, container: "webm", has_audio: false }],
    ["hevc.mov", { video_codec: "hevc", resolution: "320x240", container: "mov", has_audio: true }],
    ["rotated.mp4", { video_codec: "h264", resolution: "180x320", has_audio: false }],
    ["phone.3gp", { video_codec: "h263", resolution: "176x144", container: "3gp", has_audio: true }],
  ])("%s: probed, with a poster upright as displayed", async (name, expected) => {
    const id = await upload(owner, fixture(name), name);
    const file = await processed(owner, id, 120_000);
    expect(file).toMatchObject({ ...expected, analysis_status: "completed" });
    const [width, height] = (expected.resolution as string).split("x").map(Number) as [number, number];
    const medium = await sharp(Buffer.from(await (await fetch(file.medium_url)).arrayBuffer())).metadata();
    // Never upscaled: the poster keeps the video's shape and size.
    expect([medium.width, medium.height]).toEqual([width, height]);
    expect(file.keyframes.length).toBeGreaterThan(0);
  }, 150_000);
});

describe("what a video shows", () => {
  test("text shown in the video is read once with its time, found by search, and the frames are similar to the image they show", async () => {
    const slides = [
      await textImage(["QUARTERLY HARBOUR", "REPORT"]),
      await photo(7, 1280, 720),
      await textImage(["QUARTERLY HARBOUR", "REPORT"]),
    ];
    const id = await upload(owner, await slideshow(slides, 3), "slides.mp4");
    const file = await processed(owner, id, 150_000);
    expect(file.analysis_status).toBe("completed");
    // Read in two frames, kept once.
    expect(file.visible_text).toContain("QUARTERLY HARBOUR");
    expect(file.visible_text.match(/QUARTERLY/g)).toHaveLength(1);
    const region = file.text_regions.find((r: any) => r.text.includes("QUARTERLY"));
    expect(region.time_seconds).toBeLessThan(3);
    expect(file.keyframes.find((k: any) => k.visible_text?.includes("HARBOUR"))).toBeDefined();
    expect(file.tags).toContain("text");

    const found = await owner.api.get("/files?search=harbour&search_mode=visible_text");
    expect(found.body.items.map((i: any) => i.id)).toContain(id);

    // The photo the video shows, uploaded as an image: each finds the other, with the moment.
    const form = new FormData();
    form.append("file", new File([(await photo(7, 1280, 720)) as Uint8Array<ArrayBuffer>], "harbour.jpg"));
    const imageUpload = await owner.api.form("/files/upload", form);
    expect(imageUpload.status).toBe(201);
    const imageId = imageUpload.body.image_id as string;
    await processed(owner, imageId, 120_000);
    const fromImage = await owner.api.get(`/files/${imageId}/similar?limit=5`);
    expect(fromImage.status, JSON.stringify(fromImage.body)).toBe(200);
    const videoMatch = fromImage.body.items.find((i: any) => i.image_id === id);
    expect(videoMatch).toMatchObject({ media_type: "video" });
    expect(videoMatch.time_seconds).toBeGreaterThanOrEqual(2.5);
    expect(videoMatch.time_seconds).toBeLessThan(6.5);
    // One entry per video, however many of its frames are close.
    expect(fromImage.body.items.filter((i: any) => i.image_id === id)).toHaveLength(1);

    const fromVideo = await owner.api.get(`/files/${id}/similar?limit=5`);
    expect(fromVideo.status, JSON.stringify(fromVideo.body)).toBe(200);
    expect(fromVideo.body.items.map((i: any) => i.image_id)).toContain(imageId);
    expect(fromVideo.body.items.map((i: any) => i.image_id)).not.toContain(id);
  }, 240_000);
});

describe("credits, limits and broken files", () => {
  test("a video reserves two description credits, kept when described and given back when not", async () => {
    const tenant = await server.tenant({ tier: "STARTER" });
    // STARTER allows 30 requests a minute per key: the waits poll with a key of their own, so a
    // slow machine's extra polls never leave the uploads below answered 429.
    const poller = { api: await tenant.keyWith(["view"]) };
    const used = async () => (await tenant.api.get("/files/quota-check?file_count=1")).body.current_usage as number;
    expect(await used()).toBe(0);
    const id = await upload(tenant, fixture("vp9.webm"), "clip.webm");
    expect(await used()).toBe(2);
    expect((await processed(poller, id, 120_000)).description_status).toBe("completed");
    expect(await used()).toBe(2);

    const broken = await upload(tenant, fixture("truncated.mp4"), "broken.mp4");
    // Reserved while it is analysed; the probe may already have failed and given them back.
    const whileAnalysed = await used();
    const analysedYet = (await poller.api.get(`/files/uploads-status/${broken}`)).body.is_terminal;
    if (!analysedYet) expect(whileAnalysed).toBe(4);
    await terminalStatus(poller, broken, 120_000);
    const failed = (await tenant.api.get(`/files/${broken}`)).body;
    expect(failed.description_status).toBe("failed");
    expect(await used()).toBe(2);
  }, 150_000);

  test("a video container that does not decode fails cleanly with the reason, and the server serves on", async () => {
    const id = await upload(owner, fixture("truncated.mp4"), "cut-before-index.mp4");
    const status = await waitFor(async () => {
      const s = await owner.api.get(`/files/uploads-status/${id}`);
      return s.body.is_terminal ? s.body : null;
    }, { what: "the broken video to finish", timeoutMs: 120_000 });
    expect(status.unified_status).toBe("failed");
    const file = (await owner.api.get(`/files/${id}`)).body;
    expect(file).toMatchObject({ analysis_status: "failed", duration_seconds: null, thumbnail_url: null, keyframes: [] });
    expect(file.analysis_error).toMatch(/truncated or corrupt/);
    // Final at the first attempt: the same bytes fail the same way.
    const job = await server.ctx.sql.one<{ attempts: number; status: string }>("SELECT attempts, status FROM jobs WHERE id = (SELECT processing_job_id FROM files WHERE id = ?)", [id]);
    expect(job).toEqual({ attempts: 1, status: "failed" });
    expect((await owner.api.get("/healthz")).status).toBe(200);
  }, 150_000);

  test("text named .mp4 is not taken for a video", async () => {
    const form = new FormData();
    form.append("file", new File([fixture("not-video.mp4")], "not-video.mp4"));
    const res = await owner.api.form("/files/upload", form);
    expect(res.status === 415 || res.body.media_type !== "video", JSON.stringify(res.body)).toBe(true);
  });

  test("a truncated video whose header survives is analysed as far as its frames go", async () => {
    const id = await upload(owner, fixture("truncated-faststart.mp4"), "cut.mp4");
    const file = await processed(owner, id, 120_000);
    // The header says 10 s; the packets present end at 7.5 s.
    expect(file.duration_seconds).toBeCloseTo(7.5, 1);
    expect(file.analysis_status).toBe("completed");
    expect(file.analysis_error).toContain("truncated: the file holds 7.5 s of the 10 s its header declares");
    expect(file.keyframes.length).toBeGreaterThan(0);
    // Frames stop where the data does, before the header's 10 s.
    expect(file.keyframes.at(-1).time_seconds).toBeLessThan(9);
    expect(file.thumbnail_url).toStartWith("http");
  }, 150_000);

  test("a video over the duration limit is probed and stored, not analysed, and its credits go back", async () => {
    const limited = await startTestServer({ env: { MEDIABOX_VIDEO_MAX_DURATION_SECONDS: "5" } });
    defer(() => limited.close());
    const tenant = await limited.tenant({ tier: "CUSTOM" });
    const id = await upload(tenant, fixture("scenes.mp4"), "long.mp4");
    const file = await processed(tenant, id, 120_000);
    expect(file).toMatchObject({ analysis_status: "skipped", resolution: "320x240", thumbnail_url: null, description_status: "skipped" });
    expect(file.analysis_error).toContain("MEDIABOX_VIDEO_MAX_DURATION_SECONDS");
    expect(file.keyframes).toEqual([]);
    const row = (await limited.ctx.files.byId(id))!;
    expect(row.reserved_credits).toBe(0);
  }, 150_000);
});

describe("playback and purge", () => {
  test("the download and the signed video URL answer byte ranges (206) so players can seek", async () => {
    const bytes = fixture("vp9.webm");
    const id = await upload(owner, bytes, "seek.webm");
    const file = await processed(owner, id, 120_000);
    const ranged = await fetch(file.video_url, { headers: { Range: "bytes=100-199" } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("accept-ranges")).toBe("bytes");
    expect(ranged.headers.get("content-range")).toBe(`bytes 100-199/${bytes.length}`);
    expect(Buffer.from(await ranged.arrayBuffer())).toEqual(bytes.subarray(100, 200));

    const download = await owner.api.get(`/files/${id}/download`);
    const location = download.status === 302 ? download.headers.get("location")! : null;
    expect(location, `download answered ${download.status}`).toStartWith("http");
    const tail = await fetch(location!, { headers: { Range: `bytes=${bytes.length - 10}-` } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(bytes.subarray(bytes.length - 10));
  }, 150_000);

  test("purging a deleted video removes its keyframes, their blobs and vectors", async () => {
    const id = await upload(owner, fixture("hevc.mov"), "gone.mov");
    const file = await processed(owner, id, 120_000);
    const keys = (await server.ctx.sql.all<{ blob_key: string }>("SELECT blob_key FROM video_keyframes WHERE file_id = ?", [id])).map((r) => r.blob_key);
    expect(keys.length).toBe(file.keyframes.length);
    const space = (await server.ctx.spaces.all("image"))[0]!;
    expect((await space.vectorsOf([keyframeItemId(id, 0)])).size).toBe(1);
    expect((await owner.api.delete(`/files/${id}`)).status).toBe(200);
    clock.advance(31 * 24 * 3600 * 1000);
    expect(await purgeDeletedFiles(server.ctx)).toBeGreaterThanOrEqual(1);
    for (const key of keys) expect(await server.ctx.blobs.size(key)).toBeNull();
    expect((await space.vectorsOf([keyframeItemId(id, 0), id])).size).toBe(0);
    expect(await server.ctx.sql.one("SELECT count(*) AS n FROM video_keyframes WHERE file_id = ?", [id])).toEqual({ n: 0 });
  }, 150_000);
});

describe.if(existsSync(join(SHARED_VIDEOS, "truth.json")))("real clips against ffprobe truth", () => {
  const truth = existsSync(join(SHARED_VIDEOS, "truth.json")) ? JSON.parse(readFileSync(join(SHARED_VIDEOS, "truth.json"), "utf8")) : { videos: [] };
  for (const clip of truth.videos.filter((v: any) => v.ffprobe_ok)) {
    test(clip.file, async () => {
      const video = clip.streams.find((s: any) => s.type === "video");
      const id = await upload(owner, readFileSync(join(SHARED_VIDEOS, clip.file)), clip.file);
      const file = await processed(owner, id, 240_000);
      expect(file.analysis_status).toBe("completed");
      expect(file.video_codec).toBe(video.codec);
      expect(file.resolution).toBe(`${video.display_width}x${video.display_height}`);
      expect(file.duration_seconds).toBeCloseTo(clip.duration_s, 0);
      expect(file.frame_rate).toBeCloseTo(video.avg_fps, 0);
      expect(file.has_audio).toBe(clip.streams.some((s: any) => s.type === "audio"));
      expect(file.thumbnail_url).toStartWith("http");
    }, 300_000);
  }
});
