/**
 * Users, sessions and sign-in over real HTTP with a cookie jar: the CLI bootstrap, password
 * sign-in and its refusals (same answer for unknown user and wrong password, throttling, per-IP
 * limits), CSRF, rotation, sign-out, expiry, roles, registration with a mailed verification link,
 * password reset and invitations through a local SMTP server, API keys from a session, support.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { usersCommand, supportCommand } from "../src/cli/commands.ts";
import { ManualClock } from "../src/clock.ts";
import { checkNewPassword } from "../src/accounts/passwords.ts";
import { createOrganization } from "../src/tenancy/organizations.ts";
import type { Tier } from "../src/tenancy/tiers.ts";
import { Browser } from "./support/browser.ts";
import { MailServer } from "./support/mail-server.ts";
import { waitFor } from "./support/polling.ts";
import { ApiClient, startTestServer, type TestServer } from "./support/server.ts";

const PASSWORD = "correct horse battery staple";
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  // In reverse order, one at a time: a server finishes its mails before the SMTP server goes.
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

async function server(options: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const s = await startTestServer(options);
  closers.push(() => s.close());
  return s;
}

async function mailServer(): Promise<MailServer> {
  const m = await MailServer.start();
  closers.push(() => m.close());
  return m;
}

let users = 0;
/** An organization with a user of `role` made by the CLI (as an admin would); returns their email. */
async function userIn(s: TestServer, options: { role?: string; tier?: Tier; org?: string } = {}): Promise<{ email: string; org: string; orgId: string }> {
  users += 1;
  const orgName = options.org ?? `acct-${users}-${crypto.randomUUID().slice(0, 6)}`;
  const org = options.org
    ? (await s.ctx.sql.one<{ id: string }>("SELECT id FROM organizations WHERE name = ?", [orgName]))!
    : await createOrganization(s.ctx.sql, s.ctx.clock, orgName, options.tier ?? "STARTER");
  const email = `user${users}.${crypto.randomUUID().slice(0, 6)}@example.com`;
  await usersCommand(s.ctx.sql, s.ctx.clock, s.config, s.ctx.accounts, ["create", email], { org: orgName, role: options.role ?? "owner", password: PASSWORD });
  return { email, org: orgName, orgId: org.id };
}

async function signedIn(s: TestServer, email: string): Promise<Browser> {
  const browser = new Browser(s.url);
  const res = await browser.post("/auth/session/login", { email, password: PASSWORD });
  expect(res.status).toBe(200);
  return browser;
}

