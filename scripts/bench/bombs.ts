/**
 * Bombs against a real server: memory, liveness and stopping.
 *
 *   bun scripts/bench/bombs.ts          (or: npm run bench:bombs)
 *
 * Document bombs of issue 13 (a DOCX of 2 million tiny paragraphs, a PDF page holding one
 * 30000 x 30000 image, a 1 MB DOCX inflating to 1 GB, a DOCX inflating to 200 MB), a normal
 * document, a 2,000-page report (real, large, must still read), a DOCX that passes every decode
 * limit but needs more memory than a 300 MB budget (so the watchdog has to act); and issue 36's
 * pathological texts (test/support/pathological-texts.ts: 10 MB on one line, unclosed markup, a
 * million table rows, runs of emoji...), four 10 MB one-line texts at once, 100 MB of one word
 * (through an upload intent), and hostile link pages at the 2 MB page cap (deep nesting,
 * hundreds of thousands of links or images) served from loopback.
 *
 * Each case runs against a freshly started server (`src/main.ts serve` in a child process, same
 * data directory, warmed up with a few /healthz calls and one small text document so its reader
 * child is running, as on a server that has been up a while). Per case it prints the outcome of
 * each file and its time from upload to outcome, the peak RSS of the server, of its children
 * (document reader, ffmpeg...) and of both together (sampled from /proc every 20 ms), `/healthz`
 * latency p50/p99/max polled every ~20 ms while the case was processed, and how long the server
 * took to exit after SIGTERM. Targets: server + children peak <= 1.5 GB, /healthz max < 1 s (p99 <
 * 100 ms), the one-line 10 MB text done in < 10 s, SIGTERM within the 20 s grace period.
 *
 * The kinds added since (bomb-files.ts): camera RAWs LibRaw must develop (a DNG claiming a
 * 20000 × 20000 sensor, a CR2 whose preview JPEG declares 4.3 gigapixels), AVCHD transport
 * streams (100 MB of packet noise, three hours at one keyframe a second, 8192 × 8192 frames),
 * mail messages taken from a local Dovecot (a DOCX bomb, 2,000 attachments, multipart nested 500
 * deep, a 10 MB one-line body ingested as a document) and a watched folder receiving bombs. Every
 * reason a tenant can read (processing error, a mail part's error) is checked for absolute paths,
 * storage keys and stacks ("LEAK" in the output).
 * MEDIABOX_BENCH_ONLY=<substring>[,<substring>...] runs the cases whose name contains one of them.
 */
import type { Server } from "bun";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from "docx";
import { residentBytes } from "../../src/documents/process-memory.ts";
import { hugeImagePdf, inflationBombDocx, paragraphBombDocx } from "../../test/support/document-bombs.ts";
import { reportDocx } from "../../test/support/documents.ts";
import { oneLineText, PATHOLOGICAL_TEXTS } from "../../test/support/pathological-texts.ts";
import { run, spawnServer, type ServerProcess } from "../../test/support/process.ts";
import { startDovecot, mimeMessage, type Dovecot } from "../../test/support/dovecot.ts";
import { noise, truncatedSensorDng } from "../../test/support/photo-fixtures.ts";
import { gigapixelPreviewCr2, nestedMessage, noiseTransportStream, transportStream } from "./bomb-files.ts";
import { cpuSeconds } from "./process-stats.ts";

const MiB = 1024 * 1024;
const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const root = mkdtempSync(join(process.env.MEDIABOX_BENCH_DIR ?? tmpdir(), "mediabox-bench-bombs-"));
const dataDir = join(root, "data");
const TARGET_RSS = 1536 * MiB;
const TARGET_P99_MS = 100;
const TARGET_MAX_MS = 1000;
const TARGET_ONE_LINE_S = 10;
const GRACE_S = 20;

/**
 * Something a case puts on the server: a file's bytes (uploaded, or written into a watched
 * folder), a link's URL, or mail messages (appended to an IMAP mailbox the server then polls).
 */
