/**
 * The databases a module on the data-access port is tested on: SQLite always, and a throwaway
 * PostgreSQL cluster where its binaries are found (else postgresOrSkip says why and the file's
 * PostgreSQL half is absent). Registers the file's beforeAll and afterAll that open and close them.
 */
import { afterAll, beforeAll } from "bun:test";
import { join } from "node:path";
import { openDatabase, type Database } from "../../src/db/database.ts";
import type { PostgresClient } from "../../src/db/postgres-client.ts";
import { openPostgres } from "../../src/db/postgres-database.ts";
import type { DialectName, SqlClient } from "../../src/db/sql-client.ts";
import { SqliteClient } from "../../src/db/sqlite-client.ts";
import { GroupCommit } from "../../src/db/group-commit.ts";
import { postgresOrSkip, startPostgres, type TestPostgres } from "./postgres.ts";
import { tempDir } from "./temp-dir.ts";
import { ApiError } from "../../src/errors.ts";

export interface PortEngines {
  /** `client(n)`: the database as process `n` sees it (PostgreSQL: pool n of `processes`; SQLite: its one client). */
  engines: { name: DialectName; client: (process?: number) => SqlClient }[];
  /** The SQLite database behind the SQLite engine, for what a module still does on the raw handle. */
  sqlite: () => Database;
}

/**
 * `label` names the temporary SQLite file and the PostgreSQL database; `connections` is each
 * PostgreSQL pool's size; `processes` pools stand for as many processes sharing the database;
 * `groupCommit` gives the SQLite client the appliance's group commit.
 */
export function portEngines(
  label: string,
  { connections = 2, processes = 1, groupCommit = false }: { connections?: number; processes?: number; groupCommit?: boolean } = {},
): PortEngines {
  const binaries = postgresOrSkip();
  let sqliteDb: Database | null = null;
  let sqliteClient: SqliteClient | null = null;
  let pg: TestPostgres | null = null;
  const pools: PostgresClient[] = [];
  beforeAll(async () => {
    sqliteDb = openDatabase(join(tempDir(`mediabox-port-${label}-`), `${label}.db`));
    sqliteClient = new SqliteClient(sqliteDb, groupCommit ? new GroupCommit(sqliteDb) : undefined);
    if (binaries) {
      pg = await startPostgres(binaries);
      const url = await pg.createDatabase(label);
      for (let n = 0; n < processes; n++) pools.push(await openPostgres(url, { max: connections }));
    }
  }, 120_000);
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.close()));
    await pg?.stop();
    sqliteDb?.close();
  });
  const sqlite = () => sqliteDb ?? (() => { throw new Error("the SQLite engine is opened in beforeAll"); })();
  const engines: PortEngines["engines"] = [{ name: "sqlite", client: () => (sqlite(), sqliteClient!) }];
  if (binaries) engines.push({ name: "postgres", client: (n = 0) => pools[n]! });
  return { engines, sqlite };
}

/** The error code a call refuses with (ApiError); fails the test when it does not refuse. */
export async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
  throw new Error("expected a refusal");
}

/** An organization (CUSTOM tier) and its Default project, written through the port; returns the project's id. */
export async function tenantRows(sql: SqlClient, orgId: string): Promise<string> {
  const projectId = `${orgId}-default`;
  await sql.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, 'CUSTOM', 'x') ON CONFLICT DO NOTHING", [orgId, orgId, orgId]);
  await sql.run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES (?, ?, 'Default', 'default', 1, 'x', 'x') ON CONFLICT DO NOTHING", [projectId, orgId]);
  return projectId;
}