describe("password sign-in and the session cookie", () => {
  test("a CLI-made owner signs in; the cookie is HttpOnly, SameSite=Lax, Path=/; the session acts at 300/minute with the role's permissions", async () => {
    const s = await server();
    const { email, orgId } = await userIn(s);
    const browser = new Browser(s.url);
    const login = await browser.post("/auth/session/login", { email, password: PASSWORD });
    expect(login.status).toBe(200);
    expect(login.body.user.email).toBe(email);
    expect(login.body.organization.id).toBe(orgId);
    expect(login.body.role).toBe("owner");
    expect(login.body.permissions).toEqual(["view", "edit", "delete"]);
    expect(login.body.csrf_token).toBe(browser.jar.get("mediabox_csrf")!);
    const cookie = login.headers.getSetCookie().find((c) => c.startsWith("mediabox_session="))!;
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).toContain("Path=/");
    expect(cookie).not.toContain("Secure");
    // Only the hash of the session id is stored.
    const sessionId = browser.jar.get("mediabox_session")!;
    const rows = await s.ctx.sql.all<Record<string, unknown>>("SELECT * FROM user_sessions");
    expect(JSON.stringify(rows)).not.toContain(sessionId);

    const me = await browser.get("/auth/session");
    expect(me.status).toBe(200);
    expect(me.body.csrf_token).toBeUndefined();
    const projects = await browser.get("/projects");
    expect(projects.status).toBe(200);
    expect(projects.headers.get("x-ratelimit-limit")).toBe("300");
    const created = await browser.post("/projects", { name: "From the dashboard" });
    expect(created.status).toBe(201);
    expect(created.body.created_by).toStartWith("user:");
  });

  test("the Secure attribute is set when the public URL is https", async () => {
    const s = await server({ env: { MEDIABOX_PUBLIC_URL: "https://media.example.com" } });
    const { email } = await userIn(s);
    const login = await new Browser(s.url).post("/auth/session/login", { email, password: PASSWORD }, { headers: { origin: "https://media.example.com" } });
    expect(login.status).toBe(200);
    for (const cookie of login.headers.getSetCookie()) expect(cookie).toContain("Secure");
  });

  test("an unknown user and a wrong password get the same status and body", async () => {
    const s = await server();
    const { email } = await userIn(s);
    const wrong = await new Browser(s.url).post("/auth/session/login", { email, password: "not the password at all" });
    const unknown = await new Browser(s.url).post("/auth/session/login", { email: "nobody@example.com", password: "not the password at all" });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.code).toBe("INVALID_CREDENTIALS");
    expect(wrong.headers.getSetCookie()).toEqual([]);
  });

  test("failed sign-ins lock the account (whoever tries, from any address), for unknown addresses alike", async () => {
    const s = await server();
    const { email } = await userIn(s);
    for (const address of [email, "ghost@example.com"]) {
      for (let i = 0; i < 5; i++) {
        expect((await new Browser(s.url).post("/auth/session/login", { email: address, password: `wrong password ${i}` })).status).toBe(401);
      }
      const locked = await new Browser(s.url).post("/auth/session/login", { email: address, password: PASSWORD });
      expect(locked.status).toBe(429);
      expect(locked.body.code).toBe("LOGIN_THROTTLED");
      expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    }
  });

  test("failed sign-ins from one IP lock the IP after 30 (on top of its 5 requests a minute)", async () => {
    const clock = new ManualClock();
    const s = await server({ clock });
    const { email } = await userIn(s);
    const attacker = new Browser(s.url);
    for (let i = 0; i < 30; i++) {
      if (i > 0 && i % 5 === 0) clock.advance(61_000);
      const res = await attacker.post("/auth/session/login", { email: `victim${i}@example.com`, password: "guess" });
      expect(res.status).toBe(401);
    }
    clock.advance(61_000);
    const locked = await attacker.post("/auth/session/login", { email, password: PASSWORD });
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe("LOGIN_THROTTLED");
    expect((await new Browser(s.url).post("/auth/session/login", { email, password: PASSWORD })).status).toBe(200);
    clock.advance(5 * 60_000 + 1000);
    expect((await attacker.post("/auth/session/login", { email, password: PASSWORD })).status).toBe(200);
  });

  test("password rules: length, common passwords (with digits appended), too few characters, the address itself", () => {
    const refused = ["short1", "password123456", "Qwerty!2024", "aaaaaaaaaaaa", "ababababababab", "jane.doe-secret", "x".repeat(257)];
    for (const password of refused) expect(() => checkNewPassword(password, "jane.doe@example.com"), password).toThrow();
    for (const password of ["correct horse battery staple", "tr0ub4dor&3xyz", "ünïcödé pässwörd"]) expect(() => checkNewPassword(password, "jane.doe@example.com")).not.toThrow();
  });

  test("the spec's per-IP limit: 5 sign-in requests a minute from one address", async () => {
    const s = await server();
    const browser = new Browser(s.url);
    for (let i = 0; i < 5; i++) expect((await browser.post("/auth/session/login", { email: "a@example.com", password: "x" })).status).toBe(401);
    const sixth = await browser.post("/auth/session/login", { email: "a@example.com", password: "x" });
    expect(sixth.status).toBe(429);
    expect(sixth.body.code).toBe("RATE_LIMITED");
    expect(sixth.headers.get("retry-after")).not.toBeNull();
    // The other routes of the table have their own budgets.
    const limits: [string, number][] = [["/auth/session/password-reset/request", 3], ["/auth/session/verify-email", 5]];
    for (const [path, limit] of limits) {
      const other = new Browser(s.url);
      const body = path.endsWith("request") ? { email: "a@example.com" } : { token: "x".repeat(20) };
      for (let i = 0; i < limit; i++) expect((await other.post(path, body)).status).not.toBe(429);
      expect((await other.post(path, body)).status).toBe(429);
    }
  });

  test("cookie-authenticated writes need the CSRF token and a same-origin Origin", async () => {
    const s = await server();
    const { email } = await userIn(s);
    const browser = await signedIn(s, email);
    const missing = await browser.post("/projects", { name: "no token" }, { csrf: false });
    expect(missing.status).toBe(403);
    expect(missing.body.code).toBe("CSRF_FAILED");
    const wrong = await browser.post("/projects", { name: "wrong token" }, { csrf: false, headers: { "x-csrf-token": "A".repeat(43) } });
    expect(wrong.status).toBe(403);
    const crossSite = await browser.post("/projects", { name: "cross site" }, { headers: { origin: "https://evil.example" } });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body.code).toBe("CSRF_FAILED");
    // Sign-in itself refuses another site's Origin (login CSRF).
    const loginCsrf = await new Browser(s.url).post("/auth/session/login", { email, password: PASSWORD }, { headers: { origin: "https://evil.example" } });
    expect(loginCsrf.status).toBe(403);
    // A cross-site read or WebSocket upgrade with the cookie is refused by its Origin too.
    expect((await browser.request("GET", "/projects", undefined, { headers: { origin: "https://evil.example" } })).status).toBe(403);
    // Reads need no token; a write with it works.
    expect((await browser.get("/projects")).status).toBe(200);
    expect((await browser.post("/projects", { name: "with token" })).status).toBe(201);
  });

  test("API keys keep working as before, and a Bearer key is judged alone even beside a cookie", async () => {
    const s = await server();
    const tenant = await s.tenant();
    expect((await tenant.api.get("/projects")).headers.get("x-ratelimit-limit")).toBe("100");
    const { email } = await userIn(s);
    const browser = await signedIn(s, email);
    const mixed = await browser.request("GET", "/auth/session", undefined, { headers: { authorization: `Bearer ${tenant.key}` } });
    expect(mixed.status).toBe(403);
    expect(mixed.body.code).toBe("SESSION_REQUIRED");
  });
});