type FileItem = { filename: string; bytes: Uint8Array; viaIntent?: boolean; sha256?: string; watched?: boolean };
type Item =
  | FileItem
  | { link: string }
  | { mail: string[]; ingestBody?: boolean };

interface Case {
  name: string;
  items: () => Promise<Item[]>;
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

/** Hostile pages at the default 2 MB page cap, served from loopback while the bench runs. */
const PAGE_CAP = 2 * MiB;
const repeated = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
const wrap = (body: string) => `<!DOCTYPE html><html><head><title>Hostile</title></head><body>${body}</body></html>`;
const HOSTILE_PAGES: Record<string, string> = {
  "/nested": wrap("<div>".repeat(PAGE_CAP / 5)),
  "/nested-inline": wrap("<b><i>".repeat(PAGE_CAP / 6)),
  "/links": wrap(repeated('<a href="/x">y</a> ', PAGE_CAP)),
  "/images": wrap(repeated('<img src="/i.png" alt="a">', PAGE_CAP)),
  "/one-word": wrap(`<p>${"a".repeat(PAGE_CAP)}</p>`),
};
let site: Server<unknown> | null = null;
function hostileSite(): string {
  site ??= Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (request) => {
      const page = HOSTILE_PAGES[new URL(request.url).pathname];
      return page ? new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } }) : new Response("not found", { status: 404 });
    },
  });
  return `http://127.0.0.1:${site.port}`;
}

/** A file to upload; one sent through an upload intent has its hash computed now (not while the bench's own prober waits behind it). */
const file = (filename: string, bytes: Uint8Array, viaIntent = false): FileItem =>
  viaIntent ? { filename, bytes, viaIntent, sha256: new Bun.CryptoHasher("sha256").update(bytes).digest("hex") } : { filename, bytes };

const MAIL_ENV = { MEDIABOX_MAIL_ALLOW_CIDRS: "127.0.0.1/32" };
/** The watched folder is polled often and a file taken once unchanged for 0.3 s (a bench writes it by rename: whole at once). */
const WATCH_ENV = { MEDIABOX_WATCH_POLL_MS: "200", MEDIABOX_WATCH_STABLE_MS: "300" };
const watchDir = join(root, "watched");

