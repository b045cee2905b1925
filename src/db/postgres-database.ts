/**
 * Opens a PostgreSQL database for Mediabox and brings its schema up to date with the same
 * migrations SQLite runs (translated by postgres-migrations.ts). Several processes may start at
 * once against one database: an advisory lock makes one of them migrate while the others wait,
 * then find nothing left to do.
 */
import { MIGRATIONS, type Migration } from "./migrations/index.ts";
import { PostgresClient } from "./postgres-client.ts";
import { POSTGRES_PREAMBLE, postgresMigrations } from "./postgres-migrations.ts";

/** pg_advisory_lock key of schema migrations (any constant; "mediabox" in ASCII, truncated). */
const MIGRATION_LOCK = 0x6d656469;

export async function openPostgres(url: string, options: { max?: number; migrations?: Migration[] } = {}): Promise<PostgresClient> {
  const client = new PostgresClient(url, options.max === undefined ? {} : { max: options.max });
  try {
    await migratePostgres(client, options.migrations ?? MIGRATIONS);
  } catch (err) {
    await client.close();
    throw err;
  }
  return client;
}

export async function migratePostgres(client: PostgresClient, migrations: Migration[]): Promise<void> {
  const translated = postgresMigrations(migrations);
  await client.transaction(async (tx) => {
    // Held until this transaction ends; other processes starting now wait here.
    await tx.run(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await tx.run(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
    const applied = new Set((await tx.all<{ version: number }>("SELECT version FROM schema_migrations")).map((r) => r.version));
    const known = new Set(migrations.map((m) => m.version));
    const unknown = [...applied].filter((v) => !known.has(v));
    if (unknown.length > 0) {
      throw new Error(
        `database schema version ${Math.max(...applied)} is newer than this build understands; ` +
          "run the newer Mediabox release or restore a backup taken before the upgrade",
      );
    }
    const pending = translated.filter((m) => !applied.has(m.version));
    if (pending.length > 0 && applied.size === 0) await tx.script(POSTGRES_PREAMBLE);
    for (const migration of pending) {
      await tx.script(migration.sql);
      await tx.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [migration.version, migration.name, new Date().toISOString()]);
    }
  });
}