describe("session lifetime", () => {
  test("rotate-session: the old cookie stops at once, the new one works, the absolute expiry stays", async () => {
    const s = await server();
    const { email } = await userIn(s);
    const browser = await signedIn(s, email);
    const before = await browser.get("/auth/session");
    const oldCookie = browser.jar.get("mediabox_session")!;
    const rotated = await browser.post("/auth/session/rotate-session");
    expect(rotated.status).toBe(200);
    expect(browser.jar.get("mediabox_session")).not.toBe(oldCookie);
    expect(rotated.body.csrf_token).toBe(browser.jar.get("mediabox_csrf")!);
    expect(rotated.body.session.expires_at).toBe(before.body.session.expires_at);
    expect((await browser.get("/auth/session")).status).toBe(200);
    const stale = await new ApiClient(s.url, null).get("/auth/session", { cookie: `mediabox_session=${oldCookie}` });
    expect(stale.status).toBe(401);
    expect(stale.body.detail).toContain("session has ended");
    // Signing in again in the same browser ends the session it held.
    const held = browser.jar.get("mediabox_session")!;
    expect((await browser.post("/auth/session/login", { email, password: PASSWORD })).status).toBe(200);
    expect((await new ApiClient(s.url, null).get("/auth/session", { cookie: `mediabox_session=${held}` })).status).toBe(401);
    expect((await browser.get("/auth/session")).status).toBe(200);
  });

  test("logout ends this session; logout-all ends every session of the user", async () => {
    const s = await server();
    const { email } = await userIn(s);
    const one = await signedIn(s, email);
    const two = await signedIn(s, email);
    const three = await signedIn(s, email);
    expect((await one.post("/auth/session/logout")).status).toBe(204);
    expect(one.jar.get("mediabox_session")).toBeNull();
    expect((await two.get("/auth/session")).status).toBe(200);
    const all = await two.post("/auth/session/logout-all");
    expect(all.body.sessions_ended).toBe(2);
    expect((await three.get("/auth/session")).status).toBe(401);
    expect((await two.get("/projects")).status).toBe(401);
  });

  test("idle and absolute expiry", async () => {
    const clock = new ManualClock();
    const s = await server({ clock, env: { MEDIABOX_SESSION_IDLE_MINUTES: "30", MEDIABOX_SESSION_ABSOLUTE_HOURS: "2" } });
    const { email } = await userIn(s);
    const idle = await signedIn(s, email);
    clock.advance(31 * 60_000);
    expect((await idle.get("/auth/session")).status).toBe(401);

    const busy = await signedIn(s, email);
    // Used every 20 minutes it survives its idle limit, but not its absolute one.
    for (let minutes = 20; minutes < 120; minutes += 20) {
      clock.advance(20 * 60_000);
      expect((await busy.get("/auth/session")).status).toBe(200);
    }
    clock.advance(20 * 60_000);
    expect((await busy.get("/auth/session")).status).toBe(401);
  });
});