const CASES: Case[] = [
  { name: "normal document (DOCX report)", items: async () => [file("review.docx", await reportDocx())] },
  { name: "DOCX of 2 million tiny paragraphs", items: async () => [file("paragraphs.docx", await paragraphBombDocx(2_000_000))] },
  { name: "PDF page with a 30000x30000 image", items: async () => [file("gigapixel.pdf", await hugeImagePdf(30_000))] },
  { name: "1 MB DOCX inflating to 1 GB", items: async () => [file("gigabyte.docx", await inflationBombDocx(1024 * MiB))] },
  { name: "DOCX inflating to 200 MB", items: async () => [file("inflating.docx", await inflationBombDocx(200 * MiB))] },
  { name: "2,000-page report (DOCX, must read)", items: async () => [file("report-2000.docx", await twoThousandPageReport())] },
  {
    name: "90k-paragraph DOCX, 300 MB budget (watchdog)",
    items: async () => [file("heavy.docx", await paragraphBombDocx(90_000))],
    env: { MEDIABOX_DOCUMENT_MEMORY_MB: "300" },
  },
  ...PATHOLOGICAL_TEXTS.map((text): Case => ({ name: `text: ${text.name}`, items: async () => [file(text.filename, text.make())] })),
  { name: "four 10 MB one-line texts at once", items: async () => [1, 2, 3, 4].map((i) => file(`one-line-${i}.txt`, oneLineText())) },
  { name: "100 MB of one word (upload intent)", items: async () => [file("one-word.txt", oneLineText(100 * MiB), true)] },
  { name: "RAW: DNG claiming a 20000x20000 sensor (LibRaw)", items: async () => [file("huge-sensor.dng", truncatedSensorDng(20_000, 20_000, 25_000_000 + 4096))] },
  { name: "RAW: CR2 whose preview declares 65500x65500", items: async () => [file("gigapixel-preview.cr2", await gigapixelPreviewCr2())] },
  { name: "MTS: 100 MB of transport-stream noise", items: async () => [file("00001.MTS", noiseTransportStream(100 * MiB))] },
  { name: "MTS: 3 hours, a keyframe every second", items: async () => [file("00002.MTS", transportStream(root, "long.mts", "64x64", 3 * 3600, 1, "-g", "1"))] },
  { name: "MTS: 8192x8192 frames", items: async () => [file("00003.MTS", transportStream(root, "huge.mts", "8192x8192", 2, 1))] },
  {
    name: "mail: a 1 MB DOCX inflating to 1 GB attached",
    items: async () => [{ mail: [mimeMessage({ from: "Mallory <mallory@example.com>", subject: "bomb", text: "see attached", attachments: [{ filename: "gigabyte.docx", type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", bytes: await inflationBombDocx(1024 * MiB) }] })] }],
    env: MAIL_ENV,
  },
  {
    name: "mail: 2,000 attachments in one message",
    items: async () => [{ mail: [mimeMessage({ from: "Mallory <mallory@example.com>", subject: "many", text: "see attached", attachments: Array.from({ length: 2000 }, (_, i) => ({ filename: `note-${i}.txt`, type: "text/plain", bytes: new TextEncoder().encode(`note ${i}\n`) })) })] }],
    env: MAIL_ENV,
  },
  {
    name: "mail: a 20 MB .eml uploaded as a file (a 15 MB attachment in base64)",
    items: async () => [file("forwarded.eml", new TextEncoder().encode(mimeMessage({ from: "Mallory <mallory@example.com>", subject: "fwd", text: "see attached", attachments: [{ filename: "blob.bin", type: "application/octet-stream", bytes: noise(15 * MiB, 3) }] })))],
  },
  { name: "mail: multipart nested 500 deep", items: async () => [{ mail: [nestedMessage(500, "deep")] }], env: MAIL_ENV },
  {
    name: "mail: 10 MB one-line body ingested as a document",
    items: async () => [{ mail: [mimeMessage({ from: "Mallory <mallory@example.com>", subject: "long", text: new TextDecoder().decode(oneLineText()), attachments: [{ filename: "small.txt", type: "text/plain", bytes: new TextEncoder().encode("small\n") }] })], ingestBody: true }],
    env: MAIL_ENV,
  },
  { name: "watched folder: a 1 MB DOCX inflating to 1 GB", items: async () => [{ ...file("gigabyte.docx", await inflationBombDocx(1024 * MiB)), watched: true }], env: WATCH_ENV },
  { name: "watched folder: DNG claiming a 20000x20000 sensor", items: async () => [{ ...file("huge-sensor.dng", truncatedSensorDng(20_000, 20_000, 25_000_000 + 4096)), watched: true }], env: WATCH_ENV },
  {
    name: "hostile link pages at the 2 MB cap",
    items: async () => Object.keys(HOSTILE_PAGES).map((path) => ({ link: `${hostileSite()}${path}` })),
    env: { MEDIABOX_LINK_ALLOW_CIDRS: "127.0.0.0/8", MEDIABOX_LINK_PORTS: "any", MEDIABOX_LINK_MAX_IMAGES: "0" },
  },
];

/** What a reason a tenant reads may not show: absolute paths, storage keys or URIs, stack frames. */
const LEAK = /(^|[\s"'(=:])\/(work|tmp|home|root|usr|var|opt|srv|data)\/|orgs\/[0-9a-f-]{36}\/|file:|node_modules|\bat [\w.<>]+ \(|\.ts:\d+:\d+/i;
const countBy = (values: string[]) => values.reduce((m, v) => m.set(v, (m.get(v) ?? 0) + 1), new Map<string, number>());
let leaks = 0;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
const mb = (bytes: number) => `${Math.round(bytes / MiB)}`;

/** Every process below `pid` (children, their children...). */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const walk = (parent: number) => {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      return;
    }
    for (const task of tasks) {
      let children: number[] = [];
      try {
        children = readFileSync(`/proc/${parent}/task/${task}/children`, "latin1").trim().split(/\s+/).filter(Boolean).map(Number);
      } catch {
        // The thread ended meanwhile.
      }
      for (const child of children) {
        out.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return out;
}

interface FileOutcome {
  label: string;
  outcome: string;
  reason: string;
  attempts: number | null;
  seconds: number;
}

interface Measured {
  files: FileOutcome[];
  seconds: number;
  serverPeak: number;
  childPeak: number;
  bothPeak: number;
  health: number[];
  /** CPU time of the server's main thread (its event loop) while the case was processed. */
  mainCpuSeconds: number;
  stopSeconds: number;
}

async function api(server: ServerProcess, key: string, path: string, init: RequestInit = {}): Promise<any> {
  const res = await fetch(`${server.url}/api/v2${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers ?? {}) } });
  const body = await res.json().catch(() => null);
  if (res.status >= 400) throw new Error(`${init.method ?? "GET"} ${path} answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

/** What a case put on the server: a file to follow by id, or a refusal at intake (a mail part, a watched file) with its reason. */
type Placed = { label: string; id: string } | { label: string; id: null; outcome: string; reason: string };

let dovecot: Dovecot | null = null;
let mailboxes = 0;
const JSON_HEADERS = { "content-type": "application/json" };

/** Appends the messages to a mailbox of their own, lets an account of the organization poll it, and answers what each part became. */
async function placeMail(server: ServerProcess, key: string, item: { mail: string[]; ingestBody?: boolean }): Promise<Placed[]> {
  dovecot ??= await startDovecot();
  const mailbox = `Bench${++mailboxes}`;
  const client = await dovecot.client();
  try {
    await client.mailboxCreate(mailbox);
  } finally {
    await client.logout();
  }
  for (const raw of item.mail) await dovecot.append(raw, mailbox);
  const account = await api(server, key, "/mail-accounts", {
    method: "POST",
    headers: JSON_HEADERS,
    body: JSON.stringify({ name: mailbox, host: "127.0.0.1", port: dovecot.port, tls: "none", username: dovecot.user, password: dovecot.password, mailbox, ingest_body: item.ingestBody ?? false }),
  });
  const started = await api(server, key, `/mail-accounts/${account.id}/poll`, { method: "POST" });
  for (;;) {
    const job = await api(server, key, `/job/${started.job_id}`);
    if (!["queued", "pending", "running", "processing"].includes(job.status)) break;
    await Bun.sleep(100);
  }
  const messages = (await api(server, key, `/mail-accounts/${account.id}/messages?limit=100`)).items as { subject: string | null; status: string; error: string | null; parts: { filename: string; file_id: string; status: string; error: string | null }[] }[];
  return messages.flatMap((m): Placed[] => [
    ...(m.error || m.parts.length === 0 ? [{ label: `message "${m.subject}"`, id: null, outcome: `message ${m.status}`, reason: m.error ?? "" }] : []),
    ...m.parts.map((p): Placed => (p.status === "stored" ? { label: `mail part ${p.filename}`, id: p.file_id } : { label: `mail part ${p.filename}`, id: null, outcome: `part ${p.status}`, reason: p.error ?? "" })),
  ]);
}

/** Moves the file into the watched folder whole (a rename) and answers the file it became, or the reason it landed in failed/. */
async function placeWatched(server: ServerProcess, key: string, item: { filename: string; bytes: Uint8Array }): Promise<Placed[]> {
  const staged = join(root, `staged-${item.filename}`);
  writeFileSync(staged, item.bytes);
  renameSync(staged, join(watchDir, item.filename));
  const label = `watched ${item.filename}`;
  for (;;) {
    const listed = (await api(server, key, "/files?sort_by=created_at&sort_order=desc&limit=20")).items as { id: string; filename: string }[];
    const stored = listed.find((f) => f.filename === item.filename);
    if (stored) return [{ label, id: stored.id }];
    const failed = join(watchDir, "failed", item.filename);
    if (existsSync(`${failed}.reason.txt`)) return [{ label, id: null, outcome: "refused at intake", reason: readFileSync(`${failed}.reason.txt`, "utf8").trim() }];
    await Bun.sleep(100);
  }
}

async function put(server: ServerProcess, key: string, item: Item): Promise<Placed[]> {
  if ("mail" in item) return placeMail(server, key, item);
  if ("watched" in item && item.watched) return placeWatched(server, key, item);
  return [await upload(server, key, item)];
}

async function upload(server: ServerProcess, key: string, item: Exclude<Item, { mail: string[] }>): Promise<{ id: string; label: string }> {
  if ("link" in item) return { id: (await api(server, key, "/files/links", { method: "POST", body: JSON.stringify({ url: item.link }), headers: { "content-type": "application/json" } })).id, label: new URL(item.link).pathname };
  if (item.viaIntent) {
    const hash = item.sha256!;
    const created = await api(server, key, "/files/uploads", {
      method: "POST",
      body: JSON.stringify({ filename: item.filename, content_type: "text/plain", size_bytes: item.bytes.byteLength, claimed_file_hash: hash }),
      headers: { "content-type": "application/json" },
    });
    const res = await fetch(created.presigned_url, { method: "PUT", body: item.bytes as Uint8Array<ArrayBuffer>, headers: created.headers });
    if (!res.ok) throw new Error(`PUT of ${item.filename} answered ${res.status}`);
    const completed = await api(server, key, `/files/uploads/${created.upload_id}/complete`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    return { id: completed.file_id ?? completed.image_id, label: item.filename };
  }
  const form = new FormData();
  form.append("file", new File([item.bytes as Uint8Array<ArrayBuffer>], item.filename));
  return { id: (await api(server, key, "/files/upload", { method: "POST", body: form })).image_id, label: item.filename };
}

/** The file's outcome once processing (and a link's crawl) has ended. */
async function finished(server: ServerProcess, key: string, id: string): Promise<Omit<FileOutcome, "label" | "seconds">> {
  for (;;) {
    const status = await api(server, key, `/files/uploads-status/${id}`);
    if (status.is_terminal) {
      const detail = await api(server, key, `/files/${id}`);
      const link = detail.media_type === "link";
      if (!(link && ["pending", "crawling"].includes(detail.crawl_status))) {
        const processing = link ? detail : await api(server, key, `/files/${id}/processing-status`);
        const jobId = status.processing_ids?.[0];
        const job = jobId ? await api(server, key, `/job/${jobId}`) : null;
        const kind = link ? `crawl ${detail.crawl_status}` : `text ${processing.text_extraction_status}`;
        return {
          outcome: `${processing.processing_status} (${kind})`,
          reason: (link ? (detail.crawl_error ?? detail.processing_error) : processing.error_message) ?? "",
          attempts: job?.attempts ?? null,
        };
      }
    }
    await Bun.sleep(50);
  }
}

/**
 * A running server, as it would be when a bomb arrives: its routes have answered before and its
 * document reader child is up (one small text read).
 */
async function warmUp(server: ServerProcess, key: string): Promise<void> {
  for (let i = 0; i < 20; i++) await (await fetch(`${server.url}/healthz`)).arrayBuffer();
  const note = await upload(server, key, file("warm-up.txt", new TextEncoder().encode(`Warm-up note ${crypto.randomUUID()}\n`)));
  await finished(server, key, note.id);
}

async function measure(server: ServerProcess, key: string, items: Item[]): Promise<Omit<Measured, "stopSeconds">> {
  const serverPid = server.proc.pid;
  let serverPeak = 0;
  let childPeak = 0;
  let bothPeak = 0;
  const sampler = setInterval(() => {
    const own = residentBytes(serverPid) ?? 0;
    const children = descendants(serverPid).reduce((sum, pid) => sum + (residentBytes(pid) ?? 0), 0);
    serverPeak = Math.max(serverPeak, own);
    childPeak = Math.max(childPeak, children);
    bothPeak = Math.max(bothPeak, own + children);
  }, 20);
  const prober = new Worker(new URL("./healthz-prober.ts", import.meta.url));
  const latencies = new Promise<number[]>((resolve, reject) => {
    prober.onmessage = (event: MessageEvent<number[]>) => resolve(event.data);
    prober.onerror = (event) => reject(new Error(event.message));
  });
  prober.postMessage({ url: server.url });
  const mainCpuBefore = cpuSeconds(serverPid).main;
  let health: number[] = [];
  try {
    const started = performance.now();
    const placed = (await Promise.all(items.map((item) => put(server, key, item)))).flat();
    const follow = async (p: Placed): Promise<FileOutcome> => {
      const outcome = p.id === null ? { outcome: p.outcome, reason: p.reason, attempts: null } : await finished(server, key, p.id);
      return { label: p.label, ...outcome, seconds: (performance.now() - started) / 1000 };
    };
    // Thousands of files (a message of 2,000 attachments) are followed one after another: polling them all at once would be the load measured.
    const files: FileOutcome[] = [];
    if (placed.length > 20) for (const p of placed) files.push(await follow(p));
    else files.push(...(await Promise.all(placed.map(follow))));
    const mainCpuSeconds = cpuSeconds(serverPid).main - mainCpuBefore;
    prober.postMessage("stop");
    health = await latencies;
    return { files, seconds: (performance.now() - started) / 1000, serverPeak, childPeak, bothPeak, health, mainCpuSeconds };
  } finally {
    prober.terminate();
    clearInterval(sampler);
  }
}

async function main() {
  const only = process.env.MEDIABOX_BENCH_ONLY;
  const cases = CASES.filter((c) => !only || only.split(",").some((part) => c.name.includes(part)));
  const cli = (...args: string[]) => run([process.execPath, MAIN, ...args, "--data-dir", dataDir]);
  if ((await cli("orgs", "create", "bench", "--tier", "CUSTOM")).exitCode !== 0) throw new Error("could not create the org");
  const key = (await cli("keys", "create", "--org", "bench")).stdout.trim().split("\n")[0]!.trim();
  mkdirSync(watchDir);
  if ((await cli("watch", watchDir, "--org", "bench")).exitCode !== 0) throw new Error("could not watch the bench's folder");
  const rows: { name: string; bytes: number; m: Measured }[] = [];
  try {
    for (const c of cases) {
      const items = await c.items();
      const server = await spawnServer([process.execPath, MAIN, "serve"], { env: { MEDIABOX_DATA_DIR: dataDir, MEDIABOX_LOG_LEVEL: "info", ...c.env } });
      let m: Omit<Measured, "stopSeconds">;
      try {
        await warmUp(server, key);
        m = await measure(server, key, items);
      } catch (err) {
        server.proc.kill("SIGKILL");
        throw err;
      }
      const stopping = performance.now();
      await server.stop("SIGTERM");
      const measured: Measured = { ...m, stopSeconds: (performance.now() - stopping) / 1000 };
      const bytes = items.reduce((sum, item) => sum + ("bytes" in item ? item.bytes.byteLength : 0), 0);
      rows.push({ name: c.name, bytes, m: measured });
      const sorted = [...measured.health].sort((a, b) => a - b);
      console.log(
        `${c.name}: ${measured.seconds.toFixed(1)} s; peak RSS server ${mb(measured.serverPeak)} MB, children ${mb(measured.childPeak)} MB, both ${mb(measured.bothPeak)} MB; ` +
          `/healthz p50 ${percentile(sorted, 50).toFixed(1)} ms p99 ${percentile(sorted, 99).toFixed(1)} ms max ${(sorted.at(-1) ?? 0).toFixed(1)} ms (${sorted.length} probes); event loop CPU ${measured.mainCpuSeconds.toFixed(2)} s; stopped ${measured.stopSeconds.toFixed(1)} s after SIGTERM`,
      );
      const shown = measured.files.length > 12 ? [...measured.files.slice(0, 5), ...measured.files.filter((f, i) => i >= 5 && LEAK.test(f.reason))] : measured.files;
      for (const f of shown) console.log(`    ${f.label}: ${f.outcome}, attempts ${f.attempts}, ${f.seconds.toFixed(1)} s${f.reason ? ` (${f.reason})` : ""}${LEAK.test(f.reason) ? "  <- LEAK" : ""}`);
      if (shown.length < measured.files.length) console.log(`    ... ${measured.files.length - shown.length} more: ${[...countBy(measured.files.map((f) => f.outcome))].map(([o, n]) => `${n} ${o}`).join(", ")}`);
      leaks += measured.files.filter((f) => LEAK.test(f.reason)).length;
    }
  } finally {
    site?.stop(true);
    await dovecot?.stop();
    if (process.env.MEDIABOX_BENCH_KEEP) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }

  console.log(`\n| case | bytes | outcomes | time | server peak | children peak | both | /healthz p50 / p99 / max (probes) | event loop CPU | SIGTERM to exit |`);
  console.log(`|---|---|---|---|---|---|---|---|---|---|`);
  for (const { name, bytes, m } of rows) {
    const sorted = [...m.health].sort((a, b) => a - b);
    const size = bytes >= MiB ? `${(bytes / MiB).toFixed(1)} MB` : bytes > 0 ? `${Math.round(bytes / 1024)} KB` : "-";
    const outcomes = [...new Set(m.files.map((f) => `${f.outcome}, attempts ${f.attempts}`))].join("; ");
    console.log(
      `| ${name} | ${size} | ${outcomes} | ${m.seconds.toFixed(1)} s | ${mb(m.serverPeak)} MB | ${mb(m.childPeak)} MB | ${mb(m.bothPeak)} MB | ` +
        `${percentile(sorted, 50).toFixed(1)} / ${percentile(sorted, 99).toFixed(1)} / ${(sorted.at(-1) ?? 0).toFixed(1)} ms (${sorted.length}) | ${m.mainCpuSeconds.toFixed(2)} s | ${m.stopSeconds.toFixed(1)} s |`,
    );
  }
  const worstRss = Math.max(...rows.map((r) => r.m.bothPeak));
  const worstP99 = Math.max(...rows.map((r) => percentile([...r.m.health].sort((a, b) => a - b), 99)));
  const worstMax = Math.max(...rows.map((r) => Math.max(0, ...r.m.health)));
  const worstStop = Math.max(...rows.map((r) => r.m.stopSeconds));
  const oneLine = rows.find((r) => r.name.includes("10 MB on one line"));
  console.log(`\nworst server + children peak ${mb(worstRss)} MB: ${worstRss <= TARGET_RSS ? "OK" : "OVER"} (target <= ${mb(TARGET_RSS)} MB)`);
  console.log(`worst /healthz p99 ${worstP99.toFixed(1)} ms: ${worstP99 < TARGET_P99_MS ? "OK" : "OVER"} (target < ${TARGET_P99_MS} ms)`);
  console.log(`worst /healthz max ${worstMax.toFixed(1)} ms: ${worstMax < TARGET_MAX_MS ? "OK" : "OVER"} (target < ${TARGET_MAX_MS} ms)`);
  if (oneLine) console.log(`10 MB one-line text done in ${oneLine.m.seconds.toFixed(1)} s: ${oneLine.m.seconds < TARGET_ONE_LINE_S ? "OK" : "OVER"} (target < ${TARGET_ONE_LINE_S} s)`);
  console.log(`reasons showing a path, storage key or stack: ${leaks} ${leaks === 0 ? "OK" : "LEAK"}`);
  console.log(`slowest stop after SIGTERM ${worstStop.toFixed(1)} s: ${worstStop <= GRACE_S ? "OK" : "OVER"} (grace ${GRACE_S} s)`);
}

await main();
