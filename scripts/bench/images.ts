/**
 * Image pipeline throughput.
 *
 *   bun scripts/bench/images.ts             (or: npm run bench:images)
 *
 * Makes 200 mixed images (JPEG/PNG/WebP photos of 1-4 MP and rendered text pages), then:
 *  1. Variants only: Mediabox's renderImage (four WebP sizes + blurhash) over all images, two at a
 *     time (the file.process queue's concurrency), against `vipsthumbnail` (libvips-tools)
 *     producing the same four WebP sizes in the same run (one process per size over all files,
 *     its fastest mode). Target: Mediabox >= 0.7x vipsthumbnail.
 *  2. Full pipeline: a real server in a child process; all images uploaded over HTTP; wall-clock
 *     images per minute until every file finished, the server's CPU seconds per image (all its
 *     threads: what a busy machine inflates least), and per-stage times from file_stage_runs.
 *     With MEDIABOX_BENCH_BASELINE=<another checkout's directory> (e.g. `git archive` of an older
 *     commit with node_modules linked in), the same images go through that checkout's server
 *     first, in the same run, and the ratios of the two are printed.
 * MEDIABOX_BENCH_IMAGES overrides the count; MEDIABOX_BENCH_SKIP_VARIANTS=1 skips part 1. The
 * machine's load average is printed at the start and end. Needs vipsthumbnail: apt-get install libvips-tools.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { Database } from "bun:sqlite";
import { DataDir } from "../../src/storage/data-dir.ts";
import { renderImage } from "../../src/images/variants.ts";
import { VARIANT_SIZES } from "../../src/files/variants.ts";
import { photo, textImage } from "../../test/support/images.ts";
import { run, spawnServer } from "../../test/support/process.ts";
import { cpuSeconds } from "./process-stats.ts";
import { probeHealth, type HealthFigures } from "./health-probe.ts";

const COUNT = Number(process.env.MEDIABOX_BENCH_IMAGES ?? 200);
const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const root = mkdtempSync(join(process.env.MEDIABOX_BENCH_DIR ?? tmpdir(), "mediabox-bench-images-"));
const inputDir = join(root, "in");
const BASELINE = process.env.MEDIABOX_BENCH_BASELINE;

const perMinute = (n: number, ms: number) => (n / ms) * 60_000;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function makeImages(): Promise<string[]> {
  mkdirSync(inputDir, { recursive: true });
  const paths: string[] = [];
  for (let i = 0; i < COUNT; i++) {
    const kind = i % 5;
    let bytes: Buffer;
    let ext: string;
    if (kind === 4) {
      bytes = await textImage([`Delivery note ${1000 + i}`, "Pallet 3 of 7, fragile", `Site B, bay ${i % 40}`]);
      ext = "png";
    } else {
      const [w, h] = [[2400, 1600], [1600, 1200], [2048, 1536], [1200, 900]][kind]!;
      const format = (["jpeg", "jpeg", "webp", "png"] as const)[kind]!;
      bytes = await photo(i, w, h, format);
      ext = format === "jpeg" ? "jpg" : format;
    }
    const path = join(inputDir, `img-${String(i).padStart(4, "0")}.${ext}`);
    await Bun.write(path, bytes);
    paths.push(path);
  }
  return paths;
}

async function mediaboxVariants(paths: string[]): Promise<number> {
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next++]!;
      await renderImage(Buffer.from(await Bun.file(path).arrayBuffer()));
    }
  };
  await Promise.all([worker(), worker()]);
  return performance.now() - started;
}

async function vipsthumbnailVariants(paths: string[]): Promise<number> {
  const out = join(root, "vips");
  mkdirSync(out, { recursive: true });
  const started = performance.now();
  for (const [type, size] of Object.entries(VARIANT_SIZES)) {
    // --size N> shrinks only (never upscales), like Mediabox; one process handles every file.
    const result = await run(["vipsthumbnail", "--size", `${size}x${size}>`, "-o", `${out}/%s_${type}.webp[Q=80]`, ...paths]);
    if (result.exitCode !== 0) throw new Error(`vipsthumbnail failed: ${result.stderr}`);
  }
  const elapsed = performance.now() - started;
  const produced = readdirSync(out).length;
  if (produced !== paths.length * 4) throw new Error(`vipsthumbnail produced ${produced} files, expected ${paths.length * 4}`);
  return elapsed;
}

interface PipelineRun {
  health: HealthFigures;
  elapsedMs: number;
  uploadedMs: number;
  cpuSeconds: number;
  dataDir: string;
}

async function fullPipeline(paths: string[], main: string, dataDir: string): Promise<PipelineRun> {
  const cli = (...args: string[]) => run([process.execPath, main, ...args, "--data-dir", dataDir]);
  if ((await cli("orgs", "create", "bench", "--tier", "CUSTOM")).exitCode !== 0) throw new Error("could not create the org");
  const key = (await cli("keys", "create", "--org", "bench")).stdout.trim();
  const server = await spawnServer([process.execPath, main, "serve"], { env: { MEDIABOX_DATA_DIR: dataDir, MEDIABOX_LOG_LEVEL: "info" } });
  const headers = { authorization: `Bearer ${key}` };
  try {
    const started = performance.now();
    const cpuBefore = cpuSeconds(server.proc.pid).total;
    const health = probeHealth(server.url);
    const ids: string[] = [];
    for (const path of paths) {
      const form = new FormData();
      form.append("file", Bun.file(path), path.split("/").at(-1)!);
      const res = await fetch(`${server.url}/api/v2/files/upload`, { method: "POST", body: form, headers });
      if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
      ids.push(((await res.json()) as { image_id: string }).image_id);
    }
    const uploadedMs = performance.now() - started;
    for (const id of ids) {
      for (;;) {
        const status = (await (await fetch(`${server.url}/api/v2/files/uploads-status/${id}`, { headers })).json()) as { is_terminal: boolean };
        if (status.is_terminal) break;
        await Bun.sleep(200);
      }
    }
    const elapsedMs = performance.now() - started;
    return { elapsedMs, uploadedMs, cpuSeconds: cpuSeconds(server.proc.pid).total - cpuBefore, dataDir, health: await health.stop() };
  } finally {
    await server.stop("SIGTERM");
  }
}

function stageReport(dataDir: string) {
  // Read as it is, without migrating: the baseline checkout's schema may be older or newer.
  const db = new Database(new DataDir(dataDir).database, { readonly: true });
  const rows = db.query("SELECT stage, status, duration_ms FROM file_stage_runs").all() as { stage: string; status: string; duration_ms: number }[];
  const failed = db.query("SELECT count(*) AS n FROM files WHERE processing_status = 'failed'").get() as { n: number };
  db.close();
  const byStage = new Map<string, { times: number[]; failed: number; skipped: number }>();
  for (const r of rows) {
    const entry = byStage.get(r.stage) ?? { times: [], failed: 0, skipped: 0 };
    if (r.status === "completed") entry.times.push(r.duration_ms);
    if (r.status === "failed") entry.failed += 1;
    if (r.status === "skipped") entry.skipped += 1;
    byStage.set(r.stage, entry);
  }
  console.log(`\nper stage (ms per image, completed runs):`);
  for (const stage of ["variants", "ocr", "embedding", "duplicates", "objects", "faces", "description", "custom_schema", "compliance"]) {
    const e = byStage.get(stage);
    if (!e) continue;
    const sorted = [...e.times].sort((a, b) => a - b);
    const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length);
    console.log(
      `  ${stage.padEnd(14)} n ${String(sorted.length).padStart(4)}   mean ${mean.toFixed(0).padStart(5)}   p50 ${percentile(sorted, 50).toFixed(0).padStart(5)}   p95 ${percentile(sorted, 95).toFixed(0).padStart(5)}   failed ${e.failed}   skipped ${e.skipped}`,
    );
  }
  if (failed.n) console.log(`  files failed: ${failed.n}`);
}

async function main() {
  if ((await run(["sh", "-c", "command -v vipsthumbnail"])).exitCode !== 0) {
    console.error("vipsthumbnail not found: apt-get install -y --no-install-recommends libvips-tools");
    process.exit(2);
  }
  console.log(`sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}); ${(await run(["vips", "--version"])).stdout.trim()}`);
  console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(" ")} at the start (2 cores)`);
  try {
    const paths = await makeImages();
    console.log(`made ${paths.length} images in ${inputDir}`);
    if (!process.env.MEDIABOX_BENCH_SKIP_VARIANTS) await variantsOnly(paths);

    const runs: { label: string; result: PipelineRun }[] = [];
    if (BASELINE) runs.push({ label: `baseline (${BASELINE})`, result: await fullPipeline(paths, join(BASELINE, "src", "main.ts"), join(root, "data-baseline")) });
    runs.push({ label: "this checkout", result: await fullPipeline(paths, MAIN, join(root, "data")) });
    console.log(`\nfull pipeline over HTTP (variants + blurhash + OCR + embedding + duplicates + objects/faces + description)`);
    for (const { label, result } of runs) {
      console.log(`\n${label}`);
      console.log(`  ${perMinute(paths.length, result.elapsedMs).toFixed(0)} images/min   (${(result.elapsedMs / 1000).toFixed(1)} s wall clock; uploads took ${(result.uploadedMs / 1000).toFixed(1)} s)`);
      console.log(`  server CPU ${(result.cpuSeconds / paths.length).toFixed(2)} s per image (${result.cpuSeconds.toFixed(1)} s in all)`);
      console.log(`  /healthz meanwhile p50 ${result.health.p50.toFixed(1)} ms, p99 ${result.health.p99.toFixed(1)} ms (${result.health.probes} probes)`);
      stageReport(result.dataDir);
    }
    if (runs.length === 2) {
      const [before, after] = [runs[0]!.result, runs[1]!.result];
      console.log(`\nthis checkout against the baseline: ${(before.elapsedMs / after.elapsedMs).toFixed(2)}x images/min, ${(after.cpuSeconds / before.cpuSeconds).toFixed(2)}x CPU per image`);
    }
    console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(" ")} at the end`);
  } finally {
    if (process.env.MEDIABOX_BENCH_KEEP) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

async function variantsOnly(paths: string[]) {
  {
    await mediaboxVariants(paths.slice(0, 5)); // warm-up
    const vips = await vipsthumbnailVariants(paths);
    const mediabox = await mediaboxVariants(paths);
    const ratio = vips / mediabox;
    console.log(`\nvariants only (4 WebP sizes per image, ${paths.length} images)`);
    console.log(`  vipsthumbnail (baseline)   ${perMinute(paths.length, vips).toFixed(0).padStart(6)} images/min   (${(vips / 1000).toFixed(1)} s)`);
    console.log(`  mediabox renderImage       ${perMinute(paths.length, mediabox).toFixed(0).padStart(6)} images/min   (${(mediabox / 1000).toFixed(1)} s, incl. blurhash)`);
    console.log(`  ratio ${ratio.toFixed(2)}x vipsthumbnail   ${ratio >= 0.7 ? "OK (target >= 0.7x)" : "BELOW TARGET (0.7x)"}`);
  }
}

await main();