describe("roles and organizations", () => {
  test("account routes refuse a viewer or an API key before they look at the body", async () => {
    const s = await server();
    const owner = await userIn(s);
    const viewer = await userIn(s, { org: owner.org, role: "viewer" });
    const browser = await signedIn(s, viewer.email);
    const malformed = { email: 5, role: ["x"], name: 7, permissions: "all", organization_id: 9, provider: 3 };
    const routes: [string, string][] = [
      ["POST", "/account/invitations"],
      ["POST", "/account/api-keys"],
      ["PATCH", "/account/members/someone"],
      ["DELETE", "/account/members/someone"],
      ["DELETE", "/account/api-keys/some-key"],
    ];
    for (const [method, path] of routes) {
      const res = await browser.request(method, path, method === "DELETE" ? undefined : malformed);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.code, `${method} ${path}`).toBe("PERMISSION_DENIED");
    }
    const key = new ApiClient(s.url, (await s.tenant()).key);
    for (const [method, path] of [...routes, ["POST", "/auth/session/switch-organization"], ["POST", "/auth/session/unlink-provider"], ["POST", "/auth/session/link-provider"]] as [string, string][]) {
      const res = await key.request(method, path, method === "DELETE" ? undefined : malformed);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.code, `${method} ${path}`).toBe("SESSION_REQUIRED");
    }
  });

  test("a viewer reads but cannot write; a member cannot manage keys; set-role applies at once", async () => {
    const s = await server();
    const owner = await userIn(s);
    const viewer = await userIn(s, { org: owner.org, role: "viewer" });
    const browser = await signedIn(s, viewer.email);
    expect((await browser.get("/projects")).status).toBe(200);
    const denied = await browser.post("/projects", { name: "nope" });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe("PERMISSION_DENIED");
    expect(denied.body.detail).toContain("viewer");
    await usersCommand(s.ctx.sql, s.ctx.clock, s.config, s.ctx.accounts, ["set-role", viewer.email], { org: owner.org, role: "member" });
    expect((await browser.post("/projects", { name: "now allowed" })).status).toBe(201);
    expect((await browser.post("/account/api-keys", { name: "x" })).status).toBe(403);
    // The last owner cannot be demoted.
    await expect(usersCommand(s.ctx.sql, s.ctx.clock, s.config, s.ctx.accounts, ["set-role", owner.email], { org: owner.org, role: "admin" })).rejects.toThrow(/last owner/);
  });

  test("owners and admins change roles and remove members over HTTP; admins leave owners alone; the last owner stays", async () => {
    const s = await server();
    const owner = await userIn(s);
    const admin = await userIn(s, { org: owner.org, role: "admin" });
    const member = await userIn(s, { org: owner.org, role: "member" });
    const ids = Object.fromEntries(
      (await (await signedIn(s, owner.email)).get("/account/members")).body.items.map((m: { email: string; id: string }) => [m.email, m.id]),
    ) as Record<string, string>;
    const asAdmin = await signedIn(s, admin.email);
    const asMember = await signedIn(s, member.email);
    expect((await asAdmin.request("PATCH", `/account/members/${ids[member.email]}`, { role: "viewer" })).status).toBe(200);
    expect((await asMember.post("/projects", { name: "viewer now" })).status).toBe(403);
    expect((await asAdmin.request("PATCH", `/account/members/${ids[member.email]}`, { role: "owner" })).status).toBe(403);
    expect((await asAdmin.request("PATCH", `/account/members/${ids[owner.email]}`, { role: "member" })).status).toBe(403);
    expect((await asAdmin.delete(`/account/members/${ids[owner.email]}`)).status).toBe(403);
    expect((await asAdmin.delete(`/account/members/${crypto.randomUUID()}`)).body.code).toBe("MEMBER_NOT_FOUND");
    const asOwner = await signedIn(s, owner.email);
    expect((await asOwner.request("PATCH", `/account/members/${ids[owner.email]}`, { role: "admin" })).body.code).toBe("LAST_OWNER");
    expect((await asOwner.delete(`/account/members/${ids[owner.email]}`)).body.code).toBe("LAST_OWNER");
    expect((await asAdmin.delete(`/account/members/${ids[member.email]}`)).status).toBe(204);
    // The removed member's session in that organization ends with the membership.
    expect((await asMember.get("/auth/session")).status).toBe(401);
    expect((await asOwner.get("/account/members")).body.items).toHaveLength(2);
  });

  test("a user in two organizations switches between them", async () => {
    const s = await server();
    const first = await userIn(s);
    const second = await userIn(s);
    await usersCommand(s.ctx.sql, s.ctx.clock, s.config, s.ctx.accounts, ["set-role", first.email], { org: second.org, role: "viewer" });
    const browser = await signedIn(s, first.email);
    expect((await browser.get("/auth/session")).body.organizations).toHaveLength(2);
    const switched = await browser.post("/auth/session/switch-organization", { organization_id: second.orgId });
    expect(switched.status).toBe(200);
    expect(switched.body.organization.id).toBe(second.orgId);
    expect(switched.body.role).toBe("viewer");
    expect((await browser.post("/projects", { name: "viewer here" })).status).toBe(403);
    const stranger = await userIn(s);
    expect((await browser.post("/auth/session/switch-organization", { organization_id: stranger.orgId })).body.code).toBe("ORGANIZATION_NOT_FOUND");
  });
});

