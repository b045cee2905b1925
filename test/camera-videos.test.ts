/**
 * Every camera's clips through real HTTP: AVCHD camcorder files (MPEG transport streams, H.264
 * with AC-3 sound: `.mts` with 188-byte packets, `.m2ts` with the 192-byte packets of Blu-ray
 * and AVCHD) are accepted as video and analysed; a Matroska file cut short (its header still
 * states two minutes) is flagged, its duration is what the data holds, and the description does
 * not claim the header's length. The clips are made here by the ffmpeg the server runs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { resolveFfmpegPaths } from "../src/video/ffmpeg-tools.ts";
import { processed } from "./support/polling.ts";
import { startTestServer, tempDir, type Tenant, type TestServer } from "./support/server.ts";
import { postFile } from "./support/uploads.ts";

let server: TestServer;
let owner: Tenant;
let dir: string;

/** ffmpeg writes `name` in `dir` from a test pattern with a tone; returns its bytes. */
function make(name: string, seconds: number, ...output: string[]): Buffer {
  const out = join(dir, name);
  const run = Bun.spawnSync([
    resolveFfmpegPaths().ffmpeg, "-nostdin", "-v", "error", "-y",
    "-f", "lavfi", "-i", `testsrc=size=320x240:rate=25:duration=${seconds}`,
    "-f", "lavfi", "-i", `sine=frequency=440:duration=${seconds}`,
    "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "25",
    ...output, out,
  ]);
  if (run.exitCode !== 0) throw new Error(`ffmpeg: ${run.stderr.toString()}`);
  return readFileSync(out);
}

async function upload(bytes: Uint8Array, filename: string): Promise<string> {
  const res = await postFile(owner.api, bytes, filename);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.media_type).toBe("video");
  return res.body.image_id as string;
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.tenant({ tier: "CUSTOM" });
  dir = tempDir("mediabox-camera-videos-");
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("AVCHD and other transport streams are videos", () => {
  for (const [name, packets] of [
    ["00001.MTS", []],
    ["00002.m2ts", ["-mpegts_m2ts_mode", "1"]],
  ] as const) {
    test(`${name} is probed, gets keyframes and a poster`, async () => {
      const bytes = make(name, 4, "-c:a", "ac3", "-f", "mpegts", ...packets);
      const file = await processed(owner, await upload(bytes, name), 150_000);
      expect(file).toMatchObject({ media_type: "video", video_codec: "h264", resolution: "320x240", container: "mpegts", has_audio: true, analysis_status: "completed", analysis_error: null });
      expect(file.content_type).toBe("video/mp2t");
      expect(file.duration_seconds).toBeCloseTo(4, 0);
      expect(file.keyframes.length).toBeGreaterThan(0);
      expect(file.thumbnail_url).toStartWith("http");
    }, 180_000);
  }
});

test("a Matroska file cut short is flagged: duration from the data present, and the description says so too", async () => {
  const whole = make("long.mkv", 120, "-c:a", "aac");
  // Cut to its first 3 %: the header still states 120 s (Matroska writes the duration up front).
  const cut = whole.subarray(0, Math.floor(whole.byteLength * 0.03));
  const file = await processed(owner, await upload(cut, "holiday.mkv"), 150_000);
  expect(file.analysis_status).toBe("completed");
  expect(file.duration_seconds).toBeGreaterThan(0.5);
  expect(file.duration_seconds).toBeLessThan(10);
  expect(file.analysis_error).toMatch(/^truncated: the file holds \d+(\.\d)? s of the 120 s its header declares/);
  expect(file.keyframes.length).toBeGreaterThan(0);
  expect(file.upload_description ?? "").not.toMatch(/2-minute|120-second/);
  if (file.description_status === "completed") expect(file.upload_description).toMatch(/\d-second/);
}, 180_000);
