/**
 * Document bombs against a real server: memory and liveness.
 *
 *   bun scripts/bench/bombs.ts          (or: npm run bench:bombs)
 *
 * Generates the four bombs of issue 13 (a DOCX of 2 million tiny paragraphs, a PDF page holding one
 * 30000 x 30000 image, a 1 MB DOCX inflating to 1 GB, a DOCX inflating to 200 MB), a normal
 * document, a 2,000-page report (real, large, must still read) and a DOCX that passes every decode
 * limit but needs more memory than a 300 MB budget (so the watchdog has to act). Each is uploaded
 * alone to a freshly started server (`src/main.ts serve` in a child process, same data directory,
 * warmed up with a few /healthz calls and one small text document so its reader child is running,
 * as on a server that has been up a while) and the script prints, per case: the outcome and its reason, the time from upload to outcome,
 * the peak RSS of the server process and of its document reader child (sampled from /proc every
 * 20 ms) and of both together, and `/healthz` latency p50/p99/max, polled every ~20 ms while the
 * case was processed. Targets: server + child peak <= 1.5 GB, /healthz p99 < 100 ms.
 * MEDIABOX_BENCH_ONLY=<substring> runs the cases whose name contains it.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from "docx";
import { residentBytes } from "../../src/documents/process-memory.ts";
import { hugeImagePdf, inflationBombDocx, paragraphBombDocx } from "../../test/support/document-bombs.ts";
import { reportDocx } from "../../test/support/documents.ts";
import { run, spawnServer, type ServerProcess } from "../../test/support/process.ts";

const MiB = 1024 * 1024;
const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const root = mkdtempSync(join(process.env.MEDIABOX_BENCH_DIR ?? tmpdir(), "mediabox-bench-bombs-"));
const dataDir = join(root, "data");
const TARGET_RSS = 1536 * MiB;
const TARGET_P99_MS = 100;

interface Case {
  name: string;
  filename: string;
  make: () => Promise<Uint8Array>;
  env?: Record<string, string>;
}

/** A 2,000-page report of ordinary density: a heading and ten ~300-character paragraphs a page, a small table every ten pages. */
async function twoThousandPageReport(): Promise<Uint8Array> {
  const words = "the pump valve was inspected and pressure readings were recorded by the crew before the quarry shift started at dawn while operators logged every gasket flange and bearing".split(" ");
  const children: (Paragraph | Table)[] = [];
  let x = 7;
  const word = () => words[(x = (x * 1103515245 + 12345) >>> 0) % words.length]!;
  for (let p = 0; p < 2000; p++) {
    children.push(new Paragraph({ text: `Section ${p + 1}: inspection records`, heading: HeadingLevel.HEADING_2 }));
    for (let i = 0; i < 10; i++) {
      const text = Array.from({ length: 50 }, word).join(" ");
      children.push(new Paragraph({ children: [new TextRun(text.slice(0, 150)), new TextRun({ text: text.slice(150, 180), bold: true }), new TextRun(text.slice(180))] }));
    }
    if (p % 10 === 0) children.push(new Table({ rows: [0, 1, 2].map((r) => new TableRow({ children: [0, 1, 2].map((c) => new TableCell({ children: [new Paragraph(`r${r}c${c}`)] })) })) }));
  }
  return Packer.toBuffer(new Document({ sections: [{ children }] }));
}

const CASES: Case[] = [
  { name: "normal document (DOCX report)", filename: "review.docx", make: reportDocx },
  { name: "DOCX of 2 million tiny paragraphs", filename: "paragraphs.docx", make: () => paragraphBombDocx(2_000_000) },
  { name: "PDF page with a 30000x30000 image", filename: "gigapixel.pdf", make: () => hugeImagePdf(30_000) },
  { name: "1 MB DOCX inflating to 1 GB", filename: "gigabyte.docx", make: () => inflationBombDocx(1024 * MiB) },
  { name: "DOCX inflating to 200 MB", filename: "inflating.docx", make: () => inflationBombDocx(200 * MiB) },
  { name: "2,000-page report (DOCX, must read)", filename: "report-2000.docx", make: twoThousandPageReport },
  {
    name: "90k-paragraph DOCX, 300 MB budget (watchdog)",
    filename: "heavy.docx",
    make: () => paragraphBombDocx(90_000),
    env: { MEDIABOX_DOCUMENT_MEMORY_MB: "300" },
  },
];

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
const mb = (bytes: number) => `${Math.round(bytes / MiB)}`;