describe("API keys from the dashboard", () => {
  test("an owner creates a key (shown once), sees its last use, revokes it; FREE is refused; API keys cannot manage keys", async () => {
    const s = await server();
    const { email } = await userIn(s, { tier: "STARTER" });
    const browser = await signedIn(s, email);
    const created = await browser.post("/account/api-keys", { name: "ci", permissions: ["view"] });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^mbx_/);
    expect(created.body.permissions).toEqual(["view"]);
    const api = new ApiClient(s.url, created.body.key);
    expect((await api.get("/projects")).status).toBe(200);
    expect((await api.post("/projects", { name: "x" })).status).toBe(403);
    const listed = await browser.get("/account/api-keys");
    expect(listed.body.items[0].last_used_at).not.toBeNull();
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
    const byKey = await api.get("/account/api-keys");
    expect(byKey.status).toBe(403);
    expect(byKey.body.code).toBe("SESSION_REQUIRED");
    expect((await browser.delete(`/account/api-keys/${created.body.id}`)).status).toBe(200);
    expect((await api.get("/projects")).status).toBe(401);
    expect((await browser.delete(`/account/api-keys/${crypto.randomUUID()}`)).body.code).toBe("API_KEY_NOT_FOUND");

    const free = await userIn(s, { tier: "FREE" });
    const freeBrowser = await signedIn(s, free.email);
    const refused = await freeBrowser.post("/account/api-keys", { name: "nope" });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("API_KEYS_NOT_IN_TIER");
    expect((await freeBrowser.get("/auth/session")).body.organization.api_keys_allowed).toBe(false);
  });
});

