import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createApiKey } from "../src/auth/api-keys.ts";
import { ManualClock } from "../src/clock.ts";
import { bucketsFor, UPLOAD_LIMIT_ANONYMOUS } from "../src/ratelimit/policy.ts";
import { setOrganizationTier } from "../src/tenancy/organizations.ts";
import { ApiClient, startTestServer, type ApiResponse, type TestServer } from "./support/server.ts";

const clock = new ManualClock(Date.parse("2026-11-23T10:00:00Z"));
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ clock });
});
afterAll(() => server.close());
/** Servers a test started: stopped after it, whatever happened. */
const extraServers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(extraServers.splice(0).map((s) => s.close()));
});

function limitHeaders(res: ApiResponse) {
  return {
    limit: Number(res.headers.get("x-ratelimit-limit")),
    remaining: Number(res.headers.get("x-ratelimit-remaining")),
    reset: Number(res.headers.get("x-ratelimit-reset")),
  };
}

async function burst(client: ApiClient, n: number, path = "/projects", method = "GET"): Promise<ApiResponse[]> {
  const out: ApiResponse[] = [];
  for (let i = 0; i < n; i++) out.push(await client.request(method, path, method === "GET" ? undefined : {}));
  return out;
}

describe("headers", () => {
  test("every API response carries the limit headers, successes and errors alike", async () => {
    const { api } = await server.tenant({ tier: "PROFESSIONAL" });
    const responses = [
      await api.get("/projects"),
      await api.get("/projects?limit=0"),
      await api.get("/projects/00000000-0000-4000-8000-000000000000"),
      await api.get("/no-such-route"),
      await server.anonymous().get("/projects"),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 400, 404, 404, 401]);
    for (const res of responses) {
      expect(res.headers.get("x-ratelimit-limit")).toMatch(/^\d+$/);
      expect(res.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/);
      expect(res.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
      expect(res.headers.get("retry-after")).toBeNull();
    }
  });

  test("limit follows the tier, remaining counts down, reset is the window end in Unix seconds", async () => {
    for (const [tier, limit] of [["STARTER", 30], ["PROFESSIONAL", 100], ["ENTERPRISE", 500]] as const) {
      const { api } = await server.tenant({ tier });
      const [first, second] = (await burst(api, 2)).map(limitHeaders);
      expect(first!.limit).toBe(limit);
      expect(first!.remaining).toBe(limit - 1);
      expect(second!.remaining).toBe(limit - 2);
      expect(first!.reset).toBe(Math.ceil((clock.now() + 60_000) / 1000));
    }
  });

  test("CUSTOM is unlimited and reports -1", async () => {
    const { api } = await server.tenant({ tier: "CUSTOM" });
    const responses = await burst(api, 40);
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(limitHeaders(responses[39]!)).toMatchObject({ limit: -1, remaining: -1 });
  });
});

describe("per-key tier limit", () => {
  test("a key of a FREE organization gets 10 requests a minute, then 429 with Retry-After", async () => {
    const tenant = await server.tenant({ tier: "STARTER" });
    await setOrganizationTier(server.ctx.sql, tenant.orgName, "FREE");
    const responses = await burst(tenant.api, 11);
    expect(responses.slice(0, 10).every((r) => r.status === 200)).toBe(true);
    expect(limitHeaders(responses[9]!)).toMatchObject({ limit: 10, remaining: 0 });
    const blocked = responses[10]!;
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe("RATE_LIMITED");
    expect(blocked.body.detail).toContain("10 requests per minute");
    expect(Number(blocked.headers.get("retry-after"))).toBe(60);
    expect(limitHeaders(blocked)).toMatchObject({ limit: 10, remaining: 0 });

    clock.advance(30_000);
    const stillBlocked = await tenant.api.get("/projects");
    expect(stillBlocked.status).toBe(429);
    expect(Number(stillBlocked.headers.get("retry-after"))).toBe(30);

    clock.advance(30_000);
    const fresh = await tenant.api.get("/projects");
    expect(fresh.status).toBe(200);
    expect(limitHeaders(fresh).remaining).toBe(9);
  });

  test("limits are per key: a second key of the same organization has its own budget", async () => {
    const tenant = await server.tenant({ tier: "STARTER" });
    await burst(tenant.api, 30);
    expect((await tenant.api.get("/projects")).status).toBe(429);
    const other = new ApiClient(server.url, (await createApiKey(server.ctx.sql, clock, tenant.orgName)).key, tenant.api.ip);
    expect((await other.get("/projects")).status).toBe(200);
  });

  test("a blocked request does not consume budget", async () => {
    const tenant = await server.tenant({ tier: "STARTER" });
    await burst(tenant.api, 35);
    clock.advance(60_000);
    expect(limitHeaders(await tenant.api.get("/projects")).remaining).toBe(29);
  });
});

