/**
 * Listing latency at scale.
 *
 *   bun scripts/bench/library.ts            (or: npm run bench:library)
 *
 * Seeds 100,000 file rows (synthetic metadata, no blobs) for one organization, starts a real
 * server in a child process and prints p50/p95 latency of GET /files over HTTP for: no filter, a
 * tag filter, a full-text search, and sort by title at offset 50,000. As a baseline measured in
 * the same run, it also times GET /healthz (the HTTP round trip with no database work).
 * Target: p95 under 50 ms for each listing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/database.ts";
import { DataDir } from "../../src/storage/data-dir.ts";
import { seedFiles } from "./seed-files.ts";
import { run, spawnServer } from "../../test/support/process.ts";

const FILES = Number(process.env.MEDIABOX_BENCH_FILES ?? 100_000);
const ROUNDS = 200;
const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const root = mkdtempSync(join(process.env.MEDIABOX_BENCH_DIR ?? tmpdir(), "mediabox-bench-library-"));
const dataDir = join(root, "data");

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function measure(url: string, headers: Record<string, string>): Promise<{ p50: number; p95: number; total: number | null }> {
  let total: number | null = null;
  for (let i = 0; i < 10; i++) await (await fetch(url, { headers })).text(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    const res = await fetch(url, { headers });
    const body = await res.text();
    times.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${body}`);
    if (i === 0 && body.startsWith("{")) total = (JSON.parse(body) as { total_count?: number }).total_count ?? null;
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95), total };
}

async function main(): Promise<void> {
  const cli = (...args: string[]) => run([process.execPath, MAIN, ...args, "--data-dir", dataDir]);
  if ((await cli("orgs", "create", "bench", "--tier", "CUSTOM")).exitCode !== 0) throw new Error("could not create the org");
  const key = (await cli("keys", "create", "--org", "bench")).stdout.trim();
  const db = openDatabase(new DataDir(dataDir).database);
  const orgId = (db.query("SELECT id FROM organizations WHERE name = 'bench'").get() as { id: string }).id;
  db.close();
  const seedStarted = performance.now();
  seedFiles(new DataDir(dataDir).database, orgId, FILES);
  console.log(`seeded ${FILES} files in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

  const server = await spawnServer([process.execPath, MAIN, "serve"], { env: { MEDIABOX_DATA_DIR: dataDir, MEDIABOX_LOG_LEVEL: "info" } });
  const headers = { authorization: `Bearer ${key}` };
  try {
    const cases: [string, string][] = [
      ["baseline: GET /healthz (no database)", `${server.url}/healthz`],
      ["GET /files (no filter)", `${server.url}/api/v2/files`],
      ["GET /files?tags=urgent", `${server.url}/api/v2/files?tags=urgent`],
      ["GET /files?tags=urgent&tags=north", `${server.url}/api/v2/files?tags=urgent&tags=north`],
      ["GET /files?tags=rare", `${server.url}/api/v2/files?tags=rare`],
      ["GET /files?search=harbor crane", `${server.url}/api/v2/files?search=harbor%20crane`],
      ["GET /files?sort_by=title&offset=50000", `${server.url}/api/v2/files?sort_by=title&sort_order=asc&offset=50000`],
    ];
    console.log(`\nGET /files latency over HTTP, ${FILES} files, ${ROUNDS} requests each (target p95 < 50 ms)`);
    for (const [name, url] of cases) {
      const { p50, p95, total } = await measure(url, headers);
      const verdict = name.startsWith("baseline") ? "" : p95 < 50 ? "OK" : "ABOVE TARGET";
      console.log(
        `${name.padEnd(42)} p50 ${p50.toFixed(1).padStart(6)} ms   p95 ${p95.toFixed(1).padStart(6)} ms${total !== null ? `   (${total} matches)` : ""}   ${verdict}`,
      );
    }
  } finally {
    await server.stop("SIGTERM");
    if (process.env.MEDIABOX_BENCH_KEEP) console.log(`kept ${dataDir}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

await main();
