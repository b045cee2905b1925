/**
 * Video analysis throughput: Mediabox's probe + keyframes + poster against the plain CLI doing
 * the same work.
 *
 *   bun scripts/bench/video.ts             (or: npm run bench:video)
 *
 * Clips: the test fixtures, two generated longer ones (720p 40 s and 1080p 15 s, H.264 with
 * scene cuts; made at start, removed at the end) and ../shared/datasets/video when present.
 * For each clip:
 *  - ours: probeVideo, then keyframesAndPoster (sampleKeyframes with default caps, choosePoster),
 *    through VideoTools as the server runs them (niceness 10, address-space cap);
 *  - CLI: `ffprobe -show_format -show_streams` and one `ffmpeg` run extracting the same number of
 *    frames at the same timestamps (select by time, same scale and JPEG settings), as a person
 *    would script it knowing the timestamps in advance. It runs at the same niceness as ours, so
 *    other load on the machine slows both alike.
 * Each side runs once to warm the page cache, then alternately at least three times (up to nine
 * for short clips, until a side has run 0.6 s); the median counts.
 * Also: how many keyframes the OCR stage reads (blank frames and look-alikes of the last one read
 * are not; src/video/frame-likeness.ts).
 * Figures: seconds of video analysed per second of wall-clock time and per CPU second (the
 * children's user+system time from /proc/self/stat, plus this process's own for ours: the poster
 * is measured here), and ours / CLI (target >= 0.8x). About a minute and a half on two cores.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveFfmpegPaths, VideoTools } from "../../src/video/ffmpeg-tools.ts";
import { frameSize, keyframesAndPoster, type KeyFrame } from "../../src/video/frames.ts";
import { frameSignature, readingPlan } from "../../src/video/frame-likeness.ts";
import { probeVideo } from "../../src/video/probe.ts";

const ROOT = join(import.meta.dir, "..", "..");
const FIXTURES = join(ROOT, "test", "fixtures", "video");
const SHARED = join(ROOT, "..", "shared", "datasets", "video");
/** Runs per side: at least MIN_RUNS, more for short clips until a side has run MIN_SECONDS (at most MAX_RUNS). */
const MIN_RUNS = 3;
const MAX_RUNS = 9;
const MIN_SECONDS = 0.6;
/** Clock ticks per second of /proc times (getconf CLK_TCK; 100 on Linux). */
const CLOCK_TICKS = 100;

const paths = resolveFfmpegPaths();
const tools = new VideoTools(paths);
const scratch = mkdtempSync(join(tmpdir(), "mediabox-bench-video-"));

function generate(name: string, size: string, seconds: number): string {
  const out = join(scratch, name);
  const shot = seconds / 4;
  const sources = [`testsrc2=s=${size}:r=30:d=${shot}`, `smptebars=s=${size}:r=30:d=${shot}`, `testsrc=s=${size}:r=30:d=${shot}`, `rgbtestsrc=s=${size}:r=30:d=${shot}`];
  const run = Bun.spawnSync([
    paths.ffmpeg, "-hide_banner", "-nostdin", "-loglevel", "error", "-y",
    ...sources.flatMap((source) => ["-f", "lavfi", "-i", source]),
    "-filter_complex", "[0:v][1:v][2:v][3:v]concat=n=4:v=1:a=0,format=yuv420p[v]", "-map", "[v]",
    "-c:v", "libx264", "-preset", "veryfast", "-crf", "26", out,
  ]);
  if (run.exitCode !== 0) throw new Error(`could not generate ${name}: ${run.stderr.toString()}`);
  return out;
}

/** CPU seconds used so far by this process's waited-for children (cutime + cstime). */
function childrenCpuSeconds(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
}

/** Wall-clock and CPU seconds of `work`, children included. */
async function timed(work: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const start = performance.now();
  const children = childrenCpuSeconds();
  const own = process.cpuUsage();
  await work();
  const ownUsed = process.cpuUsage(own);
  return { wall: (performance.now() - start) / 1000, cpu: childrenCpuSeconds() - children + (ownUsed.user + ownUsed.system) / 1e6 };
}

async function ours(path: string): Promise<{ times: number[]; size: { width: number; height: number }; duration: number; frames: KeyFrame[] }> {
  const probe = await probeVideo(tools, path);
  const { frames } = await keyframesAndPoster(tools, path, probe);
  return { times: frames.map((f) => f.timeSeconds), size: frameSize(probe, 1024), duration: probe.durationSeconds ?? 0, frames };
}

/** The same niceness as ours (no address-space cap: that costs nothing but a setrlimit). */
const niced = (cmd: string[]) => (tools.nicePath ? [tools.nicePath, "-n", String(tools.niceness), ...cmd] : cmd);

