/**
 * A/B comparison of the streaming upload between two checkouts of Mediabox, in the same run.
 *
 *   bun scripts/bench/upload-ab.ts <checkout A> <checkout B> [rounds=10] [MiB=100]
 *   AB_MODE=intent bun scripts/bench/upload-ab.ts <checkout A> <checkout B> [rounds=4] [MiB=1024]
 *
 * AB_MODE=intent sends the file as a multipart upload intent instead (64 MiB parts PUT by two
 * workers to the presigned URLs, confirmed, then completed), as the upload bench does.
 * Starts one server per checkout (each on its own data directory on the same disk), then sends the
 * same file with curl to A and B alternately (ABBA order, so neither always goes first), and prints
 * per side the medians (and ranges) of MB/s, the server's CPU seconds in all threads and on the
 * request thread, and the peak RSS growth. The machine is shared: compare sides of one run, never
 * figures of different runs. Set MEDIABOX_BENCH_DIR to use another disk.
 */
import { intentUpload, makeVideoFile } from "./upload-support.ts";
import { cpuSeconds, rssBytes, threadCpuSeconds } from "./process-stats.ts";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { run, spawnServer, type ServerProcess } from "../../test/support/process.ts";

const MiB = 1024 * 1024;
const checkoutA = resolve(process.argv[2] ?? ".");
const checkoutB = resolve(process.argv[3] ?? ".");
const intentMode = process.env.AB_MODE === "intent";
const rounds = Number(process.argv[4] ?? (intentMode ? 4 : 10));
const size = intentMode ? Number(process.argv[5] ?? 1024) * MiB : Number(process.argv[5] ?? 100) * MiB - 64 * 1024;
const root = mkdtempSync(join(process.env.MEDIABOX_BENCH_DIR ?? tmpdir(), "mediabox-ab-"));

interface Side {
  name: string;
  server: ServerProcess;
  key: string;
  url: string;
  baseline: number;
  runs: { mbps: number; total: number; main: number; growth: number }[];
  threads: Map<string, number[]>;
}

async function start(name: string, checkout: string): Promise<Side> {
  const dataDir = join(root, name);
  const main = join(checkout, "src", "main.ts");
  const cli = (...args: string[]) => run([process.execPath, main, ...args, "--data-dir", dataDir]);
  if ((await cli("orgs", "create", "bench", "--tier", "ENTERPRISE")).exitCode !== 0) throw new Error(`${name}: could not create the org`);
  const key = (await cli("keys", "create", "--org", "bench")).stdout.trim();
  const server = await spawnServer([process.execPath, main, "serve"], { cwd: checkout, env: { MEDIABOX_DATA_DIR: dataDir, MEDIABOX_LOG_LEVEL: "info" } });
  return { name, server, key, url: `${server.url}/api/v2/files/upload`, baseline: 0, runs: [], threads: new Map() };
}

async function upload(side: Side, path: string, round: number): Promise<void> {
  const pid = side.server.proc.pid;
  let peak = rssBytes(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 10);
  const cpu0 = cpuSeconds(pid);
  const threads0 = threadCpuSeconds(pid);
  const started = performance.now();
  if (intentMode) await sideIntentUpload(side, path, round);
  else {
    const result = await run(["curl", "-sS", "-w", "\n%{http_code}", "-H", `authorization: Bearer ${side.key}`, "-F", `file=@${path};type=video/mp4;filename=r${round}.mp4`, side.url]);
    if (!result.stdout.endsWith("201")) throw new Error(`${side.name}: upload failed: ${result.stdout.slice(-300)} ${result.stderr}`);
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, rssBytes(pid));
  for (const [name, value] of threadCpuSeconds(pid)) {
    const list = side.threads.get(name) ?? [];
    list.push(value - (threads0.get(name) ?? 0));
    side.threads.set(name, list);
  }
  if (process.env.AB_VERBOSE) console.log(side.name, (size / 1e6 / seconds).toFixed(0), "MB/s");
  side.runs.push({
    mbps: size / 1e6 / seconds,
    total: cpuSeconds(pid).total - cpu0.total,
    main: cpuSeconds(pid).main - cpu0.main,
    growth: (peak - side.baseline) / MiB,
  });
}

/** The upload bench's intent (intent-upload.ts) against one side. */
async function sideIntentUpload(side: Side, path: string, round: number): Promise<void> {
  const api = side.url.replace(/\/files\/upload$/, "");
  await intentUpload(api, side.key, path, { size, sha256: fileHash, filename: `r${round}.mp4` }).catch((err: Error) => {
    throw new Error(`${side.name}: ${err.message}`);
  });
}

let fileHash = "";

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const range = (values: number[], digits: number) => `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)})`;

const sides: Side[] = [];
try {
  sides.push(await start("A", checkoutA));
  sides.push(await start("B", checkoutB));
  const file = join(root, "upload.mp4");
  fileHash = await makeVideoFile(file, size);
  for (const side of sides) {
    if (intentMode) await sideIntentUpload(side, file, -1);
    else await run(["curl", "-sS", "-o", "/dev/null", "-H", `authorization: Bearer ${side.key}`, "-F", `file=@${file};type=video/mp4;filename=warm.mp4`, side.url]);
  }
  await Bun.sleep(1000);
  for (const side of sides) side.baseline = rssBytes(side.server.proc.pid);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) await upload(side, file, round);
  }
  console.log(`${rounds} ${intentMode ? "intents" : "uploads"} of ${(size / MiB).toFixed(2)} MiB each; A = ${checkoutA}, B = ${checkoutB}; load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
  for (const side of sides) {
    const r = side.runs;
    console.log(
      `${side.name}: ${range(r.map((x) => x.mbps), 0)} MB/s   CPU all threads ${range(r.map((x) => x.total), 2)} s   request thread ${range(r.map((x) => x.main), 2)} s   RSS growth ${range(r.map((x) => x.growth), 1)} MiB`,
    );
    if (process.env.AB_VERBOSE) {
      const busy = [...side.threads].filter(([, v]) => median(v) > 0 || Math.max(...v) > 0.02);
      console.log(`   per thread (median s): ${busy.map(([n, v]) => `${n} ${median(v).toFixed(2)}`).join(", ")}`);
    }
  }
} finally {
  for (const side of sides) await side.server.stop("SIGTERM");
  rmSync(root, { recursive: true, force: true });
}
