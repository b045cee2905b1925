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
 *
 * Then the Photos timeline with MEDIABOX_BENCH_PHOTOS (default 50,000) photos over ten years
 * against an organization without photos: navigation to the first month's header and its first
 * screen of pictures (target: under 1.5 s), then, in that page, a scroll through the timeline (a
 * screen per animation frame, 60 frames: frame times) and a jump from the scrubber to the oldest
 * year (until its pictures are in the page).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { openDatabase } from "../../src/db/database.ts";
import { DataDir } from "../../src/storage/data-dir.ts";
import { run, spawnServer } from "../../test/support/process.ts";
import { seedFiles, seedPhotos } from "./seed-files.ts";

const FILES = Number(process.env.MEDIABOX_BENCH_FILES ?? 10_000);
const PHOTOS = Number(process.env.MEDIABOX_BENCH_PHOTOS ?? 50_000);
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
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

async function main(): Promise<void> {
  const bigKey = await organization("big", FILES);
  const emptyKey = await organization("empty", 0);
  const photosKey = await organization("photos", 0);
  const photosOrg = (() => {
    const db = openDatabase(new DataDir(dataDir).database);
    const id = (db.query("SELECT id FROM organizations WHERE name = 'photos'").get() as { id: string }).id;
    db.close();
    return id;
  })();
  const seeding = performance.now();
  seedPhotos(new DataDir(dataDir).database, photosOrg, PHOTOS);
  console.log(`seeded ${PHOTOS} photos in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);
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
    await photosBench(browser, server.url, photosKey, emptyKey);
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

type Browser = Awaited<ReturnType<typeof chromium.launch>>;

/** The Photos page: first paint with many photos against none, then scrolling and a scrubber jump. */
async function photosBench(browser: Browser, url: string, photosKey: string, emptyKey: string): Promise<void> {
  const open = async (key: string) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript((k) => sessionStorage.setItem("mediabox.apiKey", k), key);
    return { context, page: await context.newPage() };
  };
  const firstPaint = async (key: string, keep = false) => {
    const { context, page } = await open(key);
    const started = performance.now();
    await page.goto(`${url}/#/photos`);
    if (key === emptyKey) await page.getByText("No photo has a date yet.").waitFor({ timeout: 60_000 });
    else {
      await page.locator("h2.month-title").first().waitFor({ timeout: 60_000 });
      await page.locator(".photo-grid li").nth(23).waitFor({ timeout: 60_000 });
    }
    const elapsed = performance.now() - started;
    if (!keep) await context.close();
    return { elapsed, context, page };
  };
  await firstPaint(emptyKey);
  await firstPaint(photosKey);
  const none: number[] = [];
  const many: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    none.push((await firstPaint(emptyKey)).elapsed);
    many.push((await firstPaint(photosKey)).elapsed);
  }
  const { context, page } = await firstPaint(photosKey, true);
  try {
    const months = await page.locator("h2.month-title").count();
    // A screen per animation frame: how long frames take while months come into view and load.
    const frames = await page.evaluate(
      () =>
        new Promise<number[]>((resolve) => {
          const times: number[] = [];
          let last = performance.now();
          const step = (now: number) => {
            times.push(now - last);
            last = now;
            scrollBy(0, innerHeight);
            if (times.length < 60) requestAnimationFrame(step);
            else resolve(times.slice(1));
          };
          requestAnimationFrame(step);
        }),
    );
    const loadedBefore = await page.locator(".photo-grid li").count();
    const jumpStarted = performance.now();
    // The oldest year's link leads to its newest month.
    const oldest = page.locator("nav.scrubber > ol > li > a").last();
    const year = await oldest.textContent();
    await oldest.click();
    await page.locator(`section.month[id^="month-${year}-"]`).first().locator(".photo-grid li").first().waitFor({ timeout: 60_000 });
    const jump = performance.now() - jumpStarted;
    const dom = await page.evaluate(() => document.getElementsByTagName("*").length);
    const noneMs = median(none);
    const manyMs = median(many);
    console.log(`photos timeline first paint (fresh browser context, navigation to the first month's header and 24 pictures), median of ${ROUNDS}:`);
    console.log(`  no photos (baseline)      ${noneMs.toFixed(0).padStart(5)} ms`);
    console.log(`  ${String(PHOTOS).padEnd(6)} photos, ${String(months).padStart(3)} months ${manyMs.toFixed(0).padStart(5)} ms   ${(manyMs / noneMs).toFixed(2)}x no photos   ${manyMs < 1500 ? "OK (< 1.5 s)" : "ABOVE TARGET (1.5 s)"}`);
    console.log(`  scroll, a screen per frame for ${frames.length} frames: frame p50 ${median(frames).toFixed(1)} ms, p95 ${percentile(frames, 0.95).toFixed(1)} ms, max ${Math.max(...frames).toFixed(1)} ms; ${loadedBefore} pictures in the page after`);
    console.log(`  scrubber jump to ${year}: its first month's pictures in ${jump.toFixed(0)} ms; ${dom} elements in the page after`);
  } finally {
    await context.close();
  }
}

await main();
