/**
 * Cloud storage connections against real servers on loopback: oidc-provider as the OAuth 2.0
 * authorization server (PKCE required), a Drive-v3-shaped API, and a Nextcloud-shaped WebDAV
 * server (webdav-server). Every test gets fresh servers, stopped after it whatever happens.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ACCOUNT, consent } from "./support/cloud-servers.ts";
import { connect, DRIVE_CLIENT, startCloudStack, type CloudStack } from "./support/cloud-setup.ts";
import { png } from "./support/fixtures.ts";

let stack: CloudStack;
beforeEach(async () => {
  stack = await startCloudStack();
});
afterEach(async () => {
  await stack.stop();
});

describe("OAuth connection flow", () => {
  test("google_drive: PKCE S256 authorize URL, POST callback, listing, reconnect updates the same connection", async () => {
    const tenant = await stack.server.tenant();
    const start = await tenant.api.post("/cloud-storage/auth/google_drive");
    expect(start.status).toBe(200);
    expect(start.body.provider).toBe("google_drive");
    const url = new URL(start.body.authorization_url);
    expect(url.origin + url.pathname).toBe(`${stack.as.url}/auth`);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get("state")).toBe(start.body.state);
    expect(start.body.state.length).toBeGreaterThanOrEqual(43);
    expect(url.searchParams.get("redirect_uri")).toBe(`${stack.server.url}/api/v2/cloud-storage/auth/google_drive/callback`);

    const callback = await consent(start.body.authorization_url, "allow", stack.server.url);
    expect(callback.searchParams.get("state")).toBe(start.body.state);
    const done = await tenant.api.post("/cloud-storage/auth/google_drive/callback", { code: callback.searchParams.get("code"), state: start.body.state });
    expect(done.status).toBe(200);
    expect(done.body.is_new).toBe(true);
    expect(done.body.connection).toMatchObject({ provider: "google_drive", provider_email: ACCOUNT.email, provider_display_name: ACCOUNT.name, is_active: true, is_token_expired: false });

    // Tokens are sealed at rest: neither appears in the database in clear.
    const row = (await stack.server.ctx.sql.one<{ access_token: string; refresh_token: string }>("SELECT access_token, refresh_token FROM cloud_connections WHERE id = ?", [done.body.connection.id]))!;
    expect(row.access_token).toStartWith("v1.");
    expect(row.refresh_token).toStartWith("v1.");
    expect(stack.drive.tokens).not.toContain(row.access_token);
    expect(stack.server.ctx.cloud.vault.decrypt(row.access_token)).toBe(stack.drive.tokens.at(-1)!);

    const list = await tenant.api.get("/cloud-storage/connections");
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total_count: 1, limit: 20, offset: 0, has_more: false });
    expect(list.body.items[0].id).toBe(done.body.connection.id);

    const again = await connect(stack, tenant, "google_drive");
    expect(again.is_new).toBe(false);
    expect(again.connection.id).toBe(done.body.connection.id);
    expect((await tenant.api.get("/cloud-storage/connections?provider=google_drive")).body.total_count).toBe(1);
    expect((await tenant.api.get("/cloud-storage/connections?provider=nextcloud")).body.total_count).toBe(0);
  });

  test("GET callback: an HTML page posting oauth-complete to the exact opener origin, with a CSP", async () => {
    const tenant = await stack.server.tenant();
    const start = await tenant.api.post("/cloud-storage/auth/nextcloud");
    const callback = await consent(start.body.authorization_url, "allow", stack.server.url);
    // The popup carries no API key.
    const page = await stack.server.anonymous().get(callback.pathname.replace("/api/v2", "") + callback.search);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toStartWith("text/html");
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'nonce-[^']+'/);
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    const html = page.body as string;
    expect(html).toContain(`postMessage(message, origin)`);
    expect(html).toContain(`var origin = "${stack.server.url}"`);
    expect(html).not.toContain(`"*"`);
    const message = JSON.parse(/var message = (.*);/.exec(html)![1]!);
    expect(message).toMatchObject({ type: "oauth-complete", success: true, connection: { provider: "nextcloud", provider_email: ACCOUNT.email, display_name: ACCOUNT.name, is_token_expired: false } });
    const list = await tenant.api.get("/cloud-storage/connections");
    expect(list.body.items.map((c: any) => c.id)).toEqual([message.connection.id]);
  });

  test("state: reused, forged, or presented by another organization or key is refused", async () => {
    const tenant = await stack.server.tenant();
    const other = await stack.server.tenant();
    const start = await tenant.api.post("/cloud-storage/auth/google_drive");
    const callback = await consent(start.body.authorization_url, "allow", stack.server.url);
    const code = callback.searchParams.get("code");

    const forged = await tenant.api.post("/cloud-storage/auth/google_drive/callback", { code, state: "forged-state-value" });
    expect(forged.status).toBe(400);
    expect(forged.body.code).toBe("OAUTH_STATE_INVALID");
    // Another organization, or another key of the same one, cannot use (or burn) the state.
    const stolen = await other.api.post("/cloud-storage/auth/google_drive/callback", { code, state: start.body.state });
    expect(stolen.status).toBe(400);
    expect(stolen.body).toMatchObject({ code: "OAUTH_STATE_INVALID", detail: expect.stringContaining("not issued to this API key") });
    const otherKey = await (await tenant.keyWith(["view", "edit"])).post("/cloud-storage/auth/google_drive/callback", { code, state: start.body.state });
    expect(otherKey.body.code).toBe("OAUTH_STATE_INVALID");
    // The state of one provider does not complete another's flow.
    const crossed = await tenant.api.post("/cloud-storage/auth/nextcloud/callback", { code, state: start.body.state });
    expect(crossed.body.code).toBe("OAUTH_STATE_INVALID");

    const ok = await tenant.api.post("/cloud-storage/auth/google_drive/callback", { code, state: start.body.state });
    expect(ok.status).toBe(200);
    const reused = await tenant.api.post("/cloud-storage/auth/google_drive/callback", { code, state: start.body.state });
    expect(reused.status).toBe(400);
    expect(reused.body).toMatchObject({ code: "OAUTH_STATE_INVALID", detail: expect.stringContaining("already used") });

    // In the popup: a forged state gets a failure message, not a connection.
    const page = await stack.server.anonymous().get(`/cloud-storage/auth/google_drive/callback?code=x&state=forged`);
    expect(page.status).toBe(400);
    const message = JSON.parse(/var message = (.*);/.exec(page.body)![1]!);
    expect(message).toMatchObject({ type: "oauth-complete", success: false, code: "OAUTH_STATE_INVALID" });
    expect(message.error).toContain("unknown");
    expect(message.connection).toBeUndefined();
  });

  test("PKCE: the authorization server requires it and a code is useless without Mediabox's verifier", async () => {
    const tenant = await stack.server.tenant();
    // An authorize request without code_challenge is refused by the server.
    const bare = new URL(`${stack.as.url}/auth`);
    bare.search = new URLSearchParams({ response_type: "code", client_id: DRIVE_CLIENT.clientId, redirect_uri: `${stack.server.url}/api/v2/cloud-storage/auth/google_drive/callback`, scope: "openid", state: "s" }).toString();
    const refused = await consent(bare.toString(), "allow", stack.server.url);
    expect(refused.searchParams.get("error")).toBe("invalid_request");
    expect(refused.searchParams.get("error_description")).toContain("PKCE");

    const start = await tenant.api.post("/cloud-storage/auth/google_drive");
    const callback = await consent(start.body.authorization_url, "allow", stack.server.url);
    const code = callback.searchParams.get("code")!;
    // Whoever intercepts the code cannot redeem it without the verifier Mediabox kept.
    const stolen = await fetch(`${stack.as.url}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: `${stack.server.url}/api/v2/cloud-storage/auth/google_drive/callback`, client_id: DRIVE_CLIENT.clientId, client_secret: DRIVE_CLIENT.clientSecret }),
    });
    expect(stolen.status).toBe(400);
    expect(((await stolen.json()) as { error: string }).error).toBe("invalid_grant");
  });

  test("provider errors: consent denied in the popup, a bad code on POST; unknown provider is 404", async () => {
    const tenant = await stack.server.tenant();
    const start = await tenant.api.post("/cloud-storage/auth/google_drive");
    const denied = await consent(start.body.authorization_url, "deny", stack.server.url);
    expect(denied.searchParams.get("error")).toBe("access_denied");
    const page = await stack.server.anonymous().get(denied.pathname.replace("/api/v2", "") + denied.search);
    expect(page.status).toBe(400);
    const message = JSON.parse(/var message = (.*);/.exec(page.body)![1]!);
    expect(message).toMatchObject({ type: "oauth-complete", success: false, code: "OAUTH_PROVIDER_ERROR" });
    expect(message.error).toContain("access_denied");

    const second = await tenant.api.post("/cloud-storage/auth/nextcloud");
    const bad = await tenant.api.post("/cloud-storage/auth/nextcloud/callback", { code: "not-a-code", state: second.body.state });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("OAUTH_PROVIDER_ERROR");
    expect(bad.body.detail).toContain("invalid_grant");
    expect((await tenant.api.get("/cloud-storage/connections")).body.total_count).toBe(0);

    const unknown = await tenant.api.post("/cloud-storage/auth/dropbox");
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("CLOUD_PROVIDER_NOT_FOUND");
    const unknownPage = await stack.server.anonymous().get("/cloud-storage/auth/dropbox/callback?code=a&state=b");
    expect(unknownPage.status).toBe(404);
  });

  test("token expiry: refreshed before it runs out, and again when the provider refuses it early", async () => {
    const tenant = await stack.server.tenant();
    stack.as.setAccessTokenTtl(5);
    const { connection } = await connect(stack, tenant, "google_drive");
    const first = stack.drive.tokens.at(-1)!;
    const browse = await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse`);
    expect(browse.status).toBe(200);
    // 5 s left is inside the refresh margin: a new token was fetched before the call.
    const second = stack.drive.tokens.at(-1)!;
    expect(second).not.toBe(first);
    expect(stack.drive.requests.filter((r) => r.includes("files")).length).toBeGreaterThan(0);

    stack.as.setAccessTokenTtl(3600);
    await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse`);
    const third = stack.drive.tokens.at(-1)!;
    await stack.as.expireAccessToken(third);
    const after = await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse`);
    expect(after.status).toBe(200);
    expect(stack.drive.tokens.at(-1)).not.toBe(third);
    const listed = (await tenant.api.get("/cloud-storage/connections")).body.items[0];
    expect(listed).toMatchObject({ is_active: true, is_token_expired: false });
    expect(listed.last_used_at).not.toBeNull();
  });

  test("revoked grant: the connection is marked expired and calls answer 409 CLOUD_CONNECTION_EXPIRED", async () => {
    const tenant = await stack.server.tenant();
    const { connection } = await connect(stack, tenant, "nextcloud");
    await stack.as.revokeGrantOf(stack.server.ctx.cloud.vault.decrypt((await stack.server.ctx.cloud.connection(tenant.orgId, connection.id)).access_token));
    const browse = await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse`);
    expect(browse.status).toBe(409);
    expect(browse.body.code).toBe("CLOUD_CONNECTION_EXPIRED");
    expect((await tenant.api.get("/cloud-storage/connections")).body.total_count).toBe(0);
    const all = await tenant.api.get("/cloud-storage/connections?active_only=false");
    expect(all.body.items[0]).toMatchObject({ id: connection.id, is_active: false, is_token_expired: true });
    // Connecting again heals it.
    const again = await connect(stack, tenant, "nextcloud");
    expect(again).toMatchObject({ is_new: false, connection: { id: connection.id, is_token_expired: false } });
    expect((await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse`)).status).toBe(200);
  });

  test("DELETE revokes the grant at the provider and removes the connection", async () => {
    const tenant = await stack.server.tenant();
    const { connection } = await connect(stack, tenant, "google_drive");
    const token = stack.drive.tokens.at(-1)!;
    expect(await stack.as.validate(token)).toBe(ACCOUNT.id);
    const res = await tenant.api.delete(`/cloud-storage/connections/${connection.id}`);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.message).toContain("revoked at the provider");
    expect(await stack.as.validate(token)).toBeNull();
    expect((await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse`)).status).toBe(404);
    expect((await tenant.api.delete(`/cloud-storage/connections/${connection.id}`)).status).toBe(404);
  });

  test("another organization's connection id is 404 everywhere", async () => {
    const owner = await stack.server.tenant();
    const intruder = await stack.server.tenant();
    const { connection } = await connect(stack, owner, "google_drive");
    const fileId = stack.drive.add({ name: "a.png", mimeType: "image/png", bytes: png(4, 4, 1) });
    const attempts = [
      await intruder.api.get(`/cloud-storage/connections/${connection.id}/browse`),
      await intruder.api.get(`/cloud-storage/connections/${connection.id}/picker-token`),
      await intruder.api.delete(`/cloud-storage/connections/${connection.id}`),
      await intruder.api.post("/cloud-storage/import", { connection_id: connection.id, files: [{ id: fileId, name: "a.png" }] }),
      await intruder.api.post("/cloud-storage/export", { connection_id: connection.id, image_ids: [crypto.randomUUID()] }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("CLOUD_CONNECTION_NOT_FOUND");
    }
    expect((await intruder.api.get("/cloud-storage/connections")).body.total_count).toBe(0);
    expect((await owner.api.get(`/cloud-storage/connections/${connection.id}/browse`)).status).toBe(200);
  });
});

describe("limits and permissions", () => {
  test("per-IP limits of the spec (callback 10, import 30) and the permission each route needs", async () => {
    const tenant = await stack.server.tenant();
    const popup = stack.server.anonymous();
    const codes: number[] = [];
    for (let i = 0; i < 11; i++) codes.push((await popup.get("/cloud-storage/auth/google_drive/callback?code=a&state=b")).status);
    expect(codes.slice(0, 10).every((c) => c === 400)).toBe(true);
    expect(codes[10]).toBe(429);

    const imports: number[] = [];
    for (let i = 0; i < 31; i++) imports.push((await tenant.api.post("/cloud-storage/import", { connection_id: crypto.randomUUID(), files: [{ id: "x", name: "x.png" }] })).status);
    expect(imports.slice(0, 30).every((c) => c === 404)).toBe(true);
    expect(imports[30]).toBe(429);

    const viewer = await stack.server.tenant({ permissions: ["view"] });
    expect((await viewer.api.post("/cloud-storage/auth/google_drive")).status).toBe(403);
    expect((await viewer.api.post("/cloud-storage/export", { connection_id: crypto.randomUUID(), image_ids: [crypto.randomUUID()] })).status).toBe(403);
    expect((await viewer.api.delete(`/cloud-storage/connections/${crypto.randomUUID()}`)).status).toBe(403);
    expect((await viewer.api.get("/cloud-storage/connections")).status).toBe(200);
    expect((await stack.server.anonymous().get("/cloud-storage/connections")).status).toBe(401);
  });
});

describe("browse", () => {
  test("google_drive: root, paging with page tokens, a subfolder with breadcrumbs, a missing folder", async () => {
    const tenant = await stack.server.tenant();
    const { connection } = await connect(stack, tenant, "google_drive");
    const photos = stack.drive.add({ name: "Photos", mimeType: "application/vnd.google-apps.folder" });
    const trips = stack.drive.add({ name: "Trips", mimeType: "application/vnd.google-apps.folder", parent: photos });
    stack.drive.add({ name: "b.png", mimeType: "image/png", bytes: png(4, 4, 2) });
    stack.drive.add({ name: "notes.gdoc", mimeType: "application/vnd.google-apps.document", bytes: new TextEncoder().encode("x") });
    stack.drive.add({ name: "tool.exe", mimeType: "application/x-msdownload", bytes: new Uint8Array([77, 90]) });
    stack.drive.add({ name: "beach.png", mimeType: "image/png", parent: trips, bytes: png(4, 4, 3) });

    const root = await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse?page_size=2`);
    expect(root.status).toBe(200);
    expect(root.body).toMatchObject({ provider: "google_drive", current_folder_id: "root", breadcrumbs: [{ id: "root", name: "My Drive" }] });
    expect(root.body.files.map((f: any) => [f.name, f.is_folder])).toEqual([["Photos", true], ["b.png", false]]);
    expect(root.body.files[1]).toMatchObject({ mime_type: "image/png", size_bytes: expect.any(Number), is_importable: true, web_view_link: expect.stringContaining("/view/") });
    const next = await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse?page_size=2&page_token=${root.body.next_page_token}`);
    expect(next.body.files.map((f: any) => [f.name, f.is_importable])).toEqual([["notes.gdoc", true], ["tool.exe", false]]);
    expect(next.body.next_page_token).toBeNull();

    const deep = await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse?folder_id=${trips}`);
    expect(deep.body.current_folder_id).toBe(trips);
    expect(deep.body.breadcrumbs).toEqual([{ id: "root", name: "My Drive" }, { id: photos, name: "Photos" }, { id: trips, name: "Trips" }]);
    expect(deep.body.files.map((f: any) => f.name)).toEqual(["beach.png"]);

    const missing = await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse?folder_id=nope`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("CLOUD_FILE_NOT_FOUND");
    const badSize = await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse?page_size=201`);
    expect(badSize.status).toBe(400);
  });

  test("nextcloud: WebDAV listing by path ids, paging and breadcrumbs", async () => {
    const tenant = await stack.server.tenant();
    mkdirSync(join(stack.nextcloud.root, "Photos", "Trips"), { recursive: true });
    writeFileSync(join(stack.nextcloud.root, "Photos", "Trips", "beach.png"), png(4, 4, 4));
    writeFileSync(join(stack.nextcloud.root, "report.pdf"), "%PDF-1.4\n");
    writeFileSync(join(stack.nextcloud.root, "über & more.txt"), "hello");
    const { connection } = await connect(stack, tenant, "nextcloud");
    const root = await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse?page_size=2`);
    expect(root.status).toBe(200);
    expect(root.body).toMatchObject({ provider: "nextcloud", current_folder_id: "/", breadcrumbs: [{ id: "/", name: "Home" }] });
    expect(root.body.files.map((f: any) => [f.id, f.is_folder])).toEqual([["/Photos", true], ["/report.pdf", false]]);
    const rest = await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse?page_size=2&page_token=${root.body.next_page_token}`);
    expect(rest.body.files.map((f: any) => [f.name, f.size_bytes, f.is_importable])).toEqual([["über & more.txt", 5, true]]);
    expect(rest.body.next_page_token).toBeNull();
    const deep = await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse?folder_id=${encodeURIComponent("/Photos/Trips")}`);
    expect(deep.body.breadcrumbs).toEqual([{ id: "/", name: "Home" }, { id: "/Photos", name: "Photos" }, { id: "/Photos/Trips", name: "Trips" }]);
    expect(deep.body.files).toMatchObject([{ id: "/Photos/Trips/beach.png", name: "beach.png", is_folder: false, is_importable: true }]);
    const missing = await tenant.api.get(`/cloud-storage/connections/${connection.id}/browse?folder_id=/nope`);
    expect(missing.status).toBe(404);
  });
});

describe("picker", () => {
  test("a session with the settings' app id and developer key; the proxy reaches only the allowed endpoints", async () => {
    const tenant = await stack.server.tenant();
    const { connection } = await connect(stack, tenant, "google_drive");
    const fileId = stack.drive.add({ name: "a.png", mimeType: "image/png", bytes: png(4, 4, 5) });
    const doc = stack.drive.add({ name: "Doc", mimeType: "application/vnd.google-apps.document", bytes: new TextEncoder().encode("%PDF-1.4 doc") });
    const token = await tenant.api.get(`/cloud-storage/connections/${connection.id}/picker-token`);
    expect(token.status).toBe(200);
    const session = token.body.session;
    expect(session).toMatchObject({ app_id: "123456789", developer_key: "test-developer-key" });
    expect(await stack.as.validate(session.access_token)).toBe(ACCOUNT.id);
    expect(Date.parse(session.expires_at)).toBeGreaterThan(Date.now());

    const call = (endpoint: string, params?: Record<string, string>) => tenant.api.post("/cloud-storage/picker-proxy", { session_id: session.session_id, endpoint, ...(params ? { params } : {}) });
    const about = await call("about", { fields: "user" });
    expect(about.status).toBe(200);
    expect(about.body.data.user.emailAddress).toBe(ACCOUNT.email);
    const files = await call("files", { q: "'root' in parents", pageSize: "10" });
    expect(files.body.data.files.map((f: any) => f.id)).toContain(fileId);
    expect((await call(`files/${fileId}`)).body.data.name).toBe("a.png");
    const exported = await call(`files/${doc}/export`, { mimeType: "application/pdf" });
    expect(exported.status).toBe(200);
    expect(Buffer.from(exported.body.data.content_base64, "base64").toString()).toBe("%PDF-1.4 doc");

    for (const endpoint of ["files/abc/permissions", "changes", "../about", "files/../../about", "files/a/b/export", `${stack.drive.url}/drive/v3/about`, "about?x=1", "drives", "files/abc/copy"]) {
      const res = await call(endpoint);
      expect({ endpoint, status: res.status, code: res.body.code }).toEqual({ endpoint, status: 403, code: "PICKER_ENDPOINT_FORBIDDEN" });
    }
    for (const params of [{ alt: "media" }, { ALT: "media" }, { Alt: "MEDIA" }] as Record<string, string>[]) {
      const media = await call(`files/${fileId}`, params);
      expect({ params, status: media.status }).toEqual({ params, status: 403 });
    }
    expect(stack.drive.requests.some((r) => r.includes("permissions") || r.includes("changes") || /alt=media/i.test(r))).toBe(false);

    const unknown = await tenant.api.post("/cloud-storage/picker-proxy", { session_id: crypto.randomUUID(), endpoint: "about" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("PICKER_SESSION_NOT_FOUND");
    const other = await stack.server.tenant();
    expect((await other.api.post("/cloud-storage/picker-proxy", { session_id: session.session_id, endpoint: "about" })).status).toBe(404);

    const nc = await connect(stack, tenant, "nextcloud");
    const none = await tenant.api.get(`/cloud-storage/connections/${nc.connection.id}/picker-token`);
    expect(none.status).toBe(400);
    expect(none.body.code).toBe("CLOUD_NOT_SUPPORTED");
  });
});