describe("anonymous per-IP limit", () => {
  test("unauthenticated and invalid-key requests share a per-IP limit below FREE", async () => {
    const ip = "192.0.2.10";
    const anonymous = server.anonymous(ip);
    const badKey = new ApiClient(server.url, "mbx_invalid", ip);
    const responses = [...(await burst(anonymous, 3)), ...(await burst(badKey, 2))];
    expect(responses.every((r) => r.status === 401)).toBe(true);
    expect(limitHeaders(responses[0]!).limit).toBe(5);
    expect(limitHeaders(responses[0]!).limit).toBeLessThan(10);
    const blocked = await badKey.get("/projects");
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await server.anonymous("192.0.2.11").get("/projects")).status).toBe(401);
  });

  test("telemetry, the anonymous endpoint, is limited per IP too", async () => {
    const client = server.anonymous();
    const event = { event_type: "retry", message: "m" };
    for (let i = 0; i < 5; i++) expect((await client.post("/files/log-upload-event", event)).status).toBe(200);
    expect((await client.post("/files/log-upload-event", event)).status).toBe(429);
  });

  test("health, readiness and docs are never rate limited", async () => {
    const client = server.anonymous();
    for (let i = 0; i < 8; i++) {
      expect((await client.get("/healthz")).status).toBe(200);
      expect((await client.get("/readyz")).status).toBe(200);
    }
    const health = await client.get("/healthz");
    expect(health.headers.get("x-ratelimit-limit")).toBeNull();
  });
});

describe("per-IP endpoint limits", () => {
  test("sensitive endpoints count per IP across keys (POST /support/contact: 3 a minute)", async () => {
    const a = await server.tenant({ tier: "ENTERPRISE" });
    const b = await server.tenant({ tier: "ENTERPRISE" });
    const ip = "198.51.100.7";
    const viaA = new ApiClient(server.url, a.key, ip);
    const viaB = new ApiClient(server.url, b.key, ip);
    const first = [await viaA.post("/support/contact"), await viaB.post("/support/contact"), await viaA.post("/support/contact")];
    expect(first.every((r) => r.status !== 429)).toBe(true);
    const blocked = await viaB.post("/support/contact");
    expect(blocked.status).toBe(429);
    expect(limitHeaders(blocked).limit).toBe(3);
    expect((await new ApiClient(server.url, b.key, "198.51.100.8").post("/support/contact")).status).not.toBe(429);
    expect((await viaB.get("/projects")).status).toBe(200);
  });

  test("authenticated upload requests share a 500-per-minute bucket per IP", async () => {
    const { key } = await server.tenant({ tier: "CUSTOM" });
    const client = new ApiClient(server.url, key, "203.0.113.50");
    const statuses = new Set<number>();
    for (let i = 0; i < 500; i++) statuses.add((await client.post(i % 2 ? "/files/upload" : "/files/uploads")).status);
    expect(statuses.has(429)).toBe(false);
    const blocked = await client.post("/files/upload/batch");
    expect(blocked.status).toBe(429);
    expect(limitHeaders(blocked).limit).toBe(500);
    expect((await client.get("/projects")).status).toBe(200);
  });

  test("anonymous upload requests count against the 200 bucket as well as the anonymous limit", () => {
    const buckets = bucketsFor({ method: "POST", apiPath: "/files/uploads/abc/complete", ip: "1.2.3.4", principal: null }, 5);
    expect(buckets).toContainEqual({ key: "upload:anon:1.2.3.4", limit: UPLOAD_LIMIT_ANONYMOUS });
    expect(buckets).toContainEqual({ key: "ip:1.2.3.4", limit: 5 });
    const read = bucketsFor({ method: "GET", apiPath: "/files/uploads/abc", ip: "1.2.3.4", principal: null }, 5);
    expect(read.some((b) => b.key.startsWith("upload:"))).toBe(false);
  });
});

describe("client IP behind proxies", () => {
  test("X-Forwarded-For is ignored unless the peer is a trusted proxy", async () => {
    const direct = await startTestServer({ env: { MEDIABOX_TRUSTED_PROXIES: "" } });
    extraServers.push(direct);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await direct.anonymous(`10.99.0.${i}`).get("/projects")).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });
});
