/**
 * First load of the dashboard's library page in a real browser (Debian's chromium through
 * playwright-core), with a large library and, as the baseline in the same run, an empty one.
 *
 *   bun scripts/bench/dashboard.ts            (or: npm run bench:dashboard)
 *
 * Seeds MEDIABOX_BENCH_FILES (default 10,000) file rows for one organization, starts a real
 * server in a child process, and times, in a fresh browser context each round (nothing cached),
 * from navigation to the first screen of cards and the count.
 * Target: under 1 s with 10,000 files.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { openDatabase } from "../../src/db/database.ts";
import { DataDir } from "../../src/storage/data-dir.ts";
import { run, spawnServer } from "../../test/support/process.ts";
import { seedFiles } from "./seed-files.ts";

const FILES = Number(process.env.MEDIABOX_BENCH_FILES ?? 10_000);
const ROUNDS = 7;
const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const root = mkdtempSync(join(tmpdir(), "mediabox-bench-dashboard-"));
const dataDir = join(root, "data");
const cli = (...args: string[]) => run([process.execPath, MAIN, ...args, "--data-dir", dataDir]);

async function organization(name: string, files: number): Promise<string> {
  if ((await cli("orgs", "create", name, "--tier", "CUSTOM")).exitCode !== 0) throw new Error(`could not create ${name}`);
  const key = (await cli("keys", "create", "--org", name)).stdout.trim();
  const db = openDatabase(new DataDir(dataDir).database);
  const orgId = (db.query("SELECT id FROM organizations WHERE name = ?").get(name) as { id: string }).id;
  db.close();
  if (files) seedFiles(new DataDir(dataDir).database, orgId, files);
  return key;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const bigKey = await organization("big", FILES);
  const emptyKey = await organization("empty", 0);
  const server = await spawnServer([process.execPath, MAIN, "serve"], { env: { MEDIABOX_DATA_DIR: dataDir, MEDIABOX_LOG_LEVEL: "info" } });
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const firstLoad = async (key: string, expected: string): Promise<number> => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await context.addInitScript((k) => sessionStorage.setItem("mediabox.apiKey", k), key);
      const page = await context.newPage();
      const started = performance.now();
      await page.goto(server.url);
      await page.getByText(expected, { exact: true }).waitFor({ timeout: 60_000 });
      if (expected !== "0 files") await page.locator(".grid li").nth(14).waitFor({ timeout: 60_000 });
      const elapsed = performance.now() - started;
      await context.close();
      return elapsed;
    };
    // One unmeasured load each: the server bundles the dashboard on its first request.
    await firstLoad(emptyKey, "0 files");
    await firstLoad(bigKey, `${FILES} files`);
    const empty: number[] = [];
    const big: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      empty.push(await firstLoad(emptyKey, "0 files"));
      big.push(await firstLoad(bigKey, `${FILES} files`));
    }
    const bigMs = median(big);
    const emptyMs = median(empty);
    console.log(`dashboard first load (fresh browser context, navigation to the first screen of cards), median of ${ROUNDS}:`);
    console.log(`  empty library (baseline)  ${emptyMs.toFixed(0).padStart(5)} ms`);
    console.log(`  ${String(FILES).padEnd(6)} files             ${bigMs.toFixed(0).padStart(5)} ms   ${(bigMs / emptyMs).toFixed(2)}x the empty library   ${bigMs < 1000 ? "OK (< 1 s)" : "ABOVE TARGET (1 s)"}`);
  } finally {
    await browser.close();
    await server.stop("SIGTERM");
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
