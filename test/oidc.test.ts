/**
 * Sign-in through an OpenID Connect provider: oidc-provider (from npm) runs on 127.0.0.1 as the
 * site's identity provider, and a test browser walks the whole authorization code flow (PKCE,
 * state, nonce) through its login and consent pages. Covers linking and unlinking, sign-in with
 * a linked identity, an unlinked identity, a callback replayed or opened in another browser, and
 * the spec's POST /auth/session/google answering "not configured" without a provider.
 */
import { afterEach, expect, test } from "bun:test";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";
import { usersCommand } from "../src/cli/commands.ts";
import { createOrganization } from "../src/tenancy/organizations.ts";
import { Browser, CookieJar } from "./support/browser.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

const PASSWORD = "correct horse battery staple";
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

interface Idp {
  issuer: string;
}

/**
 * Mediabox and the provider each need the other's address first, so the provider's HTTP server
 * listens before the provider exists, and Mediabox discovers it lazily on first use.
 */
async function mediaboxWithIdp(): Promise<{ s: TestServer; idp: Idp }> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const http = createServer((req, res) => (handler ? handler(req, res) : res.writeHead(503).end()));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => http.close(resolve)));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const s = await startTestServer({
    env: { MEDIABOX_OIDC_DISCOVERY_URL: issuer, MEDIABOX_OIDC_CLIENT_ID: "mediabox", MEDIABOX_OIDC_CLIENT_SECRET: "a-client-secret-of-enough-length", MEDIABOX_OIDC_PROVIDER_NAME: "corp" },
  });
  closers.push(() => s.close());
  const provider = new Provider(issuer, {
    clients: [{
      client_id: "mediabox",
      client_secret: "a-client-secret-of-enough-length",
      redirect_uris: [`${s.url}/api/v2/auth/session/oidc/callback`],
      token_endpoint_auth_method: "client_secret_post",
    }],
    async findAccount(_ctx: unknown, id: string) {
      return { accountId: id, claims: async () => ({ sub: id, email: `${id}@corp.example`, email_verified: true }) };
    },
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    // Keycloak and most providers put the email in the ID token; oidc-provider does so only when asked.
    conformIdTokenClaims: false,
    cookies: { keys: ["test-cookie-key"] },
  });
  handler = provider.callback();
  return { s, idp: { issuer } };
}

/** The person at the provider: follows redirects there, logs in as `login`, consents; returns the callback URL. */
async function authorizeAt(idp: Idp, authorizationUrl: string, login: string): Promise<string> {
  const jar = new CookieJar();
  let url = authorizationUrl;
  for (let step = 0; step < 20; step++) {
    if (!url.startsWith(idp.issuer)) return url;
    const path = new URL(url).pathname;
    let response = await fetch(url, { redirect: "manual", headers: { cookie: jar.header(path) } });
    jar.store(response);
    if (response.status === 200 && path.startsWith("/interaction/")) {
      const page = await response.text();
      const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
      const form = new URLSearchParams(prompt === "login" ? { prompt, login, password: "any" } : { prompt: prompt ?? "consent" });
      response = await fetch(url, {
        method: "POST", redirect: "manual", body: form,
        headers: { cookie: jar.header(path), "content-type": "application/x-www-form-urlencoded" },
      });
      jar.store(response);
    }
    const location = response.headers.get("location");
    if (!location) throw new Error(`the provider answered ${response.status} at ${url} without a redirect: ${await response.text()}`);
    url = new URL(location, url).href;
  }
  throw new Error("too many redirects at the provider");
}

async function owner(s: TestServer): Promise<{ email: string; browser: Browser }> {
  const org = await createOrganization(s.ctx.sql, s.ctx.clock, `oidc-${crypto.randomUUID().slice(0, 8)}`, "STARTER");
  const email = `owner.${crypto.randomUUID().slice(0, 6)}@example.com`;
  await usersCommand(s.ctx.sql, s.ctx.clock, s.config, s.ctx.accounts, ["create", email], { org: org.name, role: "owner", password: PASSWORD });
  const browser = new Browser(s.url);
  expect((await browser.post("/auth/session/login", { email, password: PASSWORD })).status).toBe(200);
  return { email, browser };
}

