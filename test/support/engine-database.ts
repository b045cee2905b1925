/**
 * The database of a data directory whose server ran as a child process (spawnServer), opened
 * through the port on the engine of this run: the data directory's SQLite file, or the PostgreSQL
 * database suite-database.ts gave that data directory. For a test that reads what the child left.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { openPostgres } from "../../src/db/postgres-database.ts";
import type { SqlClient } from "../../src/db/sql-client.ts";
import { SqliteClient } from "../../src/db/sqlite-client.ts";
import { engineEnvironment, testEngine } from "./suite-database.ts";

/** Runs `fn` over the data directory's database, closed afterwards. */
export async function withEngineDatabase<T>(dataDir: string, fn: (sql: SqlClient) => Promise<T>): Promise<T> {
  if (testEngine() === "sqlite") {
    const db = new Database(join(dataDir, "mediabox.db"), { readonly: true });
    try {
      return await fn(new SqliteClient(db));
    } finally {
      db.close();
    }
  }
  const url = (await engineEnvironment(dataDir)).MEDIABOX_DATABASE!;
  const client = await openPostgres(url, { max: 1 });
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}
