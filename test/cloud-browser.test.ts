/**
 * The OAuth popup in a real browser (Debian's Chromium driven by playwright-core, headless): a
 * dashboard page opens the authorization URL in a popup, the user presses Allow at the
 * authorization server (oidc-provider), and the opener receives Mediabox's `oauth-complete`
 * message from Mediabox's origin. Skipped, saying so, only when /usr/bin/chromium is absent.
 */
import { afterEach, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { CHROMIUM, launchChromium } from "./support/chromium.ts";
import { ACCOUNT } from "./support/cloud-servers.ts";
import { startCloudStack, type CloudStack } from "./support/cloud-setup.ts";

const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`cloud-browser.test.ts: ${CHROMIUM} is absent; the browser OAuth popup test is skipped (apt-get install chromium)`);

const DASHBOARD = `<!doctype html><html><body>
<button id="connect">Connect a drive</button>
<script>
  window.messages = [];
  window.addEventListener("message", (event) => window.messages.push({ origin: event.origin, data: event.data }));
  document.getElementById("connect").addEventListener("click", () => { window.open(window.authorizationUrl, "oauth", "width=480,height=640"); });
</script></body></html>`;

let stack: CloudStack | null = null;
let browser: Browser | null = null;
let dashboard: ReturnType<typeof Bun.serve> | null = null;
afterEach(async () => {
  await browser?.close().catch(() => {});
  await stack?.stop();
  dashboard?.stop(true);
  browser = null;
  stack = null;
  dashboard = null;
});

test.skipIf(!hasChromium)("the popup's callback page posts oauth-complete to the opener at its exact origin", async () => {
  dashboard = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(DASHBOARD, { headers: { "content-type": "text/html" } }) });
  const dashboardOrigin = `http://127.0.0.1:${dashboard.port}`;
  stack = await startCloudStack({ env: { MEDIABOX_CLOUD_OAUTH_OPENER_ORIGIN: dashboardOrigin } });
  const tenant = await stack.server.tenant();
  browser = await launchChromium();
  const page = await browser.newPage();
  await page.goto(dashboardOrigin);

  async function runPopup(provider: string, button: "#allow" | "#deny") {
    const start = await tenant.api.post(`/cloud-storage/auth/${provider}`);
    expect(start.status).toBe(200);
    await page.evaluate((url) => {
      (window as unknown as { authorizationUrl: string }).authorizationUrl = url;
    }, start.body.authorization_url);
    const before = await page.evaluate(() => (window as unknown as { messages: unknown[] }).messages.length);
    const [popup] = await Promise.all([page.waitForEvent("popup"), page.click("#connect")]);
    await popup.waitForSelector(button, { timeout: 30_000 });
    await Promise.all([popup.waitForEvent("close", { timeout: 30_000 }), popup.click(button)]);
    await page.waitForFunction((n) => (window as unknown as { messages: unknown[] }).messages.length > n, before, { timeout: 30_000 });
    return page.evaluate(() => (window as unknown as { messages: { origin: string; data: any }[] }).messages.at(-1)!);
  }

  const ok = await runPopup("google_drive", "#allow");
  // Sent by Mediabox's page, to this page's origin only.
  expect(ok.origin).toBe(stack.server.url);
  expect(ok.data).toMatchObject({ type: "oauth-complete", success: true, connection: { provider: "google_drive", provider_email: ACCOUNT.email, display_name: ACCOUNT.name, is_token_expired: false } });
  const list = await tenant.api.get("/cloud-storage/connections");
  expect(list.body.items.map((c: { id: string }) => c.id)).toEqual([ok.data.connection.id]);

  const denied = await runPopup("nextcloud", "#deny");
  expect(denied.data).toMatchObject({ type: "oauth-complete", success: false });
  expect(denied.data.error).toContain("access_denied");
  expect(denied.data.connection).toBeUndefined();
  expect((await tenant.api.get("/cloud-storage/connections")).body.total_count).toBe(1);
});

test.skipIf(!hasChromium)("an opener at another origin receives nothing", async () => {
  dashboard = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(DASHBOARD, { headers: { "content-type": "text/html" } }) });
  // Mediabox posts to its own origin by default; this dashboard is elsewhere.
  stack = await startCloudStack();
  const tenant = await stack.server.tenant();
  browser = await launchChromium();
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${dashboard.port}`);
  const start = await tenant.api.post("/cloud-storage/auth/google_drive");
  await page.evaluate((url) => {
    (window as unknown as { authorizationUrl: string }).authorizationUrl = url;
  }, start.body.authorization_url);
  const [popup] = await Promise.all([page.waitForEvent("popup"), page.click("#connect")]);
  await popup.waitForSelector("#allow", { timeout: 30_000 });
  // The callback page posts to Mediabox's origin and closes; the browser drops the message here.
  await Promise.all([popup.waitForEvent("close", { timeout: 30_000 }), popup.click("#allow")]);
  expect((await tenant.api.get("/cloud-storage/connections")).body.total_count).toBe(1);
  // A sentinel posted after the popup closed arrives; nothing came before it.
  await page.evaluate(() => window.postMessage({ type: "sentinel" }, window.location.origin));
  await page.waitForFunction(() => (window as unknown as { messages: unknown[] }).messages.length > 0, undefined, { timeout: 30_000 });
  const messages = await page.evaluate(() => (window as unknown as { messages: { data: { type: string } }[] }).messages.map((m) => m.data.type));
  expect(messages).toEqual(["sentinel"]);
});