async function cli(path: string, times: number[], size: { width: number; height: number }): Promise<number> {
  const probe = Bun.spawn(niced([paths.ffprobe, "-v", "error", "-print_format", "json", "-show_format", "-show_streams", path]), { stdout: "pipe", stderr: "pipe" });
  const probed = JSON.parse(await new Response(probe.stdout).text()) as { streams: unknown[] };
  if ((await probe.exited) !== 0 || !probed.streams.length) throw new Error(`ffprobe failed on ${path}`);
  const select = times.map((t) => `lt(abs(t-${t}),0.0005)`).join("+");
  const extract = Bun.spawn(
    niced([
      paths.ffmpeg, "-nostdin", "-hide_banner", "-v", "error", "-i", path, "-map", "0:v:0", "-an",
      "-vf", `select='${select}',scale=${size.width}:${size.height},setsar=1,format=yuvj420p`,
      "-vsync", "0", "-f", "image2pipe", "-c:v", "mjpeg", "-q:v", "3", "pipe:1",
    ]),
    { stdout: "pipe", stderr: "pipe" },
  );
  const bytes = new Uint8Array(await new Response(extract.stdout).arrayBuffer());
  if ((await extract.exited) !== 0) throw new Error(`ffmpeg failed on ${path}: ${await new Response(extract.stderr).text()}`);
  // Count JPEG starts (FF D8 FF) to check the CLI extracted as many frames as we did.
  let count = 0;
  for (let i = 0; i + 2 < bytes.length; i++) if (bytes[i] === 0xff && bytes[i + 1] === 0xd8 && bytes[i + 2] === 0xff) count++;
  return count;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  console.log("generating the long clips…");
  const clips = [
    ...["scenes.mp4", "vp9.webm", "hevc.mov", "rotated.mp4", "phone.3gp"].map((name) => join(FIXTURES, name)),
    generate("synthetic-720p-40s.mp4", "1280x720", 40),
    generate("synthetic-1080p-15s.mp4", "1920x1080", 15),
  ];
  if (existsSync(SHARED)) {
    for (const name of readdirSync(SHARED).sort()) if (/\.(mp4|webm|3gp|mov|mkv)$/.test(name)) clips.push(join(SHARED, name));
  } else {
    console.log(`(${SHARED} not present: fixtures and generated clips only)`);
  }

  const header = ["clip", "video s", "frames", "OCR reads", "ours s", "CLI s", "ours x", "CLI x", "ours/CLI", "ours cpu s", "CLI cpu s", "cpu ours/CLI"];
  const rows: string[][] = [header];
  const total = { video: 0, ours: 0, cli: 0, oursCpu: 0, cliCpu: 0, frames: 0, reads: 0, blank: 0 };
  const row = (name: string, video: number, frames: string, reads: string, o: { wall: number; cpu: number }, c: { wall: number; cpu: number }) => [
    name, video.toFixed(1), frames, reads, o.wall.toFixed(3), c.wall.toFixed(3), (video / o.wall).toFixed(1), (video / c.wall).toFixed(1),
    (c.wall / o.wall).toFixed(2), o.cpu.toFixed(2), c.cpu.toFixed(2), (c.cpu / o.cpu).toFixed(2),
  ];
  for (const path of clips) {
    const warm = await ours(path);
    // Which keyframes the OCR stage reads (blank ones and look-alikes of the last one read are not).
    const plan = readingPlan(await Promise.all(warm.frames.map((frame) => frameSignature(frame.jpeg))));
    const reads = plan.filter((step) => step.kind === "read").length;
    total.frames += plan.length;
    total.reads += reads;
    total.blank += plan.filter((step) => step.kind === "blank").length;
    const cliFrames = await cli(path, warm.times, warm.size);
    if (cliFrames !== warm.times.length) console.warn(`${path}: the CLI extracted ${cliFrames} frames, ours ${warm.times.length}`);
    const oursRuns: { wall: number; cpu: number }[] = [];
    const cliRuns: { wall: number; cpu: number }[] = [];
    const spent = (runs: { wall: number }[]) => runs.reduce((sum, run) => sum + run.wall, 0);
    while (oursRuns.length < MIN_RUNS || (oursRuns.length < MAX_RUNS && Math.min(spent(oursRuns), spent(cliRuns)) < MIN_SECONDS)) {
      oursRuns.push(await timed(() => ours(path)));
      cliRuns.push(await timed(() => cli(path, warm.times, warm.size)));
    }
    const o = { wall: median(oursRuns.map((r) => r.wall)), cpu: median(oursRuns.map((r) => r.cpu)) };
    const c = { wall: median(cliRuns.map((r) => r.wall)), cpu: median(cliRuns.map((r) => r.cpu)) };
    total.video += warm.duration;
    total.ours += o.wall;
    total.cli += c.wall;
    total.oursCpu += o.cpu;
    total.cliCpu += c.cpu;
    rows.push(row(path.split("/").pop()!, warm.duration, String(warm.times.length), String(reads), o, c));
  }
  rows.push(row("TOTAL", total.video, String(total.frames), String(total.reads), { wall: total.ours, cpu: total.oursCpu }, { wall: total.cli, cpu: total.cliCpu }));

  const widths = header.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  for (const r of rows) console.log(r.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!))).join("  "));
  console.log(
    `\nseconds of video analysed per wall-clock second: ours ${(total.video / total.ours).toFixed(1)}, CLI ${(total.video / total.cli).toFixed(1)}; ` +
      `ours = ${(total.cli / total.ours).toFixed(2)}x the CLI (target >= 0.8x); per CPU second: ours = ${(total.cliCpu / total.oursCpu).toFixed(2)}x`,
  );
  console.log(`machine load (1/5/15 min): ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")} on ${navigator.hardwareConcurrency} cores`);
  console.log("ours also detects scene cuts and chooses the poster; the CLI is given the timestamps.");
  console.log(`OCR reads ${total.reads} of ${total.frames} keyframes (${total.blank} blank, ${total.frames - total.reads - total.blank} like the frame read before them); each read costs ~0.3 s of tesseract.`);
}

try {
  await main();
} finally {
  await tools.close();
  rmSync(scratch, { recursive: true, force: true });
}
