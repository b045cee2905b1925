/**
 * Honest messages in the dashboard (Debian's chromium): a refusal names the setting that changes
 * it, once.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { launchChromium, newPage, SHOTS, signIn, WIDTHS } from "./support/chromium.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";

let server: TestServer;
let tenant: Tenant;
let browser: Browser;
beforeAll(async () => {
  server = await startTestServer();
  tenant = await server.tenant({ tier: "CUSTOM" });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});


test("a link to a port the crawler may not use says so once, naming MEDIABOX_LINK_PORTS", async () => {
  const page = await newPage(browser, WIDTHS.phone, 844);
  try {
    await signIn(page, server.url, tenant.key);
    await page.goto(`${server.url}/#/upload`);
    await page.getByLabel("Save a web page").fill("http://127.0.0.1:43301/intranet");
    await page.getByRole("button", { name: "Save link" }).click();
    await page.locator(".uploads li a").first().click();
    const alert = page.locator(".failed");
    await alert.waitFor({ timeout: 120_000 });
    const text = (await alert.textContent())!;
    expect(text).toContain("port 43301 is not allowed (MEDIABOX_LINK_PORTS allows 80, 443)");
    expect(((await page.locator("main").textContent()) ?? "").split("is not allowed").length - 1).toBe(1);
    await page.screenshot({ path: join(SHOTS, "link-blocked-390.png"), fullPage: true });
  } finally {
    await page.close();
  }
}, 180_000);