/** The server's document reader child, if it runs (a child process whose command line names the hidden command). */
function readerChild(serverPid: number): number | null {
  try {
    const children = readFileSync(`/proc/${serverPid}/task/${serverPid}/children`, "latin1").trim().split(/\s+/).filter(Boolean).map(Number);
    for (const pid of children) {
      if (readFileSync(`/proc/${pid}/cmdline`, "latin1").includes("__document-reader")) return pid;
    }
  } catch {
    // The server or the child just exited.
  }
  return null;
}

interface Measured {
  outcome: string;
  reason: string;
  attempts: number | null;
  seconds: number;
  serverPeak: number;
  childPeak: number;
  bothPeak: number;
  health: number[];
}

async function upload(server: ServerProcess, key: string, bytes: Uint8Array, filename: string): Promise<string> {
  const form = new FormData();
  form.append("file", new File([bytes as Uint8Array<ArrayBuffer>], filename));
  const res = await fetch(`${server.url}/api/v2/files/upload`, { method: "POST", body: form, headers: { authorization: `Bearer ${key}` } });
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { image_id: string }).image_id;
}

async function terminal(server: ServerProcess, key: string, id: string): Promise<{ processing_ids: string[] }> {
  for (;;) {
    const res = await fetch(`${server.url}/api/v2/files/uploads-status/${id}`, { headers: { authorization: `Bearer ${key}` } });
    const status = (await res.json()) as { is_terminal: boolean; processing_ids: string[] };
    if (status.is_terminal) return status;
    await Bun.sleep(50);
  }
}

/**
 * A running server, as it would be when a bomb arrives: its routes have answered before and its
 * document reader child is up (one small text read).
 */
async function warmUp(server: ServerProcess, key: string): Promise<void> {
  for (let i = 0; i < 20; i++) await (await fetch(`${server.url}/healthz`)).arrayBuffer();
  await terminal(server, key, await upload(server, key, new TextEncoder().encode(`Warm-up note ${crypto.randomUUID()}
`), "warm-up.txt"));
}

async function measure(server: ServerProcess, key: string, bytes: Uint8Array, filename: string): Promise<Measured> {
  const headers = { authorization: `Bearer ${key}` };
  const serverPid = server.proc.pid;
  let serverPeak = 0;
  let childPeak = 0;
  let bothPeak = 0;
  const sampler = setInterval(() => {
    const own = residentBytes(serverPid) ?? 0;
    const pid = readerChild(serverPid);
    const child = pid ? (residentBytes(pid) ?? 0) : 0;
    serverPeak = Math.max(serverPeak, own);
    childPeak = Math.max(childPeak, child);
    bothPeak = Math.max(bothPeak, own + child);
  }, 20);
  const health: number[] = [];
  let done = false;
  const prober = (async () => {
    while (!done) {
      const started = performance.now();
      const res = await fetch(`${server.url}/healthz`);
      await res.arrayBuffer();
      health.push(performance.now() - started);
      if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
      await Bun.sleep(Math.max(0, 20 - (performance.now() - started)));
    }
  })();
  try {
    const started = performance.now();
    const id = await upload(server, key, bytes, filename);
    const status = await terminal(server, key, id);
    const seconds = (performance.now() - started) / 1000;
    const file = (await (await fetch(`${server.url}/api/v2/files/${id}/processing-status`, { headers })).json()) as {
      processing_status: string;
      text_extraction_status: string;
      error_message: string | null;
    };
    const jobId = status.processing_ids[0];
    const job = jobId ? ((await (await fetch(`${server.url}/api/v2/job/${jobId}`, { headers })).json()) as { attempts: number }) : null;
    return {
      outcome: `${file.processing_status} (text ${file.text_extraction_status})`,
      reason: file.processing_status === "failed" ? (file.error_message ?? "") : "",
      attempts: job?.attempts ?? null,
      seconds,
      serverPeak,
      childPeak,
      bothPeak,
      health,
    };
  } finally {
    done = true;
    await prober;
    clearInterval(sampler);
  }
}

