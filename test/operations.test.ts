import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startTestServer, tempDir, type TestServer } from "./support/server.ts";
import { sharedDeployment, testEngine } from "./support/suite-database.ts";
import { upsertManifestModel } from "../src/models/manifest.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());
/** Servers a test started: stopped after it, whatever happened. */
const extraServers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(extraServers.splice(0).map((s) => s.close()));
});

describe("health", () => {
  test("/healthz answers without authentication", async () => {
    const res = await server.anonymous().get("/healthz");
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("ok");
  });

  test("/readyz reports each dependency", async () => {
    const res = await server.anonymous().get("/readyz");
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("ready");
    expect(Object.keys(res.body.checks).sort()).toEqual(["database", "jobs", "schema", "vector_search"]);
    expect(res.body.checks.vector_search.detail).toMatch(testEngine() === "postgres" ? /^pgvector \d/ : /^sqlite-vec v\d/);
  });

  test("/readyz names each installed model with its version and SHA-256, and the text model in use", async () => {
    const modelsDir = tempDir("models-");
    mkdirSync(path.join(modelsDir, "fixture-text", "onnx"), { recursive: true });
    writeFileSync(path.join(modelsDir, "fixture-text", "onnx", "model_quantized.onnx"), "weights");
    const archive = "a".repeat(64);
    upsertManifestModel(modelsDir, {
      name: "fixture-text",
      role: "text_embedding",
      source: "maven org.example:fixture-text@1.2.3",
      package: { registry: "maven", name: "org.example:fixture-text", version: "1.2.3", sha256: archive, license: "MIT" },
      files: [{ path: "onnx/model_quantized.onnx", bytes: 7, sha256: "b".repeat(64) }],
    });
    // A folder a site installed by hand: no package, its weights' SHA-256 stands for it.
    upsertManifestModel(modelsDir, { name: "own-model", role: "other", files: [{ path: "small.json", bytes: 2, sha256: "c".repeat(64) }, { path: "big.onnx", bytes: 900, sha256: "d".repeat(64) }] });
    const other = await startTestServer({ env: { MEDIABOX_MODELS_DIR: modelsDir, MEDIABOX_TEXT_EMBEDDING_MODEL: "missing-model" } });
    extraServers.push(other);
    const res = await other.anonymous().get("/readyz");
    expect(res.status).toBe(200);
    expect(res.body.models.installed).toEqual([
      { name: "fixture-text", role: "text_embedding", source: "maven org.example:fixture-text@1.2.3", version: "1.2.3", sha256: archive, license: "MIT" },
      { name: "own-model", role: "other", source: null, version: null, sha256: "d".repeat(64), license: null },
    ]);
    expect(res.body.models.text_embedding).toMatchObject({ configured: "missing-model", in_use: "use-lite-sif", pending_chunks: 0 });
    expect(res.body.models.text_embedding.fallback_reason).toContain("models/missing-model does not exist");
  });

  // An api process runs no job workers of its own: stopping them cannot make it unready.
  test.skipIf(sharedDeployment())("/readyz is 503 when the job workers are down", async () => {
    const other = await startTestServer();
    extraServers.push(other);
    await other.ctx.jobs.stop();
    const res = await other.anonymous().get("/readyz");
    expect(res.status).toBe(503);
    expect(res.body.status).toBe("not_ready");
    expect(res.body.checks.jobs.ok).toBe(false);
  });
});

describe("OpenAPI", () => {
  test("the document is valid OpenAPI 3.1", async () => {
    const res = await server.anonymous().get("/api/v2/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toStartWith("3.1");
    const result = await new Validator().validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  test("every API operation declares its responses, and writes declare their bodies", async () => {
    const doc = (await server.anonymous().get("/api/v2/openapi.json")).body;
    const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ path, method, op })),
    );
    const api = operations.filter((o) => o.path.startsWith("/api/v2/") && !o.path.startsWith("/api/v2/datasets"));
    expect(api.map((o) => `${o.method.toUpperCase()} ${o.path}`)).toEqual(
      expect.arrayContaining([
        "POST /api/v2/projects",
        "GET /api/v2/projects",
        "GET /api/v2/projects/{project_id}",
        "PATCH /api/v2/projects/{project_id}",
        "DELETE /api/v2/projects/{project_id}",
        "POST /api/v2/folders",
        "GET /api/v2/job/{job_id}",
        "POST /api/v2/files/log-upload-event",
      ]),
    );
    for (const { path, method, op } of api) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(Object.keys(op.responses ?? {}).length, where).toBeGreaterThan(1);
      const success = op.responses["200"] ?? op.responses["201"] ?? op.responses["202"] ?? op.responses["204"] ?? op.responses["101"] ?? op.responses["302"] ?? op.responses["303"];
      expect(success, where).toBeDefined();
      const bodiless = /\/(cancel|restore|trigger-variants|recrawl|reprocess|apply|rotate-secret|retry|redeliver|test|recluster|poll|train)$/.test(path) ||
        /\/auth\/session\/(logout|logout-all|rotate-session|resend-verification)$/.test(path);
      if ((method === "post" || method === "patch") && !bodiless) {
        const content = op.requestBody?.content ?? {};
        // text/plain: the payment webhook, whose signature covers the body's exact bytes.
        expect(content["application/json"]?.schema ?? content["multipart/form-data"]?.schema ?? content["text/plain"]?.schema, where).toBeDefined();
      }
    }
    expect(doc.paths["/api/v2/files/log-upload-event"].post.security).toEqual([]);
  });

  test("the docs page works offline: its scripts and styles are served locally", async () => {
    const page = await server.anonymous().get("/docs");
    expect(page.status).toBe(200);
    const html = String(page.body);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toContain("/docs/assets/swagger-ui-bundle.js");
    expect(assets.filter((a) => /^https?:/.test(a))).toEqual([]);
    for (const asset of ["/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css"]) {
      const res = await fetch(server.url + asset);
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    }
  });
});
