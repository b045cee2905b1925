/**
 * The dashboard at a phone's, a tablet's, a laptop's and a desktop's width in Debian's chromium:
 * every main page without sideways scroll and without a request answered 4xx/5xx, controls big
 * enough to touch on a phone, the menu folded on narrow screens, and the library's grid filling
 * the width (more columns as the screen widens). Screenshots go to test-results/dashboard/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { expectNoSidewaysScroll, launchChromium, newPage, SHOTS, signIn, smallTargets, watchFailures, WIDTHS } from "./support/chromium.ts";
import { photo, textImage } from "./support/images.ts";
import { processed } from "./support/polling.ts";
import { insertFileRow, defaultProjectOf } from "./support/rows.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";

let server: TestServer;
let tenant: Tenant;
let browser: Browser;
let imageId: string;
let noteId: string;
let receiptId: string;
beforeAll(async () => {
  server = await startTestServer();
  tenant = await server.tenant({ tier: "CUSTOM" });
  browser = await launchChromium();
  const form = new FormData();
  form.append("file", new File([new Uint8Array(await photo(3, 800, 600))], "quay-at-dusk-with-a-rather-long-file-name-that-wraps.jpg"));
  imageId = (await tenant.api.form("/files/upload", form)).body.image_id;
  const note = new FormData();
  note.append("file", new File(["# Pier inspection\n\nThe north pier was inspected on Monday. Two bollards need new bolts.\n"], "pier-inspection.md"));
  noteId = (await tenant.api.form("/files/upload", note)).body.image_id;
  // Lines of text read from a picture: each line's review row (field and three buttons) must fit a phone.
  const receipt = new FormData();
  receipt.append("file", new File([new Uint8Array(await textImage(["HARBOUR CHANDLERY LTD", "ROPE 12MM 40M 58.00", "TOTAL AMOUNT 61.50"]))], "receipt.png"));
  receiptId = (await tenant.api.form("/files/upload", receipt)).body.image_id;
  await processed(tenant, imageId, 120_000);
  await processed(tenant, noteId, 120_000);
  await processed(tenant, receiptId, 120_000);
  // Enough cards to fill several rows at every width.
  const projectId = await defaultProjectOf(server.ctx.sql, tenant.orgId);
  for (let i = 0; i < 60; i++) await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId, filename: `harbour-${String(i).padStart(2, "0")}.jpg`, createdAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() });
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});


/** Each main page: its address and a heading that says it has drawn. */
const PAGES: [string, string, string | RegExp][] = [
  ["library", "#/library", "Library"],
  ["photos", "#/photos", "Photos"],
  ["people", "#/people", "People"],
  ["duplicates", "#/duplicates", "Near-duplicates"],
  ["map", "#/map", "Map"],
  ["upload", "#/upload", "Upload"],
  ["search", "#/search", "Search documents"],
  ["activity", "#/activity", "Activity"],
  ["cloud", "#/cloud", "Cloud drives"],
  ["schemas", "#/schemas", /schemas/i],
  ["export", "#/export", /Export/],
  ["trash", "#/trash", "Trash"],
];

for (const [size, width] of Object.entries(WIDTHS)) {
  test(`at ${width} px (${size}) every page fits the width and no request fails`, async () => {
    const page = await newPage(browser, width, size === "phone" ? 844 : size === "tablet" ? 1024 : size === "laptop" ? 768 : 1080);
    const failures = watchFailures(page);
    try {
      await signIn(page, server.url, tenant.key);
      for (const [name, hash, heading] of [...PAGES, ["image", `#/files/${imageId}`, /quay-at-dusk/] as const, ["note", `#/files/${noteId}`, "pier-inspection.md"] as const, ["receipt", `#/files/${receiptId}`, "receipt.png"] as const]) {
        await page.goto(`${server.url}/${hash}`);
        await page.getByRole("heading", { name: heading, level: 1 }).waitFor({ timeout: 30_000 });
        // What the page asks for on arrival has answered.
        await page.waitForLoadState("networkidle");
        if (name === "receipt") await page.getByRole("heading", { name: "Review the text read" }).waitFor({ timeout: 30_000 });
        await expectNoSidewaysScroll(page);
        if (size === "phone") expect({ page: name, small: await smallTargets(page, 40) }).toEqual({ page: name, small: [] });
        if (["library", "image", "note", "upload"].includes(name) || size === "phone") await page.screenshot({ path: join(SHOTS, `layout-${name}-${width}.png`), fullPage: name !== "library" });
      }
      expect(failures.failed()).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);
}

test("narrow screens fold the main links under a Menu button; wide ones show them", async () => {
  const phone = await newPage(browser, WIDTHS.phone, 844);
  try {
    await signIn(phone, server.url, tenant.key);
    const upload = phone.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Upload" });
    expect(await upload.isVisible()).toBe(false);
    await phone.getByRole("button", { name: "Menu" }).click();
    expect(await phone.getByRole("button", { name: "Menu" }).getAttribute("aria-expanded")).toBe("true");
    await phone.screenshot({ path: join(SHOTS, "layout-menu-390.png") });
    await upload.click();
    await phone.getByRole("heading", { name: "Upload", level: 1 }).waitFor({ timeout: 30_000 });
    // Choosing a page folds the menu again.
    expect(await upload.isVisible()).toBe(false);
  } finally {
    await phone.close();
  }
  const desktop = await newPage(browser, WIDTHS.desktop, 1080);
  try {
    await signIn(desktop, server.url, tenant.key);
    expect(await desktop.getByRole("button", { name: "Menu" }).isVisible()).toBe(false);
    expect(await desktop.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Upload" }).isVisible()).toBe(true);
  } finally {
    await desktop.close();
  }
}, 120_000);

test("the library's grid fills the width: two columns on a phone, more as the screen widens", async () => {
  const seen: Record<number, { columns: number; gridWidth: number; contentWidth: number; card: number }> = {};
  for (const width of Object.values(WIDTHS)) {
    const page = await newPage(browser, width, 900);
    try {
      await signIn(page, server.url, tenant.key);
      await page.locator(".virtual-grid .grid li").nth(5).waitFor({ timeout: 30_000 });
      seen[width] = await page.evaluate(() => {
        const grid = document.querySelector(".virtual-grid .grid") as HTMLElement;
        const columns = getComputedStyle(grid).gridTemplateColumns.split(" ").length;
        const content = document.querySelector(".library > section") as HTMLElement;
        return {
          columns,
          gridWidth: grid.getBoundingClientRect().width,
          contentWidth: content.getBoundingClientRect().width,
          card: (grid.querySelector("li") as HTMLElement).getBoundingClientRect().width,
        };
      });
    } finally {
      await page.close();
    }
  }
  expect(seen[WIDTHS.phone]!.columns).toBe(2);
  const widths = Object.values(WIDTHS);
  for (let i = 1; i < widths.length; i++) expect(seen[widths[i]!]!.columns).toBeGreaterThan(seen[widths[i - 1]!]!.columns);
  for (const width of widths) {
    // The grid spans its column of the page, which spans the screen less the sidebar and margins.
    expect(seen[width]!.gridWidth).toBeGreaterThanOrEqual(seen[width]!.contentWidth - 1);
    expect(seen[width]!.contentWidth).toBeGreaterThan(width * (width < 900 ? 0.85 : 0.7));
    expect(seen[width]!.card).toBeGreaterThanOrEqual(140);
  }
  expect(seen[WIDTHS.desktop]!.columns).toBeGreaterThanOrEqual(7);
}, 120_000);