async function main() {
  const only = process.env.MEDIABOX_BENCH_ONLY;
  const cases = CASES.filter((c) => !only || c.name.includes(only));
  const cli = (...args: string[]) => run([process.execPath, MAIN, ...args, "--data-dir", dataDir]);
  if ((await cli("orgs", "create", "bench", "--tier", "CUSTOM")).exitCode !== 0) throw new Error("could not create the org");
  const key = (await cli("keys", "create", "--org", "bench")).stdout.trim();
  const rows: { name: string; bytes: number; m: Measured }[] = [];
  try {
    for (const c of cases) {
      const bytes = await c.make();
      const server = await spawnServer([process.execPath, MAIN, "serve"], { env: { MEDIABOX_DATA_DIR: dataDir, MEDIABOX_LOG_LEVEL: "info", ...c.env } });
      try {
        await warmUp(server, key);
        const m = await measure(server, key, bytes, c.filename);
        rows.push({ name: c.name, bytes: bytes.length, m });
        const sorted = [...m.health].sort((a, b) => a - b);
        console.log(
          `${c.name}: ${m.outcome}, attempts ${m.attempts}, ${m.seconds.toFixed(1)} s; peak RSS server ${mb(m.serverPeak)} MB, reader ${mb(m.childPeak)} MB, both ${mb(m.bothPeak)} MB; ` +
            `/healthz p50 ${percentile(sorted, 50).toFixed(1)} ms p99 ${percentile(sorted, 99).toFixed(1)} ms max ${(sorted.at(-1) ?? 0).toFixed(1)} ms (${sorted.length} probes)` +
            (m.reason ? `\n    reason: ${m.reason}` : ""),
        );
      } finally {
        await server.stop("SIGTERM");
      }
    }
  } finally {
    if (process.env.MEDIABOX_BENCH_KEEP) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }

  console.log(`\n| case | file | outcome | time | server peak | reader peak | both | /healthz p50 / p99 / max (probes) |`);
  console.log(`|---|---|---|---|---|---|---|---|`);
  for (const { name, bytes, m } of rows) {
    const sorted = [...m.health].sort((a, b) => a - b);
    const size = bytes >= MiB ? `${(bytes / MiB).toFixed(1)} MB` : `${Math.round(bytes / 1024)} KB`;
    console.log(
      `| ${name} | ${size} | ${m.outcome}, attempts ${m.attempts} | ${m.seconds.toFixed(1)} s | ${mb(m.serverPeak)} MB | ${mb(m.childPeak)} MB | ${mb(m.bothPeak)} MB | ` +
        `${percentile(sorted, 50).toFixed(1)} / ${percentile(sorted, 99).toFixed(1)} / ${(sorted.at(-1) ?? 0).toFixed(1)} ms (${sorted.length}) |`,
    );
  }
  const worstRss = Math.max(...rows.map((r) => r.m.bothPeak));
  const worstP99 = Math.max(...rows.map((r) => percentile([...r.m.health].sort((a, b) => a - b), 99)));
  console.log(`\nworst server + reader peak ${mb(worstRss)} MB: ${worstRss <= TARGET_RSS ? "OK" : "OVER"} (target <= ${mb(TARGET_RSS)} MB)`);
  console.log(`worst /healthz p99 ${worstP99.toFixed(1)} ms: ${worstP99 < TARGET_P99_MS ? "OK" : "OVER"} (target < ${TARGET_P99_MS} ms)`);
}

await main();
