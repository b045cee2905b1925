/**
 * Hostile request shapes against every route of the OpenAPI document, through real HTTP: deeply
 * nested JSON, bodies over the cap sent without a length, numbers past any range. Each is refused
 * with the JSON error envelope (never Bun's error page, never a 5xx), and the server goes on
 * answering. Also: security headers on every kind of answer.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH, MAX_JSON_VALUES, jsonShape, parseJsonBody } from "../src/http/bounded-body.ts";
import { lastResortErrorResponse } from "../src/http/errors.ts";
import { Logger } from "../src/log.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { sharedDeployment } from "./support/suite-database.ts";

let server: TestServer;
let tenant: Tenant;
let doc: { paths: Record<string, Record<string, Operation>> };

interface Schema {
  type?: string | string[];
  minimum?: number;
  maximum?: number;
  [key: string]: unknown;
}
interface Operation {
  parameters?: { name: string; in: string; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

beforeAll(async () => {
  server = await startTestServer();
  // No rate limit: every route is called once per case, faster than a tier's per-minute budget.
  tenant = await server.tenant({ tier: "CUSTOM" });
  doc = (await server.anonymous().get("/api/v2/openapi.json")).body;
});
afterAll(() => server.close());

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

/** Every operation of the API with a concrete path (parameters filled with a syntactically valid id). */
function operations(filter: (method: string, op: Operation) => boolean) {
  const found: { method: string; path: string; op: Operation }[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    if (!template.startsWith("/api/v2/")) continue;
    for (const [method, op] of Object.entries(item)) {
      if (!filter(method, op)) continue;
      const path = template.replace(/\{[^}]+\}/g, (name) => (name.includes("number") ? "1" : "00000000-0000-4000-8000-000000000000"));
      found.push({ method: method.toUpperCase(), path, op });
    }
  }
  return found;
}

const takesJson = (_method: string, op: Operation) => op.requestBody?.content?.["application/json"] !== undefined;

function expectEnvelope(res: { status: number; headers: Headers; body: unknown }, where: string) {
  expect(res.status, where).toBeLessThan(500);
  expect(res.headers.get("content-type") ?? "", where).toContain("application/json");
  expect(typeof (res.body as { detail?: unknown }).detail, where).toBe("string");
}

describe("JSON bodies", () => {
  test("nesting and values are counted in one pass, strings and escapes skipped", () => {
    expect(jsonShape('{"a":[1,{"b":"[[[[\\"[,,,"}]}')).toEqual({ depth: 3, values: 4 });
    expect(jsonShape(nested(10_000), { depth: 64, values: Infinity }).depth).toBe(65);
    expect(() => parseJsonBody(nested(MAX_JSON_DEPTH + 1))).toThrow(/more than 64 levels/);
    expect(parseJsonBody(nested(MAX_JSON_DEPTH))).toBeArray();
    expect(() => parseJsonBody(`[${"1,".repeat(MAX_JSON_VALUES)}1]`)).toThrow(/more than 20000 values/);
    expect(parseJsonBody(`[${"1,".repeat(MAX_JSON_VALUES - 2)}1]`)).toHaveLength(MAX_JSON_VALUES - 1);
  });

  test("a 10,000-deep body is a 400 on every JSON route, with or without credentials, and the server stays up", async () => {
    const routes = operations(takesJson);
    expect(routes.length).toBeGreaterThan(30);
    for (const { method, path } of routes) {
      // A fresh address per anonymous call: the open routes' per-IP limits are not what is tested.
      for (const client of [server.anonymous(), tenant.api]) {
        const res = await client.request(method, path, nested(10_000), { "content-type": "application/json" });
        expectEnvelope(res, `${method} ${path}`);
        // Anonymous calls to protected routes stop at 401 before any body is read; an optional body
        // that does not parse is absent, so the made-up id is then a 404.
        if (![401, 403, 404].includes(res.status)) {
          expect(res.status, `${method} ${path}`).toBe(400);
          expect(res.body.detail, `${method} ${path}`).toContain("nests");
        }
      }
    }
    expect((await server.anonymous().get("/healthz")).status).toBe(200);
  });

  test("a deep array inside an object (which overflowed the validator's stack) is a 400 envelope", async () => {
    const body = `{"email":${nested(10_000)},"password":"x"}`;
    const res = await server.anonymous().request("POST", "/auth/session/login", body, { "content-type": "application/json" });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("VALIDATION_ERROR");
  });

  test("bodies over the cap are 413 also when sent in chunks without a length, on open and protected routes", async () => {
    const big = "x".repeat(MAX_JSON_BODY_BYTES + 10);
    const projectsBefore = (await tenant.api.get("/projects")).body.total_count;
    for (const [client, path] of [[server.anonymous(), "/auth/session/login"], [tenant.api, "/projects"]] as const) {
      const chunked = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(`{"name":"${big.slice(0, MAX_JSON_BODY_BYTES / 2)}`));
          controller.enqueue(new TextEncoder().encode(`${big.slice(MAX_JSON_BODY_BYTES / 2)}"}`));
          controller.close();
        },
      });
      const res = await fetch(`${server.url}/api/v2${path}`, {
        method: "POST",
        body: chunked,
        headers: { "content-type": "application/json", "x-forwarded-for": client.ip, ...(client.key ? { authorization: `Bearer ${client.key}` } : {}) },
      });
      expect(res.status).toBe(413);
      expect((await res.json()).code).toBe("PAYLOAD_TOO_LARGE");
    }
    // Any content type: a text body to a JSON route is read through the same cap.
    const text = await tenant.api.request("POST", "/projects", big, { "content-type": "text/plain" });
    expect(text.status).toBe(413);
    expect((await tenant.api.get("/projects")).body.total_count).toBe(projectsBefore);
  });
});

