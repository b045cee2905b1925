/**
 * Documents in the dashboard, in Debian's chromium: a Markdown document's text drawn as HTML
 * (pipe tables as tables) with nothing of its raw HTML or script links alive, shown once; a
 * PDF's card in the library shows its first page; a search passage cut from a table is drawn as one. At phone and desktop widths, without sideways
 * scroll or failed requests.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { reportPdf } from "./support/documents.ts";
import { expectNoSidewaysScroll, launchChromium, newPage, SHOTS, signIn, watchFailures, WIDTHS } from "./support/chromium.ts";
import { processed } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";

let server: TestServer;
let tenant: Tenant;
let browser: Browser;
let noteId: string;
let pdfId: string;
const NOTE = [
  "# Crane inspection",
  "",
  "The **north crane** passed. Details in the table.",
  "",
  "| Part | State | Next check |",
  "|---|---|---|",
  "| Hook | worn | May |",
  "| Cable | good | June |",
  "",
  // (An upload with a <script> element is refused outright; other raw HTML is stored.)
  '<u>raw html</u> <img src="http://127.0.0.1:9/pixel.png">',
  "",
  "[open me](javascript:window.__pwned=true) and ![remote](http://127.0.0.1:9/tracker.png)",
  "",
].join("\n");

beforeAll(async () => {
  server = await startTestServer();
  tenant = await server.tenant({ tier: "CUSTOM" });
  browser = await launchChromium();
  const note = new FormData();
  note.append("file", new File([NOTE], "crane-inspection.md"));
  const stored = await tenant.api.form("/files/upload", note);
  if (stored.status !== 201) throw new Error(JSON.stringify(stored.body));
  noteId = stored.body.image_id;
  const pdf = new FormData();
  pdf.append("file", new File([(await reportPdf()) as Uint8Array<ArrayBuffer>], "report.pdf"));
  pdfId = (await tenant.api.form("/files/upload", pdf)).body.image_id;
  await processed(tenant, noteId, 120_000);
  await processed(tenant, pdfId, 120_000);
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});


for (const [size, width] of [["phone", WIDTHS.phone], ["desktop", WIDTHS.desktop]] as const) {
  test(`at ${width} px a Markdown document's text is drawn once, tables as tables, its HTML inert`, async () => {
    const page = await newPage(browser, width, 900);
    const failures = watchFailures(page);
    try {
      await signIn(page, server.url, tenant.key);
      await page.goto(`${server.url}/#/files/${noteId}`);
      const text = page.getByRole("document", { name: "Text of crane-inspection.md" });
      await text.locator("table").waitFor({ timeout: 30_000 });
      expect(await text.locator("h1").textContent()).toBe("Crane inspection");
      expect(await text.locator("thead th").allTextContents()).toEqual(["Part", "State", "Next check"]);
      expect(await text.locator("tbody tr").count()).toBe(2);
      // Raw HTML is shown as text, the script link is not a link, the remote image is not fetched.
      expect(await text.locator("u, img").count()).toBe(0);
      await expect(text.textContent()).resolves.toContain("<u>raw html</u>");
      expect(await text.locator('a[href^="javascript"]').count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: boolean }).__pwned ?? false)).toBe(false);
      // Once: no second copy of the same text as raw Markdown.
      expect(await page.locator("pre.text").count()).toBe(0);
      await page.waitForLoadState("networkidle");
      await expectNoSidewaysScroll(page);
      await page.screenshot({ path: join(SHOTS, `document-markdown-${size}.png`), fullPage: true });
      expect(failures.failed()).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);
}

test("a PDF's card in the library shows its first page; its viewer fits a phone and zooms", async () => {
  const page = await newPage(browser, WIDTHS.phone, 844);
  const failures = watchFailures(page);
  try {
    await signIn(page, server.url, tenant.key);
    const card = page.getByRole("link", { name: /report\.pdf/ });
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>(".grid .thumb img")].some((img) => img.complete && img.naturalWidth > 0), null, { timeout: 60_000 });
    expect(await card.locator(".thumb img").getAttribute("src")).toBeTruthy();
    await page.screenshot({ path: join(SHOTS, "library-document-thumbnail-390.png") });
    await page.goto(`${server.url}/#/files/${pdfId}`);
    await page.locator(".sheet img.page-image").first().waitFor({ timeout: 60_000 });
    // At 100 % a sheet fits the phone's column; zoomed, it scrolls inside the viewer, not the page.
    const sheet = (await page.locator(".sheet").first().boundingBox())!;
    expect(sheet.width).toBeLessThanOrEqual(WIDTHS.phone);
    await page.getByLabel("Show element boxes").check();
    await page.getByRole("button", { name: "Zoom in" }).click();
    await page.getByRole("button", { name: "Zoom in" }).click();
    await page.waitForFunction((w) => document.querySelector(".sheet")!.getBoundingClientRect().width > w * 1.4, sheet.width, { timeout: 10_000 });
    await page.waitForLoadState("networkidle");
    await expectNoSidewaysScroll(page);
    await page.locator(".document-viewer").screenshot({ path: join(SHOTS, "document-viewer-390.png") });
    expect(failures.failed()).toEqual([]);
  } finally {
    await page.close();
  }
}, 180_000);

test("a search passage cut from a table shows its rows as a table, without the Markdown's pipes and header rule", async () => {
  const page = await newPage(browser, WIDTHS.phone, 844);
  const failures = watchFailures(page);
  try {
    await signIn(page, server.url, tenant.key);
    await page.goto(`${server.url}/#/search`);
    await page.getByLabel("Question or words").fill("worn hook next check");
    await page.getByRole("button", { name: "Search" }).click();
    const passage = page.locator(".passages li").filter({ hasText: "crane-inspection.md" }).first();
    const table = passage.locator(".passage-table table");
    await table.waitFor({ timeout: 30_000 });
    expect(await table.locator("tr").first().locator("td").allTextContents()).toEqual(["Part", "State", "Next check"]);
    expect(await table.locator("tr").nth(1).locator("td").allTextContents()).toEqual(["Hook", "worn", "May"]);
    expect(await passage.textContent()).not.toContain("|");
    await page.waitForLoadState("networkidle");
    await expectNoSidewaysScroll(page);
    expect(failures.failed()).toEqual([]);
  } finally {
    await page.close();
  }
}, 120_000);

test("a document's keyphrases are suggested, not tagged: one is added as a tag, another dismissed", async () => {
  const before = (await tenant.api.get(`/files/${noteId}`)).body;
  expect(before.tags).toEqual([]);
  const [first, second] = before.suggested_tags as [string, string];
  expect(second).toBeDefined();
  const page = await newPage(browser, WIDTHS.phone, 844);
  const failures = watchFailures(page);
  try {
    await signIn(page, server.url, tenant.key);
    await page.goto(`${server.url}/#/files/${noteId}`);
    await page.getByRole("heading", { name: "Suggested tags" }).waitFor({ timeout: 30_000 });
    await page.getByRole("button", { name: `Add tag ${first}` }).click();
    await page.getByText(`Tagged "${first}"`).waitFor({ timeout: 30_000 });
    // The tag field shows it, and a save keeps it.
    expect(await page.getByLabel(/^Tags/).inputValue()).toBe(first);
    await page.getByRole("button", { name: `Dismiss ${second}` }).click();
    await page.getByText(`Dismissed "${second}"`).waitFor({ timeout: 30_000 });
    expect(await page.getByRole("button", { name: `Add tag ${second}` }).count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, "document-suggested-tags-390.png"), fullPage: true });
    const after = (await tenant.api.get(`/files/${noteId}`)).body;
    expect(after.tags).toEqual([first]);
    expect(after.suggested_tags).not.toContain(second);
    expect(failures.failed()).toEqual([]);
  } finally {
    await page.close();
  }
}, 120_000);
