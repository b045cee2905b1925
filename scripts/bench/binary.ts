/**
 * The release binary against the checkout.
 *
 *   bun scripts/bench/binary.ts            (or: npm run bench:binary)
 *
 * Builds dist/mediabox (npm run build; MEDIABOX_BENCH_SKIP_BUILD=1 takes the one there), copies it
 * alone into a fresh directory and analyses the same 20 mixed files (13 images, 6 PDFs, a video)
 * with it and with the checkout (`bun src/main.ts`), each on a fresh data directory, the binary
 * with an empty native cache (what a newcomer's first start meets). Both servers run with the
 * default settings (the text model's vocabulary is prepared after start, as in production).
 * Prints the size of the binary by part, the start time (spawn until it listens) of each server
 * and of the binary again once its cache is warm, the wall clock and CPU seconds (the server and
 * the children it waited for) until every file is analysed, /healthz p50/p99 polled every 20 ms
 * meanwhile (a fresh server loading its models and preparing its vocabulary; target p99 < 50 ms)
 * with the server's own account of its event loop (src/native/event-loop-monitor.ts: how late it
 * ran, and its stalls split into its own code, waiting for a core and blocking calls), and last:
 *   binary: X.XXx checkout, start N.N s           (targets: X <= 1.2, start < 2 s)
 * X is the binary's wall clock over the checkout's; start is the cold binary's.
 * MEDIABOX_BENCH_BASELINE_BINARY=<another build> analyses the same files through that binary too,
 * cold, first (a before/after in one run). MEDIABOX_BENCH_LOGS=<dir> keeps each server's log there at debug level (every stall of its event
 * loop logged between what it was doing).
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { formatPartSizes, type PartSizes } from "../build-parts.ts";
import { mixedPdf, reportPdf, scannedBulletList, scannedColumnsBesideDiagram, scannedPdf, twoColumnPdf } from "../../test/support/documents.ts";
import { photo, textImage } from "../../test/support/images.ts";
import { run, spawnServer } from "../../test/support/process.ts";
import { probeHealth } from "./health-probe.ts";
import { describeEventLoop, readEventLoop } from "./event-loop-figures.ts";

const ROOT = join(import.meta.dir, "..", "..");
const MAIN = join(ROOT, "src", "main.ts");
const work = mkdtempSync(join(process.env.MEDIABOX_BENCH_DIR ?? tmpdir(), "mediabox-bench-binary-"));
/**
 * Production's settings, not the test servers' (spawnServer turns vocabulary preparation off and
 * names the built-in text model): the default text model, which is the installed bge-small when
 * models/ holds it (the binary embeds it; the checkout is pointed at models/ below).
 */
const PRODUCTION_ENV = { MEDIABOX_TEXT_VOCABULARY_WORDS: "100000", MEDIABOX_TEXT_EMBEDDING_MODEL: "" };
/** The checkout's models directory, as `npm start` would use it. */
const CHECKOUT_ENV: Record<string, string> = existsSync(join(ROOT, "models", "manifest.json")) ? { MEDIABOX_MODELS_DIR: join(ROOT, "models") } : {};

interface BenchFile {
  name: string;
  bytes: Uint8Array;
}

async function makeFiles(): Promise<BenchFile[]> {
  const files: BenchFile[] = [];
  const sizes: [number, number, "jpeg" | "png" | "webp"][] = [[2400, 1600, "jpeg"], [1600, 1200, "jpeg"], [2048, 1536, "webp"], [1200, 900, "png"]];
  for (let i = 0; i < 10; i++) {
    const [w, h, format] = sizes[i % sizes.length]!;
    files.push({ name: `photo-${i}.${format === "jpeg" ? "jpg" : format}`, bytes: await photo(i, w, h, format) });
  }
  for (let i = 0; i < 3; i++) {
    files.push({ name: `note-${i}.png`, bytes: await textImage([`Delivery note ${1000 + i}`, "Pallet 3 of 7, fragile", `Site B, bay ${i}`]) });
  }
  const pdfs = { "report.pdf": reportPdf, "scan.pdf": scannedPdf, "mixed.pdf": mixedPdf, "columns.pdf": twoColumnPdf, "diagram-scan.pdf": scannedColumnsBesideDiagram, "list-scan.pdf": scannedBulletList };
  for (const [name, make] of Object.entries(pdfs)) files.push({ name, bytes: await make() });
  files.push({ name: "scenes.mp4", bytes: readFileSync(join(ROOT, "test", "fixtures", "video", "scenes.mp4")) });
  return files;
}

