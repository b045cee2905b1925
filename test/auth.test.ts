import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { ApiKeyError, createApiKey, revokeApiKey } from "../src/auth/api-keys.ts";
import { errorHandler } from "../src/http/errors.ts";
import { Logger } from "../src/log.ts";
import { createOrganization, setOrganizationTier } from "../src/tenancy/organizations.ts";
import { ApiClient, startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());
/** Listeners a test started: stopped after it, whatever happened. */
const listeners: { stop(): Promise<unknown> }[] = [];
afterEach(async () => {
  await Promise.all(listeners.splice(0).map((l) => l.stop()));
});

describe("authentication", () => {
  test("a request without a key is 401 with a detail and a Bearer challenge", async () => {
    const res = await server.anonymous().get("/projects");
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("UNAUTHENTICATED");
    expect(res.body.detail).toContain("Authorization: Bearer");
    expect(res.headers.get("www-authenticate")).toContain("Bearer");
  });

  test("unknown, malformed and non-Bearer credentials are 401", async () => {
    const { api } = await server.tenant();
    const cases: Record<string, string> = {
      unknown: "Bearer mbx_" + "A".repeat(43),
      "wrong prefix": "Bearer sk_" + api.key!.slice(4),
      truncated: `Bearer ${api.key!.slice(0, -1)}`,
      basic: `Basic ${btoa("user:pass")}`,
      empty: "Bearer ",
    };
    for (const [name, header] of Object.entries(cases)) {
      const res = await server.anonymous().get("/projects", { authorization: header });
      expect(res.status, name).toBe(401);
      expect(res.body.code, name).toBe("UNAUTHENTICATED");
      expect(res.body.detail.length, name).toBeGreaterThan(0);
    }
    expect((await api.get("/projects")).status).toBe(200);
  });

  test("a revoked key stops working at once", async () => {
    const tenant = await server.tenant();
    expect((await tenant.api.get("/projects")).status).toBe(200);
    const keyRow = (await server.ctx.sql.one<{ id: string }>("SELECT id FROM api_keys WHERE org_id = ?", [tenant.orgId]))!;
    await revokeApiKey(server.ctx.sql, server.ctx.clock, keyRow.id);
    const res = await tenant.api.get("/projects");
    expect(res.status).toBe(401);
    expect(res.body.detail).toContain("revoked");
  });

  test("keys carry the mbx_ prefix and only their hash is stored", async () => {
    const org = await createOrganization(server.ctx.sql, server.ctx.clock, "hash-check", "STARTER");
    const { key, info } = await createApiKey(server.ctx.sql, server.ctx.clock, org.name, { name: "ci" });
    expect(key).toMatch(/^mbx_[A-Za-z0-9_-]{43}$/);
    const row = (await server.ctx.sql.one<Record<string, unknown>>("SELECT * FROM api_keys WHERE id = ?", [info.id]))!;
    for (const value of Object.values(row)) expect(String(value)).not.toContain(key.slice(4));
    expect(row.key_hash).toBe(new Bun.CryptoHasher("sha256").update(key).digest("hex"));
    expect(row.display_prefix).toBe(key.slice(0, 12));
  });

  test("FREE organizations cannot get API keys", async () => {
    const org = await createOrganization(server.ctx.sql, server.ctx.clock, "free-org", "FREE");
    await expect(createApiKey(server.ctx.sql, server.ctx.clock, org.name)).rejects.toThrow(ApiKeyError);
    await expect(createApiKey(server.ctx.sql, server.ctx.clock, org.name)).rejects.toThrow(/FREE tier/);
    const count = (await server.ctx.sql.one<{ n: number }>("SELECT count(*) AS n FROM api_keys WHERE org_id = ?", [org.id]))!.n;
    expect(Number(count)).toBe(0);
  });

  test("the tier is read from the organization on every request", async () => {
    const tenant = await server.tenant({ tier: "STARTER" });
    expect((await tenant.api.get("/projects")).headers.get("x-ratelimit-limit")).toBe("30");
    await setOrganizationTier(server.ctx.sql, tenant.orgName, "ENTERPRISE");
    expect((await tenant.api.get("/projects")).headers.get("x-ratelimit-limit")).toBe("500");
  });
});

