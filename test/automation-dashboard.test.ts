/**
 * The dashboard's Automation pages in Debian's chromium (playwright-core): a rule written as JSON
 * tried with a dry run that lists the file it would touch, saved and applied to the library with
 * its job's outcome; a webhook added, its test delivery dead-lettered against a failing receiver
 * and sent again from the page once the receiver works; mail accounts and watched folders listed.
 * Screenshots go to test-results/dashboard/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { launchChromium, navigate, newPage, SHOTS, signIn } from "./support/chromium.ts";
import { addWatchedFolder } from "../src/watch/watched-folders.ts";
import { pollApi, processed } from "./support/polling.ts";
import { startTestServer, tempDir, type Tenant, type TestServer } from "./support/server.ts";

let server: TestServer;
let owner: Tenant;
let browser: Browser;
let healthy = false;
const receiver = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("", { status: healthy ? 200 : 500 }) });

beforeAll(async () => {
  server = await startTestServer({ env: { MEDIABOX_WEBHOOK_ALLOW_CIDRS: "127.0.0.1/32", MEDIABOX_WEBHOOK_PORTS: "any", MEDIABOX_WEBHOOK_MAX_ATTEMPTS: "1" } });
  owner = await server.tenant({ tier: "CUSTOM" });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  receiver.stop(true);
});


test("rules: a dry run lists the files a rule would touch; saved and applied to the library", async () => {
  const form = new FormData();
  form.append("file", new File(["Invoice 1188 for the spring order"], "spring.txt", { type: "text/plain" }));
  const uploaded = (await owner.api.form("/files/upload", form)).body.image_id;
  await processed(owner, uploaded);
  const page = await newPage(browser, 1280, 720);
  page.on("dialog", (dialog) => void dialog.accept());
  try {
    await signIn(page, server.url, owner.key);
    await navigate(page, "Automation");
    await page.getByRole("heading", { name: "Automation" }).waitFor();
    // The editor starts with the example rule: text contains "invoice" → tag finance.
    await page.getByRole("button", { name: "Dry run" }).click();
    await page.getByRole("heading", { name: "Dry run: 1 of 1 files would be touched" }).waitFor({ timeout: 30_000 });
    expect(await page.getByRole("link", { name: "spring.txt" }).getAttribute("href")).toBe(`#/files/${uploaded}`);
    await page.screenshot({ path: join(SHOTS, "automation-rules-dry-run.png") });
    await page.getByRole("button", { name: "Create rule" }).click();
    await page.getByText('Saved "finance"').waitFor();
    await page.getByRole("button", { name: "Apply finance to the library" }).click();
    await page.getByText("1 of 1 files changed").waitFor({ timeout: 60_000 });
    expect((await owner.api.get(`/files/${uploaded}`)).body.tags).toContain("finance");

    // Auto matching: nothing learned until asked; learning again shows what it learned from.
    const autoMatching = page.getByRole("region", { name: "Auto matching" });
    await autoMatching.getByText("Nothing learned yet").waitFor();
    await autoMatching.getByRole("button", { name: "Learn from the library now" }).click();
    await autoMatching.getByText(/Learned from \d+ files? with text/).waitFor({ timeout: 30_000 });
    await autoMatching.getByText("No tag or folder has 5 files with text yet.").waitFor();

    // A bad rule shows the server's reason.
    await page.getByRole("textbox", { name: /Rule \(JSON/ }).fill(JSON.stringify({ name: "bad", actions: [{ type: "explode" }] }));
    await page.getByRole("button", { name: "Save changes" }).click();
    // The problem line is always on the page (empty until a save fails), so wait for its text.
    await page.getByRole("alert").filter({ hasText: "actions.0.type" }).waitFor({ timeout: 30_000 });
  } finally {
    await page.close();
  }
});

test("webhooks: a failed delivery is listed as a dead letter and sent again from the page", async () => {
  const page = await newPage(browser, 1280, 720);
  page.on("dialog", (dialog) => void dialog.accept());
  try {
    await signIn(page, server.url, owner.key);
    await page.goto(`${server.url}/#/automation/webhooks`);
    await page.getByLabel("Receiver URL").fill(`http://127.0.0.1:${receiver.port}/hook`);
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.getByRole("status").filter({ hasText: "whsec_" }).waitFor({ timeout: 30_000 });
    await page.getByRole("button", { name: "send test" }).click();
    await page.getByLabel("Failed only (dead letters)").check();
    const retry = page.getByRole("button", { name: /Retry delivery/ });
    await retry.waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, "automation-webhooks-dead-letter.png") });
    healthy = true;
    await retry.click();
    await pollApi(owner, "/webhook-deliveries", (r) => r.body.items[0]?.status === "delivered", { what: "the retried delivery" });
    await page.getByLabel("Failed only (dead letters)").uncheck();
    await page.getByRole("cell", { name: "delivered" }).waitFor({ timeout: 30_000 });
  } finally {
    await page.close();
  }
});

test("mail accounts and watched folders are listed", async () => {
  await owner.api.post("/mail-accounts", { name: "office scans", host: "imap.example.com", username: "scans", password: "secret", enabled: false });
  const dir = tempDir("mediabox-watch-ui-");
  await addWatchedFolder(server.ctx.sql, server.ctx.clock, { path: dir, org: owner.orgName, project: null, folder: null }, "cli");
  const page = await newPage(browser, 1280, 720);
  try {
    await signIn(page, server.url, owner.key);
    await page.goto(`${server.url}/#/automation/mail`);
    await page.getByRole("button", { name: "office scans" }).waitFor({ timeout: 30_000 });
    await page.getByLabel("IMAP server").waitFor();
    await page.goto(`${server.url}/#/automation/watched`);
    await page.getByRole("heading", { name: dir }).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, "automation-watched.png") });
  } finally {
    await page.close();
  }
});
