/**
 * GET /metrics in Prometheus text format, through a running server: request latency by route
 * template and status, jobs and queue depth read from the database, stage durations, uploads and
 * bytes, blob store errors, the database size; and the optional bearer token.
 */
import { afterEach, expect, test } from "bun:test";
import { png } from "./support/fixtures.ts";
import { processed } from "./support/polling.ts";
import { startTestServer, type TestServer } from "./support/server.ts";
import { sharedDeployment, testEngine } from "./support/suite-database.ts";
import { WorkerThread } from "../src/native/worker-thread.ts";

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function scrape(server: TestServer, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/metrics`, { headers });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

/** The value of the first sample whose name and labels contain `match`, or null. */
function sample(text: string, match: RegExp): number | null {
  const line = text.split("\n").find((l) => !l.startsWith("#") && match.test(l));
  return line ? Number(line.split(" ").at(-1)) : null;
}

test("metrics cover requests, jobs, stages, uploads, blob errors and the database", async () => {
  const server = await startTestServer();
  servers.push(server);
  const tenant = await server.tenant();
  const form = new FormData();
  form.append("file", new Blob([png(32, 32, 5) as Uint8Array<ArrayBuffer>]), "m.png");
  form.append("auto_describe", "false");
  const upload = await tenant.api.form("/files/upload", form);
  expect(upload.status).toBe(201);
  await processed(tenant, upload.body.image_id);
  expect((await tenant.api.get(`/files/${crypto.randomUUID()}`)).status).toBe(404);
  // A blob store failure: deleting an object under an invalid key throws in the store.
  await server.ctx.blobs.delete("../escape").catch(() => {});

  const { status, type, text } = await scrape(server);
  expect(status).toBe(200);
  expect(type).toStartWith("text/plain; version=0.0.4");
  expect(sample(text, /^mediabox_http_request_duration_seconds_count\{.*route="\/api\/v2\/files\/upload".*status="201"/)).toBe(1);
  expect(sample(text, /^mediabox_http_request_duration_seconds_count\{.*route="\/api\/v2\/files\/:file_id".*status="404"/)).toBe(1);
  expect(sample(text, /^mediabox_jobs\{queue="file\.process",status="completed"\}/)).toBe(1);
  expect(text).toContain("# TYPE mediabox_queue_depth gauge");
  expect(text).toContain("# TYPE mediabox_queue_oldest_pending_age_seconds gauge");
  // Stage timings are counted in the process that ran the job: with a worker beside the api, not the one scraped here.
  if (!sharedDeployment()) expect(sample(text, /^mediabox_stage_duration_seconds_count\{media_type="image",stage="variants",status="completed"\}/)).toBe(1);
  expect(sample(text, /^mediabox_uploads_total\{method="streaming",media_type="image"\}/)).toBe(1);
  expect(sample(text, /^mediabox_upload_bytes_total\{method="streaming",media_type="image"\}/)).toBe(png(32, 32, 5).byteLength);
  expect(sample(text, /^mediabox_blob_store_errors_total\{operation="delete"\}/)).toBe(1);
  // The size of the database file and its WAL is SQLite's; PostgreSQL has no file here to measure.
  if (testEngine() === "sqlite") expect(sample(text, /^mediabox_database_bytes\{file="database"\}/)).toBeGreaterThan(0);
  else expect(text).not.toContain("mediabox_database_bytes");
  expect(text).toContain("mediabox_process_resident_memory_bytes");
  expect(sample(text, /^mediabox_nodejs_heap_size_used_bytes/)).toBeGreaterThan(0);
  // Left out: Bun walks its whole heap to answer them, tens of ms of the event loop a scrape.
  expect(text).not.toContain("mediabox_nodejs_heap_space_size");
});

test("with MEDIABOX_METRICS_TOKEN, /metrics needs that bearer token", async () => {
  const server = await startTestServer({ env: { MEDIABOX_METRICS_TOKEN: "s3cret-metrics" } });
  servers.push(server);
  expect((await scrape(server)).status).toBe(401);
  expect((await scrape(server, { authorization: "Bearer wrong-token!" })).status).toBe(401);
  const ok = await scrape(server, { authorization: "Bearer s3cret-metrics" });
  expect(ok.status).toBe(200);
  expect(ok.text).toContain("mediabox_http_request_duration_seconds");
});

test("a worker thread that cannot start is counted, so a degraded binary shows", async () => {
  const server = await startTestServer();
  servers.push(server);
  const thread = new WorkerThread<string, string>("no/such-worker.ts", "a thread with no entry");
  expect(await thread.ask("anything")).toBeInstanceOf(Error);
  expect(thread.broken).toBe(true);
  const { text } = await scrape(server);
  expect(text).toContain("# TYPE mediabox_worker_thread_failures gauge");
  expect(sample(text, /^mediabox_worker_thread_failures\{thread="a thread with no entry"\}/)).toBe(1);
});
