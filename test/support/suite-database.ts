/**
 * Which engine the test servers of this run keep their rows in. `MEDIABOX_TEST_DATABASE=postgres`
 * runs the whole HTTP suite on PostgreSQL (+ pgvector): one throwaway cluster for the run, one
 * database per test server (a server restarted on the same data directory finds its database
 * again), each server a single process (`MEDIABOX_SINGLE_PROCESS`) with blobs on its local disk.
 * Unset or `sqlite`: the data directory's SQLite file, the appliance's default.
 *
 * Tests that exercise what only one engine has (SQLite backups, the database file's size) ask
 * `testEngine()` and skip on the other, saying why.
 */
import { findPostgres, startPostgres, type TestPostgres } from "./postgres.ts";

export type TestEngine = "sqlite" | "postgres";

export function testEngine(): TestEngine {
  const raw = (process.env.MEDIABOX_TEST_DATABASE ?? "sqlite").trim().toLowerCase();
  if (raw === "" || raw === "sqlite") return "sqlite";
  if (raw === "postgres" || raw === "postgresql") return "postgres";
  throw new Error(`MEDIABOX_TEST_DATABASE must be sqlite or postgres, got "${raw}"`);
}

let cluster: Promise<TestPostgres> | null = null;
const databases = new Map<string, { name: string; url: Promise<string> }>();
let counter = 0;

function suiteCluster(): Promise<TestPostgres> {
  cluster ??= (async () => {
    const found = findPostgres();
    // Asked for explicitly: no server is a failure of the run, not a reason to skip.
    if ("missing" in found) throw new Error(`MEDIABOX_TEST_DATABASE=postgres, but ${found.missing}`);
    if (!found.vector) throw new Error(`MEDIABOX_TEST_DATABASE=postgres, but the PostgreSQL in ${found.bin} has no pgvector`);
    return startPostgres(found, { maxConnections: 300 });
  })();
  return cluster;
}

/**
 * The environment a test server over `dataDir` adds to its own: nothing on SQLite; on PostgreSQL
 * the database URL (created on first use of this data directory) and single-process mode.
 */
export async function engineEnvironment(dataDir: string): Promise<Record<string, string>> {
  if (testEngine() === "sqlite") return {};
  let database = databases.get(dataDir);
  if (!database) {
    counter += 1;
    const name = `suite_${process.pid}_${counter}`;
    database = { name, url: suiteCluster().then((pg) => pg.createDatabase(name)) };
    databases.set(dataDir, database);
  }
  return { MEDIABOX_DATABASE: await database.url, MEDIABOX_SINGLE_PROCESS: "true" };
}

/** Drops the database of a data directory that is gone (its server closed for good). */
export async function releaseEngine(dataDir: string): Promise<void> {
  const database = databases.get(dataDir);
  if (!database || !cluster) return;
  databases.delete(dataDir);
  await (await cluster).dropDatabase(database.name);
}

/** Stops the run's cluster, if one was started (preload.ts, after the last test file). */
export async function stopSuiteDatabase(): Promise<void> {
  if (!cluster) return;
  const started = cluster;
  cluster = null;
  databases.clear();
  await (await started).stop();
}