describe("mail: registration, verification, password reset, invitations", () => {
  test("registration is off by default", async () => {
    const s = await server();
    const res = await new Browser(s.url).post("/auth/session/register", { email: "new@example.com", password: PASSWORD, organization_name: "New" });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("REGISTRATION_CLOSED");
  });

  test("registration mails a verification link; sign-in waits for it; a taken address gets the same answer", async () => {
    const mail = await mailServer();
    const s = await server({ env: { ...mail.env(), MEDIABOX_ALLOW_REGISTRATION: "true" } });
    const weak = await new Browser(s.url).post("/auth/session/register", { email: "reg@example.com", password: "password123", organization_name: "Reg" });
    expect(weak.status).toBe(400);
    expect(weak.body.code).toBe("PASSWORD_REJECTED");
    const first = await new Browser(s.url).post("/auth/session/register", { email: "reg@example.com", password: PASSWORD, organization_name: "Reg" });
    // A taken organization name is refused before the address is looked at.
    const takenName = await new Browser(s.url).post("/auth/session/register", { email: "reg@example.com", password: PASSWORD, organization_name: "reg" });
    expect(takenName.status).toBe(400);
    expect(takenName.body.detail).toStartWith("organization_name:");
    expect(first.status).toBe(202);
    const verification = await mail.waitForMail("reg@example.com", /verify your email/i);
    const early = await new Browser(s.url).post("/auth/session/login", { email: "reg@example.com", password: PASSWORD });
    expect(early.status).toBe(403);
    expect(early.body.code).toBe("EMAIL_NOT_VERIFIED");
    const again = await new Browser(s.url).post("/auth/session/register", { email: "REG@example.com", password: PASSWORD, organization_name: "Reg two" });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    await mail.waitForMail("reg@example.com", /already has one/);

    const token = MailServer.token(verification);
    expect((await new Browser(s.url).post("/auth/session/verify-email", { token })).status).toBe(200);
    expect((await new Browser(s.url).post("/auth/session/verify-email", { token })).body.code).toBe("TOKEN_INVALID");
    const browser = await signedIn(s, "reg@example.com");
    const me = await browser.get("/auth/session");
    expect(me.body.organization.tier).toBe("FREE");
    expect(me.body.role).toBe("owner");
    expect((await browser.post("/account/api-keys", {})).body.code).toBe("API_KEYS_NOT_IN_TIER");
  });

  test("password reset by mail: one hour, single use, ends every session; unknown addresses get the same answer", async () => {
    const mail = await mailServer();
    const s = await server({ env: mail.env() });
    const { email } = await userIn(s);
    const session = await signedIn(s, email);
    const unknown = await new Browser(s.url).post("/auth/session/password-reset/request", { email: "ghost@example.com" });
    const known = await new Browser(s.url).post("/auth/session/password-reset/request", { email });
    expect(known.status).toBe(202);
    expect(unknown.status).toBe(202);
    expect(unknown.body).toEqual(known.body);
    const token = MailServer.token(await mail.waitForMail(email, /new password/));
    expect(mail.received.some((m) => m.to.includes("ghost@example.com"))).toBe(false);

    expect((await new Browser(s.url).post("/auth/session/password-reset/validate", { token })).body.valid).toBe(true);
    const weak = await new Browser(s.url).post("/auth/session/password-reset/complete", { token, password: "short" });
    expect(weak.body.code).toBe("PASSWORD_REJECTED");
    const done = await new Browser(s.url).post("/auth/session/password-reset/complete", { token, password: "a brand new passphrase" });
    expect(done.status).toBe(200);
    expect((await session.get("/auth/session")).status).toBe(401);
    expect((await new Browser(s.url).post("/auth/session/password-reset/complete", { token, password: "another new passphrase" })).body.code).toBe("TOKEN_INVALID");
    expect((await new Browser(s.url).post("/auth/session/login", { email, password: PASSWORD })).status).toBe(401);
    expect((await new Browser(s.url).post("/auth/session/login", { email, password: "a brand new passphrase" })).status).toBe(200);
  });

  test("without SMTP an invitation answers its link (nothing was sent); pending invitations are listed and revoked, per organization and by managers only", async () => {
    const s = await server();
    const owner = await userIn(s);
    const browser = await signedIn(s, owner.email);
    const invited = await browser.post("/account/invitations", { email: "Pending@Example.com", role: "viewer" });
    expect(invited.status).toBe(202);
    expect(invited.body.mailed).toBe(false);
    expect(invited.body.invite_url).toMatch(/\/auth\/accept-invite\?token=/);
    const listed = await browser.get("/account/invitations");
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([{ email: "pending@example.com", role: "viewer", invited_at: expect.any(String), expires_at: expect.any(String) }]);
    // Another organization's owner sees none of them and cannot revoke them.
    const stranger = await signedIn(s, (await userIn(s)).email);
    expect((await stranger.get("/account/invitations")).body.items).toEqual([]);
    expect((await stranger.delete("/account/invitations/pending@example.com")).status).toBe(404);
    // A member may not list or revoke; an API key may not either.
    const member = await userIn(s, { org: owner.org, role: "member" });
    const memberBrowser = await signedIn(s, member.email);
    expect((await memberBrowser.get("/account/invitations")).status).toBe(403);
    expect((await memberBrowser.delete("/account/invitations/pending@example.com")).status).toBe(403);
    expect((await (await s.tenant()).api.get("/account/invitations")).body.code).toBe("SESSION_REQUIRED");
    // Revoked (case-insensitively): the link stops working and the list is empty.
    expect((await browser.delete("/account/invitations/PENDING@example.com")).status).toBe(204);
    expect((await browser.get("/account/invitations")).body.items).toEqual([]);
    const again = await browser.delete("/account/invitations/pending@example.com");
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("INVITATION_NOT_FOUND");
    const token = new URL(invited.body.invite_url).searchParams.get("token")!;
    expect((await new Browser(s.url).post("/auth/session/accept-invite", { token, password: "a fine passphrase 1" })).body.code).toBe("TOKEN_INVALID");
  });

  test("an owner invites by mail; a new address creates its account and is signed in; an existing user joins", async () => {
    const mail = await mailServer();
    const s = await server({ env: mail.env() });
    const owner = await userIn(s);
    const browser = await signedIn(s, owner.email);
    const invited = await browser.post("/account/invitations", { email: "invitee@example.com", role: "member" });
    expect(invited.status).toBe(202);
    expect(JSON.stringify(invited.body)).not.toContain("token");
    expect(invited.body.mailed).toBe(true);
    const token = MailServer.token(await mail.waitForMail("invitee@example.com", /invites you to join/));
    const newcomer = new Browser(s.url);
    const missingPassword = await newcomer.post("/auth/session/accept-invite", { token });
    expect(missingPassword.status).toBe(400);
    const accepted = await newcomer.post("/auth/session/accept-invite", { token, password: "a fine passphrase 1", name: "Invitee" });
    expect(accepted.status).toBe(201);
    expect(accepted.body.role).toBe("member");
    expect(accepted.body.organization.id).toBe(owner.orgId);
    expect((await newcomer.post("/projects", { name: "by the invitee" })).status).toBe(201);
    expect((await newcomer.post("/auth/session/accept-invite", { token, password: "a fine passphrase 1" })).body.code).toBe("TOKEN_INVALID");

    const other = await userIn(s);
    expect((await browser.post("/account/invitations", { email: other.email, role: "viewer" })).status).toBe(202);
    const second = MailServer.token(await mail.waitForMail(other.email, /invites you to join/));
    const joined = await new Browser(s.url).post("/auth/session/accept-invite", { token: second });
    expect(joined.status).toBe(200);
    expect(joined.body.organization.role).toBe("viewer");
    const members = await browser.get("/account/members");
    expect(members.body.items.map((m: { email: string }) => m.email).sort()).toEqual([owner.email, "invitee@example.com", other.email].sort());

    const member = await signedIn(s, other.email);
    await member.post("/auth/session/switch-organization", { organization_id: owner.orgId });
    expect((await member.post("/account/invitations", { email: "x@example.com", role: "member" })).status).toBe(403);
  });

  test("without SMTP the CLI prints the links, and a set-password link bootstraps a user made without a password", async () => {
    const s = await server();
    const org = await createOrganization(s.ctx.sql, s.ctx.clock, "Bootstrap", "STARTER");
    const created = await usersCommand(s.ctx.sql, s.ctx.clock, s.config, s.ctx.accounts, ["create", "first@example.com"], { org: org.name, role: "owner" });
    const token = /\?token=([\w-]+)/.exec(created.stderr!)![1]!;
    expect((await new Browser(s.url).post("/auth/session/password-reset/complete", { token, password: "the bootstrap passphrase" })).status).toBe(200);
    expect((await new Browser(s.url).post("/auth/session/login", { email: "first@example.com", password: "the bootstrap passphrase" })).status).toBe(200);
    const invite = await usersCommand(s.ctx.sql, s.ctx.clock, s.config, s.ctx.accounts, ["invite", "second@example.com"], { org: org.name, role: "viewer" });
    expect(invite.stdout).toMatch(/\/auth\/accept-invite\?token=/);
    const list = await usersCommand(s.ctx.sql, s.ctx.clock, s.config, s.ctx.accounts, ["list"], { org: org.name });
    expect(list.stdout).toContain("first@example.com");
    expect(list.stdout).toContain("Bootstrap:owner");
  });
});