describe("numbers", () => {
  test("every integer and number a client sends has a lower and an upper bound in the OpenAPI document", () => {
    const unbounded: string[] = [];
    const walk = (schema: unknown, where: string) => {
      if (Array.isArray(schema)) return schema.forEach((s) => walk(s, where));
      if (!schema || typeof schema !== "object") return;
      const s = schema as Schema;
      const types = Array.isArray(s.type) ? s.type : [s.type];
      if ((types.includes("integer") || types.includes("number")) && (s.minimum === undefined || s.maximum === undefined)) unbounded.push(where);
      for (const [key, value] of Object.entries(s)) walk(value, key === "properties" ? where : `${where}/${key}`);
    };
    for (const { method, path, op } of operations(() => true)) {
      for (const p of op.parameters ?? []) walk(p.schema, `${method} ${path} ${p.in}:${p.name}`);
      for (const [type, content] of Object.entries(op.requestBody?.content ?? {})) walk(content.schema, `${method} ${path} body(${type})`);
    }
    expect(unbounded).toEqual([]);
  });

  test("a 20-digit value in every integer query parameter is a 400 VALIDATION_ERROR", async () => {
    let tried = 0;
    for (const { method, path, op } of operations((m) => m === "get")) {
      for (const p of op.parameters ?? []) {
        if (p.in !== "query") continue;
        const types = [p.schema?.type, ...((p.schema?.anyOf as Schema[] | undefined) ?? []).map((s) => s.type)].flat();
        if (!types.includes("integer") && !types.includes("number")) continue;
        const res = await tenant.api.request(method, `${path.replace("/api/v2", "")}?${p.name}=99999999999999999999`);
        expectEnvelope(res, `${path}?${p.name}`);
        if (res.status !== 404) {
          expect(res.status, `${path}?${p.name}`).toBe(400);
          expect(res.body.code).toBe("VALIDATION_ERROR");
        }
        tried++;
      }
    }
    expect(tried).toBeGreaterThan(15);
  });

  test("the spec's offset on list routes and stuck_minutes answer 400 past their range, 200 inside it", async () => {
    for (const path of ["/files", "/projects", "/folders", "/jobs", "/files/deleted", "/files/sessions", "/custom-extraction-schemas", "/cloud-storage/connections"]) {
      expect((await tenant.api.get(`${path}?offset=99999999999999999999`)).status, path).toBe(400);
      expect((await tenant.api.get(`${path}?offset=2147483647`)).status, path).toBe(200);
    }
    expect((await tenant.api.get("/files/sessions/stuck?stuck_minutes=99999999999999999999")).status).toBe(400);
    expect((await tenant.api.get("/files/sessions/stuck?stuck_minutes=60")).status).toBe(200);
  });
});