/** CPU seconds of a process and of the children it has waited for (ffmpeg, the document reader). */
function cpuWithChildren(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / 100;
}

interface RunResult {
  healthP50: number;
  healthP99: number;
  /** The server's event loop meanwhile, as it reports it. */
  eventLoop: string;
  startSeconds: number;
  analysisSeconds: number;
  cpuSeconds: number;
  failed: string[];
}

/**
 * Starts `command` on a fresh data directory, analyses every file through HTTP, stops it. The
 * administrative commands (creating the org and key) run with `env`, the server with `serverEnv` too.
 */
async function analyse(label: string, command: string[], env: Record<string, string>, serverEnv: Record<string, string>, files: BenchFile[]): Promise<RunResult> {
  const dataDir = join(work, `data-${label}`);
  const cliEnv = { ...env, MEDIABOX_DATA_DIR: dataDir };
  const created = await run([...command, "orgs", "create", "bench", "--tier", "CUSTOM"], { cwd: work, env: cliEnv });
  if (created.exitCode !== 0) throw new Error(`${label}: could not create the org: ${created.stderr}`);
  const key = (await run([...command, "keys", "create", "--org", "bench"], { cwd: work, env: cliEnv })).stdout.trim();
  const headers = { authorization: `Bearer ${key}` };
  const spawned = performance.now();
  const logs = process.env.MEDIABOX_BENCH_LOGS;
  const server = await spawnServer([...command, "serve"], {
    cwd: work,
    env: { ...cliEnv, ...serverEnv, ...PRODUCTION_ENV, ...(logs ? { MEDIABOX_LOG_LEVEL: "debug" } : {}) },
    timeoutMs: 120_000,
    ...(logs ? { logTo: join(logs, `${label}.log`) } : {}),
  });
  const startSeconds = (performance.now() - spawned) / 1000;
  // /healthz from the first moment it listens until every file is analysed.
  const health = probeHealth(server.url);
  const loopBefore = await readEventLoop(server.url);
  try {
    const started = performance.now();
    const cpuBefore = cpuWithChildren(server.proc.pid);
    const ids = new Map<string, string>();
    for (const file of files) {
      const form = new FormData();
      form.append("file", new File([file.bytes as Uint8Array<ArrayBuffer>], file.name));
      const res = await fetch(`${server.url}/api/v2/files/upload`, { method: "POST", body: form, headers });
      if (res.status !== 201) throw new Error(`${label}: upload of ${file.name} answered ${res.status} ${await res.text()}`);
      ids.set(((await res.json()) as { image_id: string }).image_id, file.name);
    }
    const failed: string[] = [];
    const deadline = Date.now() + 20 * 60_000;
    for (const [id, name] of ids) {
      for (;;) {
        if (Date.now() > deadline) throw new Error(`${label}: ${name} was not analysed within 20 minutes`);
        const res = await fetch(`${server.url}/api/v2/files/uploads-status/${id}`, { headers });
        if (res.status === 429) {
          await Bun.sleep(1000 * Number(res.headers.get("retry-after") ?? 1));
          continue;
        }
        const status = (await res.json()) as { is_terminal: boolean; status?: string };
        if (status.is_terminal) {
          if (status.status === "failed") failed.push(name);
          break;
        }
        await Bun.sleep(250);
      }
    }
    const analysisSeconds = (performance.now() - started) / 1000;
    const cpuSeconds = cpuWithChildren(server.proc.pid) - cpuBefore;
    const { p50, p99 } = await health.stop();
    const eventLoop = describeEventLoop(loopBefore, await readEventLoop(server.url));
    return { startSeconds, analysisSeconds, cpuSeconds, failed, healthP50: p50, healthP99: p99, eventLoop };
  } finally {
    await health.stop();
    await server.stop("SIGTERM");
  }
}

