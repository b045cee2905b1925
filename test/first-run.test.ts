/**
 * The first run: while no user exists the appliance makes its owner once, from loopback as is or
 * from elsewhere with the setup token printed at start; the sign-in page offers only the ways
 * this appliance has set up (identity provider, self-registration), and the Cloud drives page
 * only the drives it can connect. Through real HTTP, and in Debian's chromium at phone and
 * desktop widths.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { FirstRun } from "../src/accounts/first-run.ts";
import { Browser as CookieBrowser } from "./support/browser.ts";
import { expectNoSidewaysScroll, launchChromium, SHOTS, signOut, watchFailures, WIDTHS } from "./support/chromium.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

let browser: Browser;
const servers: TestServer[] = [];
beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  for (const s of servers) await s.close();
});

async function fresh(env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startTestServer({ env });
  servers.push(server);
  return server;
}

const OWNER = { organization_name: "Harbour Works", email: "boss@example.com", password: "lighthouse-keeper-2026" };

test("from another machine the owner needs the setup token; made once, signed in; then the setup is closed", async () => {
  const server = await fresh();
  const token = await server.ctx.accounts.firstRun.token();
  expect(token.length).toBeGreaterThan(20);
  // The test client's address is 10.x (forwarded by a trusted loopback proxy): not the machine itself.
  const remote = new CookieBrowser(server.url);
  const options = await remote.get("/auth/session/options");
  expect(options.status).toBe(200);
  expect(options.body).toEqual({ signed_in: false, needs_owner: true, setup_token_required: true, identity_provider: null, registration_open: false, mail_configured: false });

  const without = await remote.post("/auth/session/setup-owner", OWNER);
  expect(without.status).toBe(403);
  expect(without.body.code).toBe("SETUP_TOKEN_REQUIRED");
  expect(without.body.detail).toContain("first run");
  const wrong = await remote.post("/auth/session/setup-owner", { ...OWNER, setup_token: "not-the-token-at-all" });
  expect(wrong.status).toBe(403);
  const bad = await remote.post("/auth/session/setup-owner", { ...OWNER, email: "not an address", setup_token: token });
  expect(bad.status).toBe(400);
  expect(bad.body.detail).toContain("email");
  const weak = await remote.post("/auth/session/setup-owner", { ...OWNER, password: "password1", setup_token: token });
  expect(weak.status).toBe(400);
  expect(weak.body.code).toBe("PASSWORD_REJECTED");
  // Nothing was left behind by the refusals.
  expect((await server.ctx.sql.one<{ n: number }>("SELECT count(*) AS n FROM organizations"))!.n).toBe(0);

  const made = await remote.post("/auth/session/setup-owner", { ...OWNER, name: "Harbour Master", setup_token: token });
  expect(made.status).toBe(201);
  expect(made.body.role).toBe("owner");
  expect(made.body.organization.name).toBe("Harbour Works");
  expect(made.body.organization.tier).toBe("CUSTOM");
  expect(made.body.user.email_verified).toBe(true);
  // Signed in: the session cookie reads the library.
  expect((await remote.get("/files")).status).toBe(200);

  const again = await new CookieBrowser(server.url).post("/auth/session/setup-owner", { ...OWNER, email: "other@example.com", organization_name: "Other", setup_token: token });
  expect(again.status).toBe(409);
  expect(again.body.code).toBe("SETUP_COMPLETE");
  expect((await remote.get("/auth/session/options")).body.needs_owner).toBe(false);
  // The owner signs in with the password chosen.
  const login = await new CookieBrowser(server.url).post("/auth/session/login", { email: OWNER.email, password: OWNER.password });
  expect(login.status).toBe(200);
}, 60_000);

test("processes over one database share one setup token: another process's is accepted, and it goes with the first owner", async () => {
  const server = await fresh();
  // A second api process of the deployment: its own FirstRun over the same database.
  const other = new FirstRun(server.ctx.sql, server.ctx.clock);
  const [mine, theirs] = await Promise.all([server.ctx.accounts.firstRun.token(), other.token()]);
  expect(theirs).toBe(mine);
  const made = await new CookieBrowser(server.url).post("/auth/session/setup-owner", { ...OWNER, setup_token: theirs });
  expect(made.status).toBe(201);
  expect(Number((await server.ctx.sql.one<{ n: number | string }>("SELECT count(*) AS n FROM first_run_token"))!.n)).toBe(0);
}, 60_000);

test("two owners asked for at once: one is made, the other refused", async () => {
  const server = await fresh();
  const token = await server.ctx.accounts.firstRun.token();
  const answers = await Promise.all(
    ["a", "b", "c"].map((x) => new CookieBrowser(server.url).post("/auth/session/setup-owner", { ...OWNER, organization_name: `Org ${x}`, email: `${x}@example.com`, setup_token: token })),
  );
  expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409]);
  expect((await server.ctx.sql.one<{ n: number }>("SELECT count(*) AS n FROM users"))!.n).toBe(1);
}, 60_000);

test("in the browser on the machine itself: / offers to create the owner (no token asked), which lands in the library", async () => {
  const server = await fresh();
  for (const [size, width] of [["phone", WIDTHS.phone], ["desktop", WIDTHS.desktop]] as const) {
    const page = await browser.newPage({ viewport: { width, height: size === "phone" ? 844 : 1080 } });
    const failures = watchFailures(page);
    try {
      await page.goto(server.url);
      await page.getByRole("heading", { name: "Create the owner" }).waitFor({ timeout: 30_000 });
      // From loopback no token is asked; the ways not set up here are not offered.
      expect(await page.getByLabel("Setup token").count()).toBe(0);
      expect(await page.getByRole("button", { name: /identity provider|Create an account/ }).count()).toBe(0);
      await expectNoSidewaysScroll(page);
      await page.screenshot({ path: join(SHOTS, `first-run-${size}.png`), fullPage: true });
      expect(failures.failed()).toEqual([]);
    } finally {
      await page.close();
    }
  }
  const page = await browser.newPage({ viewport: { width: WIDTHS.laptop, height: 900 } });
  try {
    await page.goto(server.url);
    await page.getByLabel("Organization name").fill("Quay Studio");
    await page.getByLabel("Email").fill("owner@example.com");
    await page.getByLabel("Password").fill("short");
    await page.getByRole("button", { name: "Create the owner" }).click();
    // The browser's own check stops a short password before it is sent.
    expect(await page.getByLabel("Password").evaluate((el) => (el as HTMLInputElement).validity.tooShort)).toBe(true);
    // The server's refusal is shown as it says it.
    await page.getByLabel("Password").fill("quay-studio-owner-2026");
    await page.getByRole("button", { name: "Create the owner" }).click();
    await expect(page.getByRole("alert").textContent({ timeout: 30_000 })).resolves.toContain("must not contain the email address");
    await page.getByLabel("Password").fill("quay-studio-harbour-2026");
    await page.getByRole("button", { name: "Create the owner" }).click();
    await page.getByRole("heading", { name: "Library" }).waitFor({ timeout: 30_000 });
    await page.getByRole("button", { name: /^Account: owner@example\.com, / }).waitFor();
    // Once made, a reload offers sign-in, never the form again.
    await signOut(page);
    await page.getByRole("button", { name: "Sign in", exact: true }).waitFor({ timeout: 30_000 });
    expect(await page.getByRole("heading", { name: "Create the owner" }).count()).toBe(0);
  } finally {
    await page.close();
  }
}, 120_000);

test("sign-in offers self-registration only when it is open; the Cloud drives page names the settings when no drive is set up", async () => {
  const open = await fresh({ MEDIABOX_ALLOW_REGISTRATION: "true" });
  const closed = await fresh();
  // An API-key organization and no user: the first-run page still lets a key in.
  const tenant = await closed.tenant({ tier: "CUSTOM" });
  for (const server of [open, closed]) await new CookieBrowser(server.url).post("/auth/session/setup-owner", { ...OWNER, setup_token: await server.ctx.accounts.firstRun.token() });
  const page = await browser.newPage({ viewport: { width: WIDTHS.phone, height: 844 } });
  const failures = watchFailures(page);
  try {
    await page.goto(open.url);
    await page.getByRole("button", { name: "Create an account" }).waitFor({ timeout: 30_000 });
    await page.goto(closed.url);
    await page.getByRole("button", { name: "Use an API key instead" }).waitFor({ timeout: 30_000 });
    expect(await page.getByRole("button", { name: "Create an account" }).count()).toBe(0);
    await page.getByRole("button", { name: "Use an API key instead" }).click();
    await page.getByLabel("API key").fill(tenant.key);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: "Library" }).waitFor({ timeout: 30_000 });
    await page.goto(`${closed.url}/#/cloud`);
    await page.getByText("No cloud drive is set up on this appliance").waitFor({ timeout: 30_000 });
    expect(await page.getByRole("button", { name: /^Connect/ }).count()).toBe(0);
    await expect(page.locator("main").textContent()).resolves.toContain("MEDIABOX_GOOGLE_DRIVE_CLIENT_ID");
    await expectNoSidewaysScroll(page);
    await page.screenshot({ path: join(SHOTS, "cloud-unconfigured-phone.png"), fullPage: true });
    expect(failures.failed()).toEqual([]);
  } finally {
    await page.close();
  }
}, 120_000);

test("GET /cloud-storage/providers says which drives this appliance can connect", async () => {
  const server = await fresh({ MEDIABOX_NEXTCLOUD_URL: "http://127.0.0.1:9/", MEDIABOX_NEXTCLOUD_CLIENT_ID: "mediabox", MEDIABOX_NEXTCLOUD_CLIENT_SECRET: "not-a-real-secret" });
  const tenant = await server.tenant();
  const answer = await tenant.api.get("/cloud-storage/providers");
  expect(answer.status).toBe(200);
  expect(answer.body.items).toEqual([
    { name: "google_drive", configured: false },
    { name: "nextcloud", configured: true },
  ]);
  expect((await server.anonymous().get("/cloud-storage/providers")).status).toBe(401);
}, 60_000);
