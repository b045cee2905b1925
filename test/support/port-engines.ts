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
import { postgresOrSkip, startPostgres, type TestPostgres } from "./postgres.ts";
import { tempDir } from "./temp-dir.ts";

export interface PortEngines {
  engines: { name: DialectName; client: () => SqlClient }[];
  /** The SQLite database behind the SQLite engine, for what a module still does on the raw handle. */
  sqlite: () => Database;
}

/** `label` names the temporary SQLite file and the PostgreSQL database; `connections` is PostgreSQL's pool size. */
export function portEngines(label: string, { connections = 2 }: { connections?: number } = {}): PortEngines {
  const binaries = postgresOrSkip();
  let sqliteDb: Database | null = null;
  let pg: TestPostgres | null = null;
  let postgres: PostgresClient | null = null;
  beforeAll(async () => {
    sqliteDb = openDatabase(join(tempDir(`mediabox-port-${label}-`), `${label}.db`));
    if (binaries) {
      pg = await startPostgres(binaries);
      postgres = await openPostgres(await pg.createDatabase(label), { max: connections });
    }
  }, 120_000);
  afterAll(async () => {
    await postgres?.close();
    await pg?.stop();
    sqliteDb?.close();
  });
  const sqlite = () => sqliteDb ?? (() => { throw new Error("the SQLite engine is opened in beforeAll"); })();
  const engines: PortEngines["engines"] = [{ name: "sqlite", client: () => new SqliteClient(sqlite()) }];
  if (binaries) engines.push({ name: "postgres", client: () => postgres! });
  return { engines, sqlite };
}
