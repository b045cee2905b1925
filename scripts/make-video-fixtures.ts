/**
 * Writes the video test fixtures in test/fixtures/video/ with the npm static ffmpeg, from its
 * synthetic (lavfi) sources, so the tests know exactly what each file holds. They are committed
 * (each well under 150 KB): x264/x265/libvpx output differs between builds and thread counts,
 * and the tests should not depend on that.
 *
 *   bun scripts/make-video-fixtures.ts
 *
 *  scenes.mp4              H.264 + AAC, 320×240 25 fps, 10 s, creation_time 2021-06-15T10:20:30Z.
 *                          0-1 s black, 1-4 s blurred test pattern, 4-7 s SMPTE bars, 7-10 s sharp
 *                          test pattern: scene cuts at 1, 4 and 7 s; the poster must skip the black
 *                          and the blur. Index (moov) at the end, as ffmpeg writes by default.
 *  vp9.webm                VP9, 320×240 24 fps, 3 s, no audio.
 *  hevc.mov                HEVC (hvc1) + AAC in QuickTime, 320×240 29.97 fps, 2 s.
 *  rotated.mp4             H.264 stored 320×180, turned 90° clockwise for display: 180×320. No audio.
 *  phone.3gp               H.263 176×144 + AMR-NB 8 kHz, 2 s (a feature phone's file).
 *  truncated.mp4           The first half of scenes.mp4: its index is gone.
 *  truncated-faststart.mp4 The first half of scenes.mp4 rewritten index-first: header intact, data cut.
 *  not-video.mp4           Plain text named .mp4.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveFfmpegPaths } from "../src/video/ffmpeg-tools.ts";

const out = join(import.meta.dir, "..", "test", "fixtures", "video");
mkdirSync(out, { recursive: true });
const { ffmpeg } = resolveFfmpegPaths();

function encode(name: string, args: string[]): void {
  const run = Bun.spawnSync([ffmpeg, "-hide_banner", "-nostdin", "-loglevel", "error", "-y", ...args, join(out, name)]);
  if (run.exitCode !== 0) throw new Error(`ffmpeg failed for ${name}: ${run.stderr.toString()}`);
}

const lavfi = (graph: string) => ["-f", "lavfi", "-i", graph];
const SIZE = "s=320x240:r=25";

encode("scenes.mp4", [
  ...lavfi(`color=c=black:${SIZE}:d=1`),
  ...lavfi(`testsrc2=${SIZE}:d=3,gblur=sigma=12`),
  ...lavfi(`smptebars=${SIZE}:d=3`),
  ...lavfi(`testsrc2=${SIZE}:d=3`),
  ...lavfi("sine=frequency=440:sample_rate=22050:duration=10"),
  "-filter_complex", "[0:v][1:v][2:v][3:v]concat=n=4:v=1:a=0,format=yuv420p[v]",
  "-map", "[v]", "-map", "4:a",
  "-c:v", "libx264", "-preset", "veryfast", "-crf", "30", "-c:a", "aac", "-b:a", "32k",
  "-metadata", "creation_time=2021-06-15T10:20:30Z",
]);
encode("vp9.webm", [...lavfi("testsrc2=s=320x240:r=24:d=3"), "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "150k"]);
encode("hevc.mov", [
  ...lavfi("testsrc2=s=320x240:r=30000/1001:d=2"),
  ...lavfi("sine=frequency=660:sample_rate=22050:duration=2"),
  "-c:v", "libx265", "-preset", "ultrafast", "-crf", "32", "-x265-params", "log-level=error", "-tag:v", "hvc1",
  "-c:a", "aac", "-b:a", "32k", "-shortest",
]);
// An encode drops the rotate tag; a stream copy writes it as a display matrix. This ffmpeg 4.1
// writes the matrix of the opposite turn, so rotate=270 is read back (by ffprobe 5 and by ffmpeg
// itself) as "turn 90° clockwise", as phones that were held upright record it.
encode("rotated.tmp.mp4", [...lavfi("testsrc2=s=320x180:r=25:d=2"), "-c:v", "libx264", "-preset", "veryfast", "-crf", "32"]);
encode("rotated.mp4", ["-i", join(out, "rotated.tmp.mp4"), "-c", "copy", "-metadata:s:v:0", "rotate=270"]);
rmSync(join(out, "rotated.tmp.mp4"));
encode("phone.3gp", [
  ...lavfi("smptebars=s=176x144:r=15:d=2"),
  ...lavfi("sine=frequency=440:sample_rate=8000:duration=2"),
  "-c:v", "h263", "-b:v", "64k", "-c:a", "libopencore_amrnb", "-ar", "8000", "-ac", "1", "-b:a", "12.2k", "-shortest",
]);

const scenes = readFileSync(join(out, "scenes.mp4"));
writeFileSync(join(out, "truncated.mp4"), scenes.subarray(0, Math.floor(scenes.length / 2)));
// Rewritten with the index first (and the creation time again: a stream copy drops it), then cut.
const faststart = "faststart.tmp.mp4";
encode(faststart, ["-i", join(out, "scenes.mp4"), "-c", "copy", "-movflags", "+faststart", "-metadata", "creation_time=2021-06-15T10:20:30Z"]);
const whole = readFileSync(join(out, faststart));
writeFileSync(join(out, "truncated-faststart.mp4"), whole.subarray(0, Math.floor(whole.length / 2)));
rmSync(join(out, faststart));
writeFileSync(join(out, "not-video.mp4"), "This is a shopping list, not a video.\n- eggs\n- flour\n- milk\n");

for (const name of ["scenes.mp4", "vp9.webm", "hevc.mov", "rotated.mp4", "phone.3gp", "truncated.mp4", "truncated-faststart.mp4", "not-video.mp4"]) {
  console.log(`${name}: ${Bun.file(join(out, name)).size} bytes`);
}
