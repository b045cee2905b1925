import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

test("every Datasets route answers 404 with a detail saying the API is not yet available", async () => {
  const { api } = await server.tenant();
  const id = crypto.randomUUID();
  const calls: [string, string, unknown?][] = [
    ["POST", "/datasets", { batch_id: id, name: "d" }],
    ["GET", "/datasets"],
    ["GET", "/datasets?status=ready"],
    ["GET", `/datasets/${id}`],
    ["GET", "/datasets/statistics/summary?days=30"],
    ["POST", `/datasets/${id}/export`, { format: "csv" }],
  ];
  for (const [method, path, body] of calls) {
    const res = await api.request(method, path, body);
    expect(res.status, `${method} ${path}`).toBe(404);
    expect(res.body.code).toBe("NOT_AVAILABLE");
    expect(res.body.detail).toContain("not yet available");
  }
});

test("the Datasets routes still require authentication", async () => {
  expect((await server.anonymous().get("/datasets")).status).toBe(401);
});
