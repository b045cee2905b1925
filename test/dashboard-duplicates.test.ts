/**
 * The near-duplicates review in Debian's chromium: groups side by side with resolution, size,
 * sharpness and dates, the best ticked; keeping it trashes the others (Undo restores them); "Not
 * duplicates" takes a group apart for good; with none, the page says why and what to do. Phone
 * and desktop widths, without sideways scroll or failed requests. Groups are seeded as the
 * duplicates stage writes them, with real thumbnails.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import sharp from "sharp";
import { expectNoSidewaysScroll, launchChromium, newPage, SHOTS, signIn, watchFailures, WIDTHS } from "./support/chromium.ts";
import { pairAll, setImageFacts } from "./support/duplicate-rows.ts";
import { photo } from "./support/images.ts";
import { insertFileRow, insertThumbnailRow, defaultProjectOf } from "./support/rows.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";

const DESKTOP = 1440;
let server: TestServer;
let tenant: Tenant;
let browser: Browser;
const ids: Record<string, string> = {};

async function copy(name: string, seed: number, facts: { width: number; height: number; sizeBytes: number; sharpness: number }, look: { brightness?: number; shift?: number } = {}) {
  const db = server.ctx.sql;
  const id = await insertFileRow(db, {
    orgId: tenant.orgId,
    projectId: await defaultProjectOf(db, tenant.orgId),
    filename: name,
    contentCreatedAt: "2025-08-14T17:20:00.000Z",
  });
  await setImageFacts(db, id, tenant.orgId, facts);
  let picture = sharp(await photo(seed, 256 + (look.shift ?? 0), 192));
  if (look.shift) picture = picture.extract({ left: look.shift, top: 0, width: 256, height: 192 });
  if (look.brightness) picture = picture.modulate({ brightness: look.brightness });
  await insertThumbnailRow(server.ctx, id, await picture.jpeg({ quality: 80 }).toBuffer(), { width: 256, height: 192 });
  ids[name] = id;
  return id;
}

beforeAll(async () => {
  server = await startTestServer();
  tenant = await server.tenant({ tier: "CUSTOM" });
  browser = await launchChromium();
  const db = server.ctx.sql;
  const beach = [
    await copy("IMG_2041.jpg", 11, { width: 4032, height: 3024, sizeBytes: 3_104_220, sharpness: 412.7 }),
    await copy("IMG_2041 (small).jpg", 11, { width: 2016, height: 1512, sizeBytes: 802_113, sharpness: 398.1 }),
    await copy("IMG_2041 (edited).jpg", 11, { width: 4032, height: 3024, sizeBytes: 2_650_000, sharpness: 380.2 }, { brightness: 1.2 }),
  ];
  await pairAll(db, tenant.orgId, beach);
  await pairAll(db, tenant.orgId, [
    await copy("burst_001.jpg", 12, { width: 3000, height: 2000, sizeBytes: 2_000_000, sharpness: 210 }),
    await copy("burst_002.jpg", 12, { width: 3000, height: 2000, sizeBytes: 2_010_000, sharpness: 250 }, { shift: 8 }),
  ]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});


const live = async (id: string) => (await tenant.api.get(`/files/${id}`)).status;

for (const width of [WIDTHS.phone, DESKTOP]) {
  test(`at ${width} px each group's copies are side by side with what tells them apart, the best ticked`, async () => {
    const page = await newPage(browser, width, 900, { locale: "en-US", timezoneId: "UTC" });
    const failures = watchFailures(page);
    try {
      await signIn(page, server.url, tenant.key);
      await page.goto(`${server.url}/#/duplicates`);
      await page.getByRole("heading", { name: "Near-duplicates", level: 1 }).waitFor({ timeout: 30_000 });
      await page.getByText("2 groups of near-duplicates").waitFor({ timeout: 30_000 });
      const beach = page.getByRole("region", { name: "Group of 3: IMG_2041.jpg" });
      await beach.waitFor();
      // The best first, with its facts; ticked to keep, the others not.
      const first = beach.locator(".dup-files li").first();
      expect(await first.locator(".name").textContent()).toBe("IMG_2041.jpg Best");
      expect(await first.locator("dd").allTextContents()).toEqual(["4032 × 3024", "3 MB", "413", "Aug 14, 2025, 5:20 PM", expect.any(String)]);
      expect(await beach.getByLabel("Keep IMG_2041.jpg", { exact: true }).isChecked()).toBe(true);
      expect(await beach.getByLabel("Keep IMG_2041 (small).jpg").isChecked()).toBe(false);
      await beach.getByRole("button", { name: "Keep 1, move 2 files to the trash" }).waitFor();
      await page.locator(".dup-files img.loaded").nth(4).waitFor({ timeout: 30_000 });
      await page.waitForLoadState("networkidle");
      await expectNoSidewaysScroll(page);
      await page.screenshot({ animations: "disabled", path: join(SHOTS, `duplicates-${width}.png`), fullPage: true });
      expect(failures.failed()).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);
}

test("keeping the best trashes the other copies (Undo restores them); 'Not duplicates' takes a group apart for good (Undo takes it back)", async () => {
  const page = await newPage(browser, DESKTOP, 900, { locale: "en-US", timezoneId: "UTC" });
  const failures = watchFailures(page);
  const notice = page.getByRole("status").filter({ hasText: /./ });
  try {
    await signIn(page, server.url, tenant.key);
    await page.goto(`${server.url}/#/duplicates`);
    const beach = page.getByRole("region", { name: "Group of 3: IMG_2041.jpg" });
    await beach.getByRole("button", { name: "Keep 1, move 2 files to the trash" }).click();
    await notice.filter({ hasText: "Moved 2 files to the trash." }).waitFor({ timeout: 30_000 });
    await page.getByText("1 group of near-duplicates").waitFor({ timeout: 30_000 });
    expect(await live(ids["IMG_2041 (small).jpg"]!)).toBe(404);
    expect(await live(ids["IMG_2041.jpg"]!)).toBe(200);

    await notice.getByRole("button", { name: "Undo" }).click();
    await notice.filter({ hasText: "Restored 2 files." }).waitFor({ timeout: 30_000 });
    await page.getByText("2 groups of near-duplicates").waitFor({ timeout: 30_000 });
    expect(await live(ids["IMG_2041 (small).jpg"]!)).toBe(200);

    // One of three is not a copy of the others: it leaves the group, the other two stay one.
    await beach.getByRole("button", { name: "Not a copy of the others: IMG_2041 (edited).jpg" }).click();
    await notice.filter({ hasText: "IMG_2041 (edited).jpg: marked as not a copy of the others" }).waitFor({ timeout: 30_000 });
    const pair = page.getByRole("region", { name: "Group of 2: IMG_2041.jpg" });
    await pair.waitFor({ timeout: 30_000 });
    expect(await pair.locator(".dup-files .name").allTextContents()).toEqual(["IMG_2041.jpg Best", "IMG_2041 (small).jpg"]);
    // Undo takes the verdict back: the group of three again.
    await notice.getByRole("button", { name: "Undo" }).click();
    await notice.filter({ hasText: "Grouped again." }).waitFor({ timeout: 30_000 });
    await beach.waitFor({ timeout: 30_000 });
    await page.reload();
    await beach.waitFor({ timeout: 30_000 });

    // Keeping two of three: only the third goes.
    await beach.getByLabel("Keep IMG_2041 (edited).jpg").check();
    await beach.getByRole("button", { name: "Keep 2, move 1 file to the trash" }).click();
    await notice.filter({ hasText: "Moved 1 file to the trash." }).waitFor({ timeout: 30_000 });
    expect(await live(ids["IMG_2041 (small).jpg"]!)).toBe(404);
    expect(await live(ids["IMG_2041 (edited).jpg"]!)).toBe(200);
    await page.getByRole("region", { name: "Group of 2: IMG_2041.jpg" }).waitFor({ timeout: 30_000 });

    const burst = page.getByRole("region", { name: "Group of 2: burst_002.jpg" });
    await burst.getByRole("button", { name: "Not duplicates" }).click();
    await notice.filter({ hasText: "burst_002.jpg, burst_001.jpg: marked as not duplicates" }).waitFor({ timeout: 30_000 });
    await page.getByText("1 group of near-duplicates").waitFor({ timeout: 30_000 });
    await page.reload();
    await page.getByRole("region", { name: "Group of 2: IMG_2041.jpg" }).waitFor({ timeout: 30_000 });
    expect(await burst.count()).toBe(0);
    expect(await live(ids["burst_001.jpg"]!)).toBe(200);
    expect(failures.failed()).toEqual([]);
  } finally {
    await page.close();
  }
}, 120_000);

test("with no near-duplicates, the page says how they are found", async () => {
  const empty = await server.tenant({ tier: "CUSTOM" });
  const page = await newPage(browser, WIDTHS.phone, 844, { locale: "en-US", timezoneId: "UTC" });
  const failures = watchFailures(page);
  try {
    await signIn(page, server.url, empty.key);
    await page.goto(`${server.url}/#/duplicates`);
    await page.getByRole("heading", { name: "No near-duplicates" }).waitFor({ timeout: 30_000 });
    expect(await page.getByRole("link", { name: "Upload photos" }).getAttribute("href")).toBe("#/upload");
    await expectNoSidewaysScroll(page);
    expect(failures.failed()).toEqual([]);
  } finally {
    await page.close();
  }
}, 120_000);
