/**
 * Scale-out settings (docs/scale-out.md): `serve --role api|worker|all`, MEDIABOX_DATABASE, and
 * the startup rule that processes sharing a PostgreSQL database share one blob store. An api
 * process serves requests and runs no job; a worker runs the jobs waiting in the same database
 * and answers only probes and metrics.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../src/config.ts";
import { jobRow } from "./support/job-rows.ts";
import { run } from "./support/process.ts";
import { waitFor } from "./support/polling.ts";
import { startTestServer, tempDir, type TestServer } from "./support/server.ts";
import { sharedDeployment } from "./support/suite-database.ts";

const MAIN = join(import.meta.dir, "..", "src", "main.ts");
const PG = "postgres://mediabox:secret@db.internal:5432/mediabox";
const KEY = Buffer.alloc(32, 7).toString("base64");

describe("settings", () => {
  test("a PostgreSQL database with blobs on local disk or without a shared sealing key is refused unless this is the only process", () => {
    const base = { MEDIABOX_DATA_DIR: tempDir() };
    expect(() => loadConfig({}, { ...base, MEDIABOX_DATABASE: PG })).toThrow(/MEDIABOX_STORAGE=s3.*MEDIABOX_SINGLE_PROCESS=true/);
    expect(loadConfig({}, { ...base, MEDIABOX_DATABASE: PG, MEDIABOX_SINGLE_PROCESS: "true" }).database).toEqual({ kind: "postgres", url: PG });
    const s3 = { MEDIABOX_STORAGE: "s3", MEDIABOX_S3_BUCKET: "media" };
    const shared = loadConfig({}, { ...base, ...s3, MEDIABOX_DATABASE: PG, MEDIABOX_CLOUD_TOKEN_KEY: KEY });
    expect([shared.database.kind, shared.storage, shared.singleProcess]).toEqual(["postgres", "s3", false]);
    // Secrets sealed by one process must open in the others: one key for all, given, not a file per data directory.
    expect(() => loadConfig({}, { ...base, ...s3, MEDIABOX_DATABASE: PG })).toThrow(/MEDIABOX_CLOUD_TOKEN_KEY to the same value in every process/);
    // The default stays the data directory's SQLite file, one process doing everything.
    const plain = loadConfig({}, base);
    expect([plain.database, plain.role]).toEqual([{ kind: "sqlite" }, "all"]);
  });

  test("a malformed database or role is refused with the setting's name; a password is not echoed", () => {
    let caught: unknown;
    try {
      loadConfig({}, { MEDIABOX_DATABASE: "mysql://root:hunter2@db/x" });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect(String(caught)).toContain("MEDIABOX_DATABASE");
    expect(String(caught)).not.toContain("hunter2");
    expect(() => loadConfig({ role: "scheduler" })).toThrow(/--role \/ MEDIABOX_ROLE: expected all, api or worker/);
  });

  test("serve with a PostgreSQL database it cannot reach stops with a message naming the setting, not its password (exit 1)", async () => {
    const unreachable = "postgres://mediabox:hunter2@127.0.0.1:1/mediabox";
    const res = await run([process.execPath, MAIN, "serve", "--data-dir", tempDir(), "--port", "0", "--database", unreachable, "--single-process", "true"]);
    expect(res.exitCode).toBe(1);
    expect(res.stderr).toContain("MEDIABOX_DATABASE: cannot open the PostgreSQL database");
    expect(res.stderr).not.toContain("hunter2");
  });
});

describe("roles on one data directory", () => {
  const dataDir = tempDir("mediabox-roles-");
  const ran: string[] = [];
  const queues = [{ name: "t.role" as const, concurrency: 1, handler: async (ctx: { payload: { n: number } }) => void ran.push(`job ${ctx.payload.n}`) }];
  let server: TestServer | null = null;
  afterAll(async () => server?.close());

  // The shared mode starts a worker beside every test server, which runs the job the lone api process must leave.
  test.skipIf(sharedDeployment())("an api process serves the API and runs no job; a worker then runs it and answers only probes", async () => {
    server = await startTestServer({ dataDir, queues, env: { MEDIABOX_ROLE: "api" } });
    const tenant = await server.tenant();
    expect((await tenant.api.get("/projects")).status).toBe(200);
    const { id } = await server.ctx.jobs.submit({ queue: "t.role", payload: { n: 1 } });
    expect(server.ctx.jobs.isRunning).toBe(false);
    // Ready all the same: running no jobs is what an api process is for.
    const ready = await server.anonymous().get("/readyz");
    expect([ready.status, ready.body.checks.jobs]).toEqual([200, { ok: true, detail: "run by the worker processes (role api)" }]);
    await server.close();
    server = null;
    expect(ran).toEqual([]);

    server = await startTestServer({ dataDir, queues, env: { MEDIABOX_ROLE: "worker" } });
    const sql = server.ctx.sql;
    await waitFor(async () => (await jobRow(sql, id))?.status === "completed", { what: `job ${id} to run in the worker` });
    expect(ran).toEqual(["job 1"]);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await server.anonymous().get("/readyz")).body.checks.jobs).toEqual({ ok: true, detail: "workers running" });
    const api = await fetch(`${server.url}/api/v2/projects`, { headers: { authorization: `Bearer ${tenant.key}` } });
    expect(api.status).toBe(404);
  });
});
