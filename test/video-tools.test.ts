/**
 * The video tools on real files: the fixtures of scripts/make-video-fixtures.ts (what each holds
 * is listed there) and, when the shared development set is beside the repository
 * (../shared/datasets/video with its ffprobe truth.json), those clips too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { describeTools, resolveFfmpegPaths, VideoToolError, VideoTools } from "../src/video/ffmpeg-tools.ts";
import { choosePoster, keepSpaced, keyframesAndPoster, sampleKeyframes, selectionFor, type KeyFrame } from "../src/video/frames.ts";
import { JpegSplitter } from "../src/video/jpeg-stream.ts";
import { probeVideo, type VideoProbe } from "../src/video/probe.ts";
import { waitFor } from "./support/polling.ts";

const FIXTURES = join(import.meta.dir, "fixtures", "video");
const fixture = (name: string) => join(FIXTURES, name);
const SHARED = join(import.meta.dir, "..", "..", "shared", "datasets", "video");
const hasShared = existsSync(join(SHARED, "truth.json"));

const paths = resolveFfmpegPaths();
const tools = new VideoTools(paths);
let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "mediabox-video-test-"));
});

afterAll(async () => {
  await tools.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** The promise's rejection, which must be a VideoToolError. */
async function failure(promise: Promise<unknown>): Promise<VideoToolError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof VideoToolError) return err;
    throw err;
  }
  throw new Error("expected a VideoToolError, but the call succeeded");
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Makes a file in the scratch folder with the npm ffmpeg (lavfi sources are fine here: this is the test's own tool use). */
function makeWithFfmpeg(name: string, args: string[]): string {
  const out = join(scratch, name);
  const run = Bun.spawnSync([paths.ffmpeg, "-hide_banner", "-nostdin", "-loglevel", "error", "-y", ...args, out]);
  if (run.exitCode !== 0) throw new Error(`ffmpeg failed making ${name}: ${run.stderr.toString()}`);
  return out;
}

describe("binaries", () => {
  test("resolve to the npm packages' static builds and report their versions", async () => {
    expect(paths.ffmpeg).toEndWith("@ffmpeg-installer/linux-x64/ffmpeg");
    expect(paths.ffprobe).toEndWith("@ffprobe-installer/linux-x64/ffprobe");
    const described = await describeTools(tools);
    expect(described.ffmpeg.path).toBe(paths.ffmpeg);
    expect(described.ffmpeg.version.length).toBeGreaterThan(3);
    expect(described.ffprobe.version.length).toBeGreaterThan(3);
    expect(described.limits.memoryCap).toBe(Bun.which("prlimit") !== null);
  });

  test("an explicit path that is not there is a clear missing-binary error", () => {
    let error: unknown;
    try {
      resolveFfmpegPaths({ ffmpeg: "/nowhere/ffmpeg" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(VideoToolError);
    expect((error as VideoToolError).reason).toBe("missing-binary");
    expect((error as VideoToolError).message).toContain("/nowhere/ffmpeg");
  });

  test("a binary that disappears is a missing-binary error at run time, not a hang or an exit code", async () => {
    const gone = new VideoTools({ ffmpeg: join(scratch, "no-ffmpeg"), ffprobe: join(scratch, "no-ffprobe") });
    const error = await failure(probeVideo(gone, fixture("scenes.mp4")));
    expect(error.reason).toBe("missing-binary");
    expect(error.message).toContain("no-ffprobe");
  });
});

describe("running", () => {
  /** ffmpeg decoding the fixture in an endless loop: runs until killed. */
  const endless = ["-stream_loop", "-1", "-i", `file:${fixture("scenes.mp4")}`, "-f", "null", "-"];

  test("a run past its time limit is killed and fails as timed out", async () => {
    let pid = 0;
    const started = performance.now();
    const error = await failure(tools.run("ffmpeg", endless, { timeoutMs: 300, onSpawn: (p) => (pid = p) }));
    expect(error.reason).toBe("timeout");
    expect(error.message).toBe("ffmpeg timed out after 0.3 s");
    // Bounded by the limit plus the kill, not by the endless work (generous for a busy machine).
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(pid).toBeGreaterThan(0);
    expect(isAlive(pid)).toBe(false);
    expect(tools.running).toBe(0);
  });

  test("runs at low priority under the address-space cap; a cancelled run is killed", async () => {
    if (!Bun.which("prlimit") || !Bun.which("nice")) return; // the guards are optional; nothing to see without them
    const controller = new AbortController();
    let pid = 0;
    let settled = false;
    const running = tools.run("ffmpeg", endless, { signal: controller.signal, onSpawn: (p) => (pid = p) }).finally(() => (settled = true));
    // nice and prlimit exec into ffmpeg: the pid is ffmpeg's once the chain is through.
    const seen = await waitFor(
      () => {
        if (settled) throw new Error("ffmpeg ended before it could be looked at");
        try {
          if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "ffmpeg") return null;
          return { stat: readFileSync(`/proc/${pid}/stat`, "utf8"), limits: readFileSync(`/proc/${pid}/limits`, "utf8") };
        } catch {
          return null;
        }
      },
      { what: "ffmpeg to be running", timeoutMs: 30_000, intervalMs: 5 },
    );
    // Field 19 of /proc/PID/stat is the niceness (counting after the parenthesised command name).
    const nice = Number(seen.stat.slice(seen.stat.lastIndexOf(")") + 2).split(" ")[16]);
    expect(nice).toBe(tools.niceness);
    expect(seen.limits).toMatch(new RegExp(`Max address space\\s+${tools.memoryBytes}\\s+${tools.memoryBytes}\\s+bytes`));
    controller.abort();
    const error = await failure(running);
    expect(error.reason).toBe("cancelled");
    expect(isAlive(pid)).toBe(false);
  });

  test("close() kills what runs and refuses new runs", async () => {
    const own = new VideoTools(paths);
    let pid = 0;
    const running = own.run("ffmpeg", endless, { onSpawn: (p) => (pid = p) });
    await waitFor(() => pid > 0 && own.running === 1, { what: "ffmpeg to start" });
    await own.close();
    expect((await failure(running)).reason).toBe("cancelled");
    expect(isAlive(pid)).toBe(false);
    expect((await failure(own.run("ffprobe", ["-version"]))).reason).toBe("cancelled");
  });

  test("a memory cap too small for the decoder fails as memory", async () => {
    if (!Bun.which("prlimit")) return;
    const starved = new VideoTools(paths, { memoryBytes: 32 * 1024 * 1024 });
    const error = await failure(probeVideo(starved, fixture("scenes.mp4")));
    expect(error.reason).toBe("memory");
    expect(error.message).toContain("32 MiB");
  });

  test("stdout beyond its cap stops the process", async () => {
    const error = await failure(tools.run("ffmpeg", ["-i", `file:${fixture("scenes.mp4")}`, "-f", "rawvideo", "pipe:1"], { maxStdoutBytes: 100_000 }));
    expect(error.reason).toBe("output-too-large");
    expect(tools.running).toBe(0);
  });
});

describe("probe", () => {
  test("H.264 + AAC MP4 with a creation time", async () => {
    const probe = await probeVideo(tools, fixture("scenes.mp4"));
    expect(probe).toMatchObject({
      frameRate: 25,
      codec: "h264",
      width: 320,
      height: 240,
      rotation: 0,
      container: "mp4",
      hasAudio: true,
      audioCodec: "aac",
      createdAt: "2021-06-15T10:20:30.000Z",
      frameCount: 250,
      truncated: false,
    });
    expect(probe.durationSeconds).toBeCloseTo(10, 1);
    expect(probe.bitRate).toBeGreaterThan(50_000);
  });

  test("VP9 WebM without audio", async () => {
    const probe = await probeVideo(tools, fixture("vp9.webm"));
    expect(probe).toMatchObject({ codec: "vp9", container: "webm", width: 320, height: 240, hasAudio: false, audioCodec: null, createdAt: null, frameRate: 24 });
    expect(probe.durationSeconds).toBeCloseTo(3, 1);
    // Matroska does not count frames in its header.
    expect(probe.frameCount).toBeNull();
  });

  test("HEVC in QuickTime at 29.97 fps", async () => {
    const probe = await probeVideo(tools, fixture("hevc.mov"));
    expect(probe).toMatchObject({ codec: "hevc", container: "mov", hasAudio: true, audioCodec: "aac" });
    expect(probe.frameRate).toBeCloseTo(30000 / 1001, 3);
    expect(probe.durationSeconds).toBeCloseTo(2, 1);
  });

  test("a 90° rotation swaps the displayed width and height", async () => {
    const probe = await probeVideo(tools, fixture("rotated.mp4"));
    expect(probe).toMatchObject({ rotation: 90, width: 180, height: 320, hasAudio: false });
  });

  test("3GP from a feature phone", async () => {
    const probe = await probeVideo(tools, fixture("phone.3gp"));
    expect(probe).toMatchObject({ container: "3gp", codec: "h263", audioCodec: "amr_nb", width: 176, height: 144, frameRate: 15 });
  });

  test("an MP4 cut before its index is a clean truncated-or-corrupt error", async () => {
    const error = await failure(probeVideo(tools, fixture("truncated.mp4")));
    expect(error.reason).toBe("corrupt");
    expect(error.message).toStartWith("truncated or corrupt: ");
    expect(error.message).toContain("moov atom not found");
  });

  test("an MP4 whose index survives but whose data is cut says it is truncated, and how long the data present lasts", async () => {
    const probe = await probeVideo(tools, fixture("truncated-faststart.mp4"));
    expect(probe).toMatchObject({ truncated: true, codec: "h264", width: 320, height: 240, createdAt: "2021-06-15T10:20:30.000Z" });
    // The header's duration is what the file was meant to hold; the packets present end at 7.52 s.
    expect(probe.declaredDurationSeconds).toBeCloseTo(10, 1);
    expect(probe.durationSeconds).toBeCloseTo(7.52, 1);
  });

  test("text named .mp4 is not a video", async () => {
    const error = await failure(probeVideo(tools, fixture("not-video.mp4")));
    expect(error.reason).toBe("not-video");
    expect(error.message).toStartWith("not a video: ");
  });

  test("an audio-only file is not a video, and says why", async () => {
    const audio = makeWithFfmpeg("tone.m4a", ["-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "aac"]);
    const error = await failure(probeVideo(tools, audio));
    expect(error.reason).toBe("not-video");
    expect(error.message).toContain("no video stream (audio)");
  });

  test("a still image and an HLS playlist named .mp4 are refused, and the playlist's file is not opened", async () => {
    const png = join(scratch, "still.png");
    await sharp({ create: { width: 64, height: 48, channels: 3, background: "#336699" } }).png().toFile(png);
    expect((await failure(probeVideo(tools, png))).reason).toBe("not-video");

    const playlist = join(scratch, "playlist.mp4");
    writeFileSync(playlist, `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\nfile:${fixture("scenes.mp4")}\n#EXT-X-ENDLIST\n`);
    expect((await failure(probeVideo(tools, playlist))).reason).toBe("not-video");
    const frames = await failure(sampleKeyframes(tools, playlist, await probeVideo(tools, fixture("scenes.mp4"))));
    expect(frames.reason).toBe("corrupt");
    expect(frames.message).toContain("not on whitelist");
  });

  test("an empty file and a missing file are not videos", async () => {
    const empty = join(scratch, "empty.mp4");
    writeFileSync(empty, "");
    expect((await failure(probeVideo(tools, empty))).message).toBe("not a video: the file is empty");
    expect((await failure(probeVideo(tools, join(scratch, "absent.mp4")))).reason).toBe("not-video");
  });
});

/** Scene cuts of scenes.mp4: black → blurred pattern → SMPTE bars → sharp pattern. */
const CUTS = [1, 4, 7];

function expectSpacing(frames: KeyFrame[], minGap: number): void {
  for (let i = 1; i < frames.length; i++) {
    expect(frames[i]!.timeSeconds).toBeGreaterThan(frames[i - 1]!.timeSeconds);
    expect(frames[i]!.timeSeconds - frames[i - 1]!.timeSeconds).toBeGreaterThanOrEqual(minGap - 1e-6);
  }
}

describe("keyframes", () => {
  let scenes: VideoProbe;
  beforeAll(async () => {
    scenes = await probeVideo(tools, fixture("scenes.mp4"));
  });

  test("default caps: JPEGs in time order, at least 2 s apart; the cut 1 s in displaces the black opening", async () => {
    const frames = await sampleKeyframes(tools, fixture("scenes.mp4"), scenes);
    expect(frames.length).toBeGreaterThanOrEqual(3);
    expect(frames.length).toBeLessThanOrEqual(Math.floor(10 / 2) + 1);
    // The first frame is a fill: the cut at 1 s, less than the 2 s gap after it, takes its place.
    expect(Math.abs(frames[0]!.timeSeconds - CUTS[0]!)).toBeLessThanOrEqual(0.25);
    expectSpacing(frames, 2);
    for (const frame of frames) {
      const meta = await sharp(frame.jpeg).metadata();
      expect(meta).toMatchObject({ format: "jpeg", width: 320, height: 240 });
      expect(frame).toMatchObject({ width: 320, height: 240 });
      expect(frame.timeSeconds).toBeLessThan(10);
    }
  });

  test("a frame follows each scene cut when the gap allows", async () => {
    const frames = await sampleKeyframes(tools, fixture("scenes.mp4"), scenes, { minGapSeconds: 1 });
    expectSpacing(frames, 1);
    for (const cut of CUTS) {
      const nearest = Math.min(...frames.map((frame) => Math.abs(frame.timeSeconds - cut)));
      expect(nearest).toBeLessThanOrEqual(0.25);
    }
  });

  test("the frame cap holds, and the frames still spread over the video", async () => {
    const frames = await sampleKeyframes(tools, fixture("scenes.mp4"), scenes, { maxFrames: 3, minGapSeconds: 0.5 });
    expect(frames.length).toBeLessThanOrEqual(3);
    expect(frames.length).toBeGreaterThanOrEqual(2);
    // With 3 frames over 10 s the gap grows to 10/3 s.
    expectSpacing(frames, 10 / 3);
  });

  test("frames are scaled so the longer side fits, never enlarged", async () => {
    const small = await sampleKeyframes(tools, fixture("scenes.mp4"), scenes, { maxSide: 160 });
    expect(small[0]).toMatchObject({ width: 160, height: 120 });
    expect(await sharp(small[0]!.jpeg).metadata()).toMatchObject({ width: 160, height: 120 });
  });

  test("a rotated video's frames come out upright", async () => {
    const probe = await probeVideo(tools, fixture("rotated.mp4"));
    const frames = await sampleKeyframes(tools, fixture("rotated.mp4"), probe);
    expect(frames.length).toBeGreaterThanOrEqual(1);
    expect(await sharp(frames[0]!.jpeg).metadata()).toMatchObject({ width: 180, height: 320 });
  });

  test("every fixture format decodes", async () => {
    for (const name of ["vp9.webm", "hevc.mov", "phone.3gp"]) {
      const probe = await probeVideo(tools, fixture(name));
      const frames = await sampleKeyframes(tools, fixture(name), probe);
      expect(frames.length).toBeGreaterThanOrEqual(1);
      expect((await sharp(frames[0]!.jpeg).metadata()).format).toBe("jpeg");
    }
  });

  test("a truncated video gives the frames before the cut", async () => {
    const whole = await sampleKeyframes(tools, fixture("scenes.mp4"), scenes);
    const probe = await probeVideo(tools, fixture("truncated-faststart.mp4"));
    const frames = await sampleKeyframes(tools, fixture("truncated-faststart.mp4"), probe);
    expect(frames.length).toBeGreaterThanOrEqual(1);
    expect(frames.length).toBeLessThan(whole.length);
    expect(frames.map((f) => f.timeSeconds)).toEqual(whole.slice(0, frames.length).map((f) => f.timeSeconds));
  });

  test("a cancelled sampling rejects as cancelled", async () => {
    const controller = new AbortController();
    controller.abort();
    expect((await failure(sampleKeyframes(tools, fixture("scenes.mp4"), scenes, { signal: controller.signal }))).reason).toBe("cancelled");
  });
});

describe("keeping frames apart", () => {
  const selection = selectionFor(60, { maxFrames: 48, minGapSeconds: 2, sceneThreshold: 0.3 });

  test("the gap widens to spread the cap over a long video; fills are twice the gap", () => {
    expect(selection).toMatchObject({ gap: 2, fill: 4 });
    expect(selectionFor(960, { maxFrames: 48, minGapSeconds: 2, sceneThreshold: 0.3 })).toMatchObject({ gap: 20, fill: 40 });
    // Unknown duration: the minimum gap, and ffmpeg's own frame cap bounds the rest.
    expect(selectionFor(null, { maxFrames: 48, minGapSeconds: 2, sceneThreshold: 0.3 })).toMatchObject({ gap: 2, fill: 4 });
  });

  test("a cut displaces the fill just before it, never a cut", () => {
    const picks = [
      { timeSeconds: 0, sceneScore: 0 }, // the first frame: a fill
      { timeSeconds: 1, sceneScore: 0.9 }, // a cut 1 s later takes its place
      { timeSeconds: 5, sceneScore: 0.1 }, // a fill
      { timeSeconds: 5.5, sceneScore: 0.8 }, // a cut: replaces the fill at 5
      { timeSeconds: 6, sceneScore: 0.9 }, // too close to the cut at 5.5: dropped
      { timeSeconds: 9.5, sceneScore: 0.05 }, // a fill, 4 s on
    ];
    expect(keepSpaced(picks, selection)).toEqual([1, 3, 5]);
  });
});

describe("poster", () => {
  test("skips the black opening and the blurred shot", async () => {
    const probe = await probeVideo(tools, fixture("scenes.mp4"));
    const frames = await sampleKeyframes(tools, fixture("scenes.mp4"), probe, { minGapSeconds: 1 });
    const poster = (await choosePoster(frames))!;
    expect(poster.qualities).toHaveLength(frames.length);
    // The first frame is black, the ones in 1-4 s blurred; the poster is the earliest good one, in the SMPTE bars.
    expect(poster.qualities[0]!.verdict).toBe("black");
    frames.forEach((frame, i) => {
      if (frame.timeSeconds > 1.1 && frame.timeSeconds < 3.9) expect(poster.qualities[i]!.verdict).toBe("blurry");
    });
    expect(poster.timeSeconds).toBeGreaterThanOrEqual(4);
    expect(poster.timeSeconds).toBeLessThan(7);
    expect(poster.jpeg).toBe(frames[poster.index]!.jpeg);
    const { channels } = await sharp(poster.jpeg).stats();
    expect(channels.reduce((sum, c) => sum + c.mean, 0) / channels.length).toBeGreaterThan(40);
  });

  test("measured while ffmpeg decodes, the same choice", async () => {
    const probe = await probeVideo(tools, fixture("scenes.mp4"));
    const { frames, poster } = await keyframesAndPoster(tools, fixture("scenes.mp4"), probe, { minGapSeconds: 1 });
    const again = (await choosePoster(frames))!;
    expect(poster!.index).toBe(again.index);
    expect(poster!.qualities).toEqual(again.qualities);
    expect(poster!.timeSeconds).toBeGreaterThanOrEqual(4);
  });

  test("with no good frame, the best of the rest; with none, null", async () => {
    const flat = (grey: number) => sharp({ create: { width: 64, height: 64, channels: 3, background: { r: grey, g: grey, b: grey } } }).jpeg().toBuffer();
    const frames = [
      { timeSeconds: 0, jpeg: await flat(0), width: 64, height: 64 },
      { timeSeconds: 1, jpeg: await flat(128), width: 64, height: 64 },
    ];
    const poster = (await choosePoster(frames))!;
    expect(poster.qualities.map((q) => q.verdict)).toEqual(["black", "blank"]);
    expect([0, 1]).toContain(poster.index);
    expect(await choosePoster([])).toBeNull();
  });
});

describe("JPEG stream", () => {
  test("splits concatenated JPEGs however the bytes are chunked", async () => {
    const images = await Promise.all(
      ["#102030", "#ffffff", "#ff0000"].map((background, i) =>
        sharp({ create: { width: 40 + i * 10, height: 30, channels: 3, background } })
          .jpeg({ quality: 90 - i * 30 })
          .toBuffer(),
      ),
    );
    const stream = Buffer.concat(images);
    for (const chunkSize of [1, 7, 4096, stream.length]) {
      const splitter = new JpegSplitter();
      const out: Buffer[] = [];
      for (let i = 0; i < stream.length; i += chunkSize) out.push(...splitter.push(stream.subarray(i, i + chunkSize)));
      expect(out.map((image) => image.length)).toEqual(images.map((image) => image.length));
      expect(Buffer.concat(out).equals(stream)).toBe(true);
      expect(splitter.pending).toBe(0);
    }
  });
});

interface TruthStream {
  type: string;
  codec: string;
  display_width?: number;
  display_height?: number;
  rotation_deg?: number;
  avg_fps?: number;
  nb_frames_header?: number | null;
}
interface TruthVideo {
  file: string;
  duration_s: number;
  expected_mime: string;
  format_tags: Record<string, string>;
  streams: TruthStream[];
  has_audio: boolean;
}

const CONTAINER_OF_MIME: Record<string, string> = { "video/mp4": "mp4", "video/webm": "webm", "video/3gpp": "3gp", "video/quicktime": "mov" };

describe.skipIf(!hasShared)("shared development set (../shared/datasets/video)", () => {
  const truth: TruthVideo[] = hasShared ? (JSON.parse(readFileSync(join(SHARED, "truth.json"), "utf8")) as { videos: TruthVideo[] }).videos : [];

  for (const clip of truth) {
    test(`${clip.file} matches its ffprobe truth and yields keyframes`, async () => {
      const path = join(SHARED, clip.file);
      const probe = await probeVideo(tools, path);
      const video = clip.streams.find((s) => s.type === "video")!;
      const audio = clip.streams.find((s) => s.type === "audio");
      // ffprobe 5.1 made the truth; the static one here is 5.2: durations agree within 0.05 s (SOURCE.md).
      expect(Math.abs(probe.durationSeconds! - clip.duration_s)).toBeLessThanOrEqual(0.05);
      expect(probe.codec).toBe(video.codec);
      expect(probe.width).toBe(video.display_width!);
      expect(probe.height).toBe(video.display_height!);
      // The truth's rotation is the display matrix's (counter-clockwise); ours is clockwise.
      expect(probe.rotation).toBe((((-(video.rotation_deg ?? 0)) % 360) + 360) % 360);
      if (video.avg_fps) expect(probe.frameRate!).toBeCloseTo(video.avg_fps, 2);
      expect(probe.frameCount).toBe(video.nb_frames_header ?? null);
      expect(probe.hasAudio).toBe(clip.has_audio);
      expect(probe.audioCodec).toBe(audio?.codec ?? null);
      expect(probe.createdAt).toBe(clip.format_tags.creation_time ? new Date(clip.format_tags.creation_time).toISOString() : null);
      if (CONTAINER_OF_MIME[clip.expected_mime]) expect(probe.container).toBe(CONTAINER_OF_MIME[clip.expected_mime]!);
      expect(probe.truncated).toBe(false);

      const frames = await sampleKeyframes(tools, path, probe);
      expect(frames.length).toBeGreaterThanOrEqual(1);
      expectSpacing(frames, 2);
      const meta = await sharp(frames[0]!.jpeg).metadata();
      expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(1024);
      // Upright: a portrait display size gives portrait frames.
      expect(meta.width! >= meta.height!).toBe(probe.width >= probe.height);
      expect(await choosePoster(frames)).not.toBeNull();
    });
  }
});
