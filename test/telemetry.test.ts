import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./support/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const valid = { event_type: "upload_failed", message: "network error on part 3" };

function storedEvents(where = "1 = 1") {
  return server.ctx.sql.all<Record<string, unknown>>(`SELECT * FROM upload_events WHERE ${where} ORDER BY id`);
}

test("logs an event without authentication and stores every field", async () => {
  const res = await server.anonymous().post("/files/log-upload-event", {
    ...valid,
    data: { part: 3, retries: [1, 2] },
    timestamp: "2026-11-23T09:59:58Z",
    batch_id: "batch-42",
    file_index: 7,
    file_name: "plan.pdf",
  });
  expect(res.status).toBe(200);
  expect(res.body.status).toBe("logged");
  expect(Number.isNaN(Date.parse(res.body.timestamp))).toBe(false);
  const [row] = await storedEvents("batch_id = 'batch-42'");
  expect(row).toMatchObject({
    org_id: null,
    event_type: "upload_failed",
    message: "network error on part 3",
    data: JSON.stringify({ part: 3, retries: [1, 2] }),
    client_timestamp: "2026-11-23T09:59:58Z",
    file_index: 7,
    file_name: "plan.pdf",
  });
});

test("with a valid key the event is attached to the organization", async () => {
  const tenant = await server.tenant();
  expect((await tenant.api.post("/files/log-upload-event", { ...valid, batch_id: "org-batch" })).status).toBe(200);
  expect((await storedEvents("batch_id = 'org-batch'"))[0]!.org_id).toBe(tenant.orgId);
});

test("accepts the boundary values", async () => {
  const client = (await server.tenant()).api;
  const data = { blob: "x".repeat(10 * 1024 - '{"blob":""}'.length) };
  expect(JSON.stringify(data).length).toBe(10 * 1024);
  const cases = [
    { ...valid, event_type: "e".repeat(100), message: "m".repeat(2000) },
    { ...valid, file_index: 0, file_name: "f".repeat(500), batch_id: "b".repeat(100) },
    { ...valid, file_index: 10_000, data },
    { ...valid, timestamp: 1795400000000 },
  ];
  for (const body of cases) expect((await client.post("/files/log-upload-event", body)).status).toBe(200);
});

test("rejects invalid events with 400 naming the field, storing nothing", async () => {
  const client = (await server.tenant()).api;
  const before = (await storedEvents()).length;
  const cases: [string, Record<string, unknown>][] = [
    ["event_type", { message: "m" }],
    ["message", { event_type: "e" }],
    ["event_type", { ...valid, event_type: "e".repeat(101) }],
    ["message", { ...valid, message: "m".repeat(2001) }],
    ["data", { ...valid, data: { blob: "x".repeat(10 * 1024) } }],
    ["data", { ...valid, data: "not an object" }],
    ["file_index", { ...valid, file_index: -1 }],
    ["file_index", { ...valid, file_index: 10_001 }],
    ["file_index", { ...valid, file_index: 1.5 }],
    ["file_name", { ...valid, file_name: "f".repeat(501) }],
    ["batch_id", { ...valid, batch_id: "b".repeat(101) }],
  ];
  for (const [field, body] of cases) {
    const res = await client.post("/files/log-upload-event", body);
    expect(res.status, field).toBe(400);
    expect(res.body.code, field).toBe("VALIDATION_ERROR");
    expect(res.body.detail, field).toContain(field);
  }
  expect((await storedEvents()).length).toBe(before);
});
