/**
 * The Photos page in Debian's chromium: photos by month of taking, newest first, under date
 * headers with their counts; a month's pictures load as it nears the viewport; the scrubber
 * jumps to a month. At phone and desktop widths, without sideways scroll or failed requests.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { expectNoSidewaysScroll, launchChromium, newPage, SHOTS, signIn, watchFailures, WIDTHS } from "./support/chromium.ts";
import { insertFileRow, defaultProjectOf } from "./support/rows.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { waitFor } from "./support/polling.ts";

let server: TestServer;
let tenant: Tenant;
let browser: Browser;
beforeAll(async () => {
  server = await startTestServer();
  tenant = await server.tenant({ tier: "CUSTOM" });
  browser = await launchChromium();
  const projectId = await defaultProjectOf(server.ctx.sql, tenant.orgId);
  const months: [number, number, number][] = [[2026, 2, 14], [2025, 11, 9], [2024, 6, 3]];
  for (const [y, m, n] of months) {
    for (let i = 0; i < n; i++) {
      await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId, filename: `shot-${y}-${m}-${i}.jpg`, contentCreatedAt: new Date(Date.UTC(y, m, 1 + i, 12)).toISOString() });
    }
  }
  await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId, filename: "no-date.jpg" });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});


for (const [size, width] of [["phone", WIDTHS.phone], ["desktop", WIDTHS.desktop]] as const) {
  test(`at ${width} px photos are grouped by month under date headers, and the scrubber jumps to a month`, async () => {
    const page = await newPage(browser, width, 900, { locale: "en-US" });
    const failures = watchFailures(page);
    try {
      await signIn(page, server.url, tenant.key);
      await page.goto(`${server.url}/#/photos`);
      await page.getByRole("heading", { name: "Photos", level: 1 }).waitFor({ timeout: 30_000 });
      const headers = page.locator("h2.month-title");
      await headers.nth(2).waitFor({ timeout: 30_000 });
      expect(await headers.allTextContents()).toEqual(["March 2026 14 photos", "December 2025 9 photos", "July 2024 3 photos"]);
      // The first month's pictures are in the page; the undated one is pointed at.
      await page.locator("#month-2026-03 .photo-grid li").nth(13).waitFor({ timeout: 30_000 });
      await page.getByText("1 photo without a date is in the library").waitFor();
      // The scrubber: a year on a phone, a month on wider screens.
      if (size === "phone") await page.getByRole("navigation", { name: "Jump to a month" }).getByRole("link", { name: "2024" }).click();
      else await page.getByRole("link", { name: "July 2024" }).click();
      await page.locator("#month-2024-07 .photo-grid li").nth(2).waitFor({ timeout: 30_000 });
      expect(await page.locator("#month-2024-07").evaluate((el) => el.getBoundingClientRect().top < innerHeight)).toBe(true);
      await page.waitForLoadState("networkidle");
      await expectNoSidewaysScroll(page);
      await page.evaluate(() => scrollTo(0, 0));
      await page.screenshot({ path: join(SHOTS, `photos-${width}.png`) });
      expect(failures.failed()).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);
}

test("a long timeline keeps only the months near the viewport in the page, and a scrubber jump lands on its month", async () => {
  const many = await server.tenant({ tier: "CUSTOM" });
  const projectId = await defaultProjectOf(server.ctx.sql, many.orgId);
  // 36 months of 30 photos: 36 screens of pictures at least.
  for (let m = 0; m < 36; m++) {
    for (let i = 0; i < 30; i++) {
      await insertFileRow(server.ctx.sql, { orgId: many.orgId, projectId, filename: `m${m}-${i}.jpg`, contentCreatedAt: new Date(Date.UTC(2020, m, 1 + (i % 27), 12)).toISOString() });
    }
  }
  const page = await newPage(browser, WIDTHS.laptop, 800, { locale: "en-US" });
  const failures = watchFailures(page);
  try {
    await page.addInitScript((key) => sessionStorage.setItem("mediabox.apiKey", key), many.key);
    await page.goto(`${server.url}/#/photos`);
    await page.locator("#month-2022-12 .photo-grid li").nth(29).waitFor({ timeout: 30_000 });
    const heights = await page.locator("section.month .photo-grid").evaluateAll((grids) => grids.map((g) => g.getBoundingClientRect().height));
    expect(heights).toHaveLength(36);
    // Every month's grid has its final height before its pictures load.
    expect(new Set(heights.map(Math.round)).size).toBe(1);
    await page.getByRole("link", { name: "January 2020" }).click();
    await page.locator("#month-2020-01 .photo-grid li").nth(29).waitFor({ timeout: 30_000 });
    expect(await page.locator("#month-2020-01").evaluate((el) => Math.abs(el.getBoundingClientRect().top) < 5)).toBe(true);
    // The first months left the page's pictures when the view left them.
    await waitFor(async () => (await page.locator("#month-2022-12 .photo-grid li").count()) === 0, { what: "December 2022's pictures to leave the page", timeoutMs: 30_000 });
    expect(await page.locator(".photo-grid li").count()).toBeLessThan(30 * 8);
    expect(failures.failed()).toEqual([]);
  } finally {
    await page.close();
  }
}, 120_000);
