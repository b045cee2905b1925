/**
 * A cloud import survives kill -9: a Mediabox process dies while a file waits to be retried, the
 * next process on the same data directory takes the job over at start, files already imported
 * are not downloaded again, and the job completes. The tokens it needs were sealed with the data
 * directory's key file, which the second process reads back.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startCloudStack, connect, type CloudStack } from "./support/cloud-setup.ts";
import { png } from "./support/fixtures.ts";
import { pollApi, waitFor } from "./support/polling.ts";
import { spawnServer, type ServerProcess } from "./support/process.ts";
import { ApiClient } from "./support/server.ts";
import { engineEnvironment } from "./support/suite-database.ts";

const MAIN = join(import.meta.dir, "..", "src", "main.ts");
let stack: CloudStack | null = null;
const children: ServerProcess[] = [];

afterAll(async () => {
  await Promise.allSettled(children.map((c) => c.stop("SIGKILL")));
  await stack?.stop();
});

test("an import interrupted by kill -9 resumes in the next process and downloads each file once", async () => {
  stack = await startCloudStack();
  const tenant = await stack.server.tenant();
  const { connection } = await connect(stack, tenant, "google_drive");
  await stack.server.close();

  const one = stack.drive.add({ name: "one.png", mimeType: "image/png", bytes: png(4, 4, 91) });
  const two = stack.drive.add({ name: "two.png", mimeType: "image/png", bytes: png(4, 4, 92) });
  stack.drive.faults.push({ pattern: new RegExp(`${two}\\?alt=media`), status: 503, times: 1, retryAfter: 60 });
  // The processes serve the test server's database: its SQLite file, or its PostgreSQL database in a PostgreSQL run.
  const env = { ...(await engineEnvironment(stack.dataDir)), ...stack.env, MEDIABOX_DATA_DIR: stack.dataDir, MEDIABOX_LOG_LEVEL: "info", MEDIABOX_TRUSTED_PROXIES: "loopback", MEDIABOX_JOB_LEASE_SECONDS: "600" };

  const first = await spawnServer([process.execPath, MAIN, "serve"], { env });
  children.push(first);
  const res = await new ApiClient(first.url, tenant.key).post("/cloud-storage/import", { connection_id: connection.id, files: [{ id: one, name: "one.png" }, { id: two, name: "two.png" }] });
  expect(res.status).toBe(200);
  // The second file's first try got a 503 with Retry-After 60: the job sleeps on it.
  await waitFor(() => stack!.drive.requests.some((r) => r.includes(`${two}?alt=media`)), { what: "the second file's first download attempt" });
  expect(await first.stop("SIGKILL")).not.toBe(0);

  const second = await spawnServer([process.execPath, MAIN, "serve"], { env });
  children.push(second);
  const api = new ApiClient(second.url, tenant.key);
  // The lease runs 10 minutes: finishing within the deadline shows the dead process's lease was released.
  const done = await pollApi({ api }, `/cloud-storage/jobs/${res.body.job_id}`, (r) => r.status === 200 && ["completed", "partial", "failed"].includes(r.body.job.status), { what: "the resumed import", timeoutMs: 60_000 });
  expect(done.body.job).toMatchObject({ status: "completed", completed_files: 2, failed_files: 0 });
  expect(done.body.job.files.map((f: { attempts: number }) => f.attempts)).toEqual([1, 2]);
  expect(stack.drive.requests.filter((r) => r.includes(`${one}?alt=media`)).length).toBe(1);
  const file = await api.get(`/files/${res.body.image_ids[1]}`);
  expect(file.body).toMatchObject({ filename: "two.png", media_type: "image" });
  expect(await second.stop("SIGTERM")).toBe(0);
});