test("link the provider, sign in with it, unlink it", async () => {
  const { s, idp } = await mediaboxWithIdp();
  const { email, browser } = await owner(s);

  const started = await browser.post("/auth/session/link-provider", { provider: "corp", return_to: "/settings" });
  expect(started.status).toBe(200);
  const authorization = new URL(started.body.authorization_url);
  expect(authorization.searchParams.get("code_challenge_method")).toBe("S256");
  expect(authorization.searchParams.get("state")).toBeTruthy();
  expect(authorization.searchParams.get("nonce")).toBeTruthy();
  const callback = await authorizeAt(idp, started.body.authorization_url, "alice");
  const linked = await browser.get(callback);
  expect(linked.status).toBe(303);
  expect(linked.headers.get("location")).toBe(`${s.url}/settings?linked=corp`);
  const me = await browser.get("/auth/session");
  expect(me.body.identities).toEqual([expect.objectContaining({ provider: "corp", email: "alice@corp.example" })]);

  // A fresh browser signs in with the identity, without a password.
  const other = new Browser(s.url);
  const signIn = await other.post("/auth/session/oidc/start", { return_to: "/library" });
  const back = await other.get(await authorizeAt(idp, signIn.body.authorization_url, "alice"));
  expect(back.status).toBe(303);
  expect(back.headers.get("location")).toBe(`${s.url}/library`);
  expect(other.jar.get("mediabox_session")).not.toBeNull();
  expect((await other.get("/auth/session")).body.user.email).toBe(email);

  // The spec's social sign-in path is the same flow.
  const google = await new Browser(s.url).post("/auth/session/google", {});
  expect(google.status).toBe(200);
  expect(google.body.authorization_url).toStartWith(idp.issuer);

  expect((await browser.post("/auth/session/unlink-provider", { provider: "corp" })).body.unlinked).toBe(true);
  const after = new Browser(s.url);
  const again = await after.post("/auth/session/oidc/start", {});
  const refused = await after.get(await authorizeAt(idp, again.body.authorization_url, "alice"));
  expect(refused.headers.get("location")).toBe(`${s.url}/?sign_in_error=IDENTITY_NOT_LINKED`);
  expect(after.jar.get("mediabox_session")).toBeNull();
});

test("a callback replayed, or opened in another browser, is refused", async () => {
  const { s, idp } = await mediaboxWithIdp();
  const { browser } = await owner(s);
  const started = await browser.post("/auth/session/link-provider", {});
  const callback = await authorizeAt(idp, started.body.authorization_url, "bob");

  // The attacker's browser has no flow cookie: refused, and the flow is spent.
  const attacker = new Browser(s.url);
  const stolen = await attacker.get(callback);
  expect(stolen.headers.get("location")).toBe(`${s.url}/?sign_in_error=CSRF_FAILED`);
  const late = await browser.get(callback);
  expect(late.headers.get("location")).toBe(`${s.url}/?sign_in_error=VALIDATION_ERROR`);
  expect((await browser.get("/auth/session")).body.identities).toEqual([]);

  // An identity linked to one user cannot be linked to another.
  const first = await browser.post("/auth/session/link-provider", {});
  expect((await browser.get(await authorizeAt(idp, first.body.authorization_url, "carol"))).headers.get("location")).toBe(`${s.url}/?linked=corp`);
  const { browser: second } = await owner(s);
  const taken = await second.post("/auth/session/link-provider", {});
  expect((await second.get(await authorizeAt(idp, taken.body.authorization_url, "carol"))).headers.get("location")).toBe(`${s.url}/?sign_in_error=IDENTITY_ALREADY_LINKED`);
  // Linking needs the session's CSRF token like any write.
  expect((await second.post("/auth/session/link-provider", {}, { csrf: false })).body.code).toBe("CSRF_FAILED");
});

test("without a provider, the sign-in routes answer OIDC_NOT_CONFIGURED", async () => {
  const s = await startTestServer();
  closers.push(() => s.close());
  for (const path of ["/auth/session/google", "/auth/session/oidc/start"]) {
    const res = await new Browser(s.url).post(path, {});
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("OIDC_NOT_CONFIGURED");
  }
  // The spec's limit of 10 a minute per IP applies to the social sign-in path.
  const browser = new Browser(s.url);
  for (let i = 0; i < 10; i++) await browser.post("/auth/session/google", {});
  expect((await browser.post("/auth/session/google", {})).status).toBe(429);
});