/** Seconds from spawn until a server listens (its data directory already made), then stopped. */
async function startOnly(command: string[], env: Record<string, string>): Promise<number> {
  const spawned = performance.now();
  const server = await spawnServer([...command, "serve"], { cwd: work, env: { ...env, ...PRODUCTION_ENV }, timeoutMs: 120_000 });
  const seconds = (performance.now() - spawned) / 1000;
  await server.stop("SIGTERM");
  return seconds;
}

async function main() {
  const load = () => loadavg()[0]!.toFixed(1);
  console.log(`${cpus().length} cores, load average ${load()} at start`);
  if (!process.env.MEDIABOX_BENCH_SKIP_BUILD) {
    const build = await run([process.execPath, join(ROOT, "scripts", "build.ts")], { cwd: ROOT });
    if (build.exitCode !== 0) throw new Error(`build failed:\n${build.stdout}\n${build.stderr}`);
  }
  const sizes = JSON.parse(readFileSync(join(ROOT, "dist", "mediabox.parts.json"), "utf8")) as PartSizes;
  console.log(`dist/mediabox by part:\n${formatPartSizes(sizes)}`);

  mkdirSync(join(work, "bin"));
  const binary = join(work, "bin", "mediabox");
  copyFileSync(join(ROOT, "dist", "mediabox"), binary);
  const files = await makeFiles();
  console.log(`\n${files.length} files: 13 images, 6 PDFs, a video (${(files.reduce((n, f) => n + f.bytes.length, 0) / 1e6).toFixed(1)} MB)`);

  // The administrative commands unpack what they need into a cache of their own, so the server
  // meets an empty one.
  const serverCache = { MEDIABOX_NATIVE_CACHE: join(work, "native-cache") };
  const baselineBinary = process.env.MEDIABOX_BENCH_BASELINE_BINARY;
  const baseline: Record<string, RunResult> = {};
  if (baselineBinary) {
    const copy = join(work, "bin", "mediabox-baseline");
    copyFileSync(baselineBinary, copy);
    baseline["baseline (cold)"] = await analyse("baseline", [copy], { MEDIABOX_NATIVE_CACHE: join(work, "baseline-cache-cli") }, { MEDIABOX_NATIVE_CACHE: join(work, "baseline-cache") }, files);
    rmSync(copy);
  }
  const results = {
    ...baseline,
    "binary (cold)": await analyse("binary", [binary], { MEDIABOX_NATIVE_CACHE: join(work, "native-cache-cli") }, serverCache, files),
    checkout: await analyse("checkout", [process.execPath, MAIN], CHECKOUT_ENV, {}, files),
  };
  const binaryRun = results["binary (cold)"];
  const warmStart = await startOnly([binary], { ...serverCache, MEDIABOX_DATA_DIR: join(work, "data-binary") });

  console.log(`\n${"".padEnd(16)}${"start s".padStart(9)}${"analysis s".padStart(12)}${"CPU s".padStart(9)}${"/healthz p50 / p99 ms".padStart(24)}  failed`);
  for (const [name, r] of Object.entries(results)) {
    const health = `${r.healthP50.toFixed(1)} / ${r.healthP99.toFixed(1)}`;
    console.log(`${name.padEnd(16)}${r.startSeconds.toFixed(1).padStart(9)}${r.analysisSeconds.toFixed(1).padStart(12)}${r.cpuSeconds.toFixed(1).padStart(9)}${health.padStart(24)}  ${r.failed.join(", ") || "none"}`);
  }
  for (const [name, r] of Object.entries(results)) console.log(`${name}: the server's event loop: ${r.eventLoop}`);
  console.log(`binary, warm cache: start ${warmStart.toFixed(1)} s`);
  console.log(`cold binary: /healthz p99 ${binaryRun.healthP99.toFixed(1)} ms while it prepares its models and analyses (target < 50 ms); checkout ${results.checkout.healthP99.toFixed(1)} ms`);
  console.log(`CPU: binary ${(binaryRun.cpuSeconds / results.checkout.cpuSeconds).toFixed(2)}x checkout; load average ${load()} at the end`);
  console.log(`binary: ${(binaryRun.analysisSeconds / results.checkout.analysisSeconds).toFixed(2)}x checkout, start ${binaryRun.startSeconds.toFixed(1)} s`);
}

try {
  await main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