describe("support", () => {
  test("contact messages are stored, listed by the CLI, mailed to the support address, 3 a minute per IP", async () => {
    const mail = await mailServer();
    const s = await server({ env: { ...mail.env(), MEDIABOX_SUPPORT_EMAIL: "support@example.com" } });
    const visitor = new Browser(s.url);
    const sent = await visitor.post("/support/contact", { email: "visitor@example.com", name: "Vis", subject: "Hello", message: "Can I get a demo?" });
    expect(sent.status).toBe(202);
    await mail.waitForMail("support@example.com", /Can I get a demo/);
    await waitFor(async () => (await supportCommand(s.ctx.sql, ["list"])).stdout!.includes("mailed"), { what: "the message to be marked mailed", timeoutMs: 30_000 });
    expect((await supportCommand(s.ctx.sql, ["list"])).stdout).toContain("visitor@example.com");
    expect((await visitor.post("/support/contact", { email: "bad", subject: "x", message: "y" })).status).toBe(400);
    expect((await visitor.post("/support/contact", { email: "visitor@example.com", subject: "x", message: "y" })).status).toBe(202);
    const fourth = await visitor.post("/support/contact", { email: "visitor@example.com", subject: "x", message: "y" });
    expect(fourth.status).toBe(429);
  });
});