describe("dates", () => {
  test("date and taken filters take ISO 8601 dates of real days; what Date.parse stretches is a 400", async () => {
    for (const path of ["/files", "/files/timeline", "/files/locations"]) {
      for (const value of ["2024-02-30", "2023-02-29T10:00:00Z", "1", "2024", "December 1, 2024", "+275760-09-13T00:00:00Z", "2024-1-1", "99999-12-31T00:00:00Z"]) {
        for (const field of ["date_from", "taken_to"]) {
          const res = await tenant.api.get(`${path}?${field}=${encodeURIComponent(value)}`);
          expectEnvelope(res, `${path}?${field}=${value}`);
          expect(res.status, `${path}?${field}=${value}`).toBe(400);
          expect(res.body.detail).toContain(`${field}: must be an ISO 8601 timestamp (YYYY-MM-DD`);
        }
      }
      for (const value of ["2024-02-29", "2024-02-29T23:59:59Z", "2024-03-01T00:30:00+01:00", "2024-03-01 10:00", "2024-03-01T10:00:00.123456Z"]) {
        expect((await tenant.api.get(`${path}?taken_from=${encodeURIComponent(value)}`)).status, `${path} ${value}`).toBe(200);
      }
    }
  });
});

describe("headers and paths", () => {
  test("a session cookie with a malformed escape is an unknown session (401 envelope), not a 500", async () => {
    for (const value of ["%", "%FF", "%E0%A4%A", "%".repeat(4000)]) {
      for (const path of ["/projects", "/auth/session"]) {
        const res = await server.anonymous().request("GET", path, undefined, { cookie: `mediabox_session=${value}` });
        expectEnvelope(res, `${path} with ${value.slice(0, 10)}`);
        expect(res.status).toBe(401);
        expect(res.body.code).toBe("UNAUTHENTICATED");
      }
    }
  });

  // A deployment with a bucket mounts no local S3 endpoint (/s3 is a 404 there).
  test.skipIf(sharedDeployment())("an object key that is not UTF-8 on the local S3 endpoint is S3's 400 InvalidURI, not a 500", async () => {
    for (const method of ["GET", "HEAD", "PUT"]) {
      for (const path of ["/s3/mediabox/%FF", "/s3/mediabox/orgs/x/a%E0%A4%A?X-Amz-Signature=x"]) {
        const res = await fetch(`${server.url}${path}`, { method, ...(method === "PUT" ? { body: "x" } : {}) });
        expect(res.status, `${method} ${path}`).toBe(400);
        if (method !== "HEAD") expect(await res.text()).toContain("<Code>InvalidURI</Code>");
      }
    }
  });
});

describe("answers", () => {
  test("API JSON, errors, probes and /docs carry nosniff; /docs has a CSP without inline script", async () => {
    const anonymous = server.anonymous();
    for (const path of ["/api/v2/projects", "/healthz", "/api/v2/no-such-route", "/docs", "/docs/assets/start.js"]) {
      const res = await anonymous.get(path);
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
    }
    expect((await tenant.api.get("/projects")).headers.get("x-content-type-options")).toBe("nosniff");
    const docs = await anonymous.get("/docs");
    const csp = docs.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline'; script");
    expect(docs.body).not.toMatch(/<script>[^<]/);
  });

  test("an error that escapes the application gets the JSON envelope, not Bun's page", async () => {
    const answer = lastResortErrorResponse(new Logger("error"))(new RangeError("Maximum call stack size exceeded"));
    expect(answer.status).toBe(500);
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await answer.json()).toEqual({ detail: "internal server error", code: "INTERNAL_ERROR" });
  });
});
