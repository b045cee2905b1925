/**
 * Which engine the test servers of this run keep their rows in, and how many processes serve them.
 * `MEDIABOX_TEST_DATABASE`:
 * - unset or `sqlite`: the data directory's SQLite file, the appliance's default;
 * - `postgres`: the whole HTTP suite on PostgreSQL (+ pgvector): one throwaway cluster for the run,
 *   one database per test server (a server restarted on the same data directory finds its database
 *   again), each server a single process (`MEDIABOX_SINGLE_PROCESS`) with blobs on its local disk;
 * - `postgres-shared`: the two-process deployment of docs/scale-out.md. Each test server is an `api`
 *   appliance (the one the test talks to) and a `worker` appliance with a data directory of its
 *   own, both in the test process, over the server's own PostgreSQL database and its own bucket on
 *   one S3 server for the run (s3-server.ts), sealing secrets with one key. Jobs then run in the
 *   worker only, real-time messages and rate limits cross through the database. A server or CLI a
 *   test spawns as a child process gets the same database, bucket and key, and no role (all).
 *
 * Tests that exercise what only one engine has (SQLite backups, the database file's size) ask
 * `testEngine()` and skip on the other, saying why; tests that need one process (the api's
 * in-memory state, jobs run through `server.ctx`) ask `sharedDeployment()`.
 */
import { rmSync } from "node:fs";
import { findPostgres, startPostgres, type TestPostgres } from "./postgres.ts";
import { startS3Server, type S3Fixture } from "./s3-server.ts";
import { tempDir } from "./temp-dir.ts";

/** The database engine; `postgres` too in the two-process mode (see `sharedDeployment()`). */
export type TestEngine = "sqlite" | "postgres";
export type TestMode = "sqlite" | "postgres" | "postgres-shared";

export function testMode(): TestMode {
  const raw = (process.env.MEDIABOX_TEST_DATABASE ?? "sqlite").trim().toLowerCase();
  if (raw === "" || raw === "sqlite") return "sqlite";
  if (raw === "postgres" || raw === "postgresql") return "postgres";
  if (raw === "postgres-shared") return "postgres-shared";
  throw new Error(`MEDIABOX_TEST_DATABASE must be sqlite, postgres or postgres-shared, got "${raw}"`);
}

export function testEngine(): TestEngine {
  return testMode() === "sqlite" ? "sqlite" : "postgres";
}

/** Whether each test server is an api process and a worker process sharing PostgreSQL and S3. */
export function sharedDeployment(): boolean {
  return testMode() === "postgres-shared";
}

interface ServerResources {
  database: string;
  url: Promise<string>;
  /** The shared mode's: the server's bucket and the worker's data directory, kept across restarts. */
  bucket?: string;
  workerDir?: string;
  /** Whether the bucket has its CORS rule yet (a restarted server finds it already there). */
  corsApplied?: boolean;
}

let cluster: Promise<TestPostgres> | null = null;
let s3: Promise<S3Fixture> | null = null;
const resources = new Map<string, ServerResources>();
let counter = 0;
/** One key for every process of the run: processes sharing a database must seal secrets alike. */
const SHARED_TOKEN_KEY = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");

function suiteCluster(): Promise<TestPostgres> {
  cluster ??= (async () => {
    const found = findPostgres();
    // Asked for explicitly: no server is a failure of the run, not a reason to skip.
    if ("missing" in found) throw new Error(`MEDIABOX_TEST_DATABASE=${testMode()}, but ${found.missing}`);
    if (!found.vector) throw new Error(`MEDIABOX_TEST_DATABASE=${testMode()}, but the PostgreSQL in ${found.bin} has no pgvector`);
    // Each test server holds a pool of up to 10 connections while it runs, and a file may keep
    // several servers open (preload.ts names files that never close theirs).
    return startPostgres(found, { maxConnections: 1000 });
  })();
  return cluster;
}

/**
 * The environment a server or CLI over `dataDir` adds to its own: nothing on SQLite; on PostgreSQL
 * the database URL (created on first use of this data directory) and single-process mode; in the
 * shared mode the database URL, the sealing key and the data directory's bucket, without a role
 * (a child process spawned with it does everything; startTestServer gives its two their roles).
 */
export async function engineEnvironment(dataDir: string): Promise<Record<string, string>> {
  const mode = testMode();
  if (mode === "sqlite") return {};
  let server = resources.get(dataDir);
  if (!server) {
    counter += 1;
    const database = `suite_${process.pid}_${counter}`;
    server = { database, url: suiteCluster().then((pg) => pg.createDatabase(database)) };
    if (mode === "postgres-shared") {
      server.bucket = `suite-${process.pid}-${counter}`;
      server.workerDir = tempDir("mediabox-worker-");
    }
    resources.set(dataDir, server);
  }
  const url = await server.url;
  if (mode === "postgres") return { MEDIABOX_DATABASE: url, MEDIABOX_SINGLE_PROCESS: "true" };
  s3 ??= startS3Server();
  const bucketEnv = (await s3).addBucket(server.bucket!);
  if (!server.corsApplied) {
    await (await s3).allowBrowserUploads(server.bucket!);
    server.corsApplied = true;
  }
  return { MEDIABOX_DATABASE: url, MEDIABOX_CLOUD_TOKEN_KEY: SHARED_TOKEN_KEY, ...bucketEnv };
}

/** In the shared mode, the data directory of the worker beside the server over `dataDir` (after engineEnvironment); else null. */
export function workerDataDir(dataDir: string): string | null {
  return resources.get(dataDir)?.workerDir ?? null;
}

/** Drops the database (and bucket) of a data directory that is gone (its server closed for good). */
export async function releaseEngine(dataDir: string): Promise<void> {
  const server = resources.get(dataDir);
  if (!server || !cluster) return;
  resources.delete(dataDir);
  await (await cluster).dropDatabase(server.database);
  if (server.bucket && s3) (await s3).removeBucket(server.bucket);
  if (server.workerDir) rmSync(server.workerDir, { recursive: true, force: true });
}

/** Stops the run's cluster and S3 server, if they were started (preload.ts, after the last test file). */
export async function stopSuiteDatabase(): Promise<void> {
  const [startedCluster, startedS3] = [cluster, s3];
  cluster = null;
  s3 = null;
  resources.clear();
  if (startedS3) await (await startedS3).close();
  if (startedCluster) await (await startedCluster).stop();
}