describe("permissions", () => {
  test("each action needs its permission; a missing one is 403", async () => {
    const tenant = await server.tenant();
    const viewer = await tenant.keyWith(["view"]);
    const editor = await tenant.keyWith(["edit"]);
    const viewRes = await editor.get("/projects");
    expect(viewRes.status).toBe(403);
    expect(viewRes.body.code).toBe("PERMISSION_DENIED");
    expect(viewRes.body.detail).toContain("VIEW");
    const editRes = await viewer.post("/projects", { name: "Nope" });
    expect(editRes.status).toBe(403);
    expect(editRes.body.detail).toContain("EDIT");
    const created = await editor.post("/projects", { name: "Made by editor" });
    expect(created.status).toBe(201);
    const deleteRes = await editor.delete(`/projects/${created.body.id}`);
    expect(deleteRes.status).toBe(403);
    expect(deleteRes.body.detail).toContain("DELETE");
    expect((await viewer.get(`/projects/${created.body.id}`)).status).toBe(200);
  });

  test("a missing permission is reported before body validation", async () => {
    const viewer = await (await server.tenant()).keyWith(["view"]);
    const res = await viewer.post("/projects", { name: 42 });
    expect(res.status).toBe(403);
    // Also where unknown body fields are refused (knownFieldsOnly runs after the permission check).
    const review = `/files/${crypto.randomUUID()}/extractions/text_regions/review`;
    for (const body of [{ field_edit: { a: 1 } }, { item_reviews: { "regions.0": "maybe" } }]) expect((await viewer.patch(review, body)).status).toBe(403);
  });
});

describe("tenant isolation", () => {
  test("one organization can neither see nor change another's data", async () => {
    const a = await server.tenant();
    const b = await server.tenant();
    const project = (await a.api.post("/projects", { name: "Secret plans" })).body;
    const folder = (await a.api.post("/folders", { name: "Inner", project_id: project.id })).body;

    const listB = await b.api.get("/projects");
    expect(listB.body.items.map((p: { name: string }) => p.name)).toEqual(["Default"]);
    expect((await b.api.get(`/projects/${project.id}`)).status).toBe(404);
    expect((await b.api.patch(`/projects/${project.id}`, { name: "Mine" })).status).toBe(404);
    expect((await b.api.delete(`/projects/${project.id}`)).status).toBe(404);
    expect((await b.api.get(`/folders/${folder.id}`)).status).toBe(404);
    expect((await b.api.post("/folders", { name: "Intruder", parent_id: folder.id })).status).toBe(404);
    expect((await b.api.post("/folders", { name: "Intruder", project_id: project.id })).status).toBe(404);

    const after = await a.api.get(`/projects/${project.id}`);
    expect(after.body.name).toBe("Secret plans");
    expect(after.body.folder_count).toBe(1);
  });
});

describe("errors", () => {
  test("unknown routes are JSON 404s for authenticated callers", async () => {
    const { api } = await server.tenant();
    for (const path of ["/api/v2/nothing-here", "/api/v3/projects", "/favicon.ico"]) {
      const res = await api.get(path.startsWith("/api/") ? path : `/api/..${path}`);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("NOT_FOUND");
      expect(res.body.detail).toContain("no route");
    }
  });

  test("validation errors are 400 and name the field and the rule", async () => {
    const { api } = await server.tenant();
    const wrongType = await api.post("/projects", { name: 42 });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.code).toBe("VALIDATION_ERROR");
    expect(wrongType.body.detail).toContain("name");
    const missing = await api.post("/projects", {});
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toContain("name: is required");
    const badJson = await api.request("POST", "/projects", "{not json", { "content-type": "application/json" });
    expect(badJson.status).toBe(400);
    expect(badJson.body.detail).toContain("JSON");
    const badQuery = await api.get("/projects?limit=0");
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.detail).toContain("limit must be an integer from 1 to 100");
  });

  test("oversized JSON bodies are 413 and change nothing", async () => {
    const { api } = await server.tenant();
    const res = await api.post("/projects", { name: "Huge", description: "x".repeat(1024 * 1024) });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe("PAYLOAD_TOO_LARGE");
    expect(res.body.detail).toContain("1048576 bytes");
    expect((await api.get("/projects")).body.total_count).toBe(1);
  });

  test("unexpected failures are a generic 500 without internals", async () => {
    const app = new Elysia()
      .use(errorHandler(new Logger("error", { test: true })))
      .get("/boom", () => {
        throw new Error("secret connection string at /srv/db");
      })
      .listen({ port: 0, hostname: "127.0.0.1" });
    listeners.push(app);
    const res = await new ApiClient(`http://127.0.0.1:${app.server!.port}`, null).get("/api/../boom");
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ detail: "internal server error", code: "INTERNAL_ERROR" });
  });
});
