/**
 * Schema changes of a feature's own tables (a media kind's, MediaKind.tables), outside the
 * numbered core migrations, applied through the data-access port so a kind brings its tables to
 * SQLite and PostgreSQL alike (its SQLite statements translated as the core migrations are).
 */
import type { SqlClient } from "./sql-client.ts";
import { postgresMigrations, splitStatements } from "./postgres-migrations.ts";

export interface OwnedMigration {
  /** 1, 2, ... in the owner's own numbering: append only, as src/db/migrations/. */
  version: number;
  name: string;
  /** Written for SQLite; translated for PostgreSQL (src/db/postgres-migrations.ts). */
  sql: string;
}

/**
 * Applies `owner`'s migrations not applied yet, in order, after the core ones (they may refer to
 * core tables: `REFERENCES files(id) ON DELETE CASCADE`), in one transaction recorded per owner in
 * `owned_migrations`. Processes starting together against one PostgreSQL database take turns on
 * the owner's lock, so one of them applies and the others find nothing to do. A database holding
 * a version of the owner this build does not know was upgraded by a newer build, as with the core
 * migrations.
 */
export async function migrateOwned(client: SqlClient, owner: string, migrations: readonly OwnedMigration[]): Promise<void> {
  const { dialect } = client;
  const scripts = dialect.name === "postgres" ? postgresMigrations(migrations.map((m) => ({ ...m }))) : migrations;
  await client.transaction(async (tx) => {
    await tx.run(dialect.transactionLock(`owned_migrations_${owner.replace(/[^A-Za-z0-9_]/g, "_")}`));
    await tx.run(`CREATE TABLE IF NOT EXISTS owned_migrations (
      owner TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (owner, version))`);
    const applied = new Set((await tx.all<{ version: number }>("SELECT version FROM owned_migrations WHERE owner = ?", [owner])).map((r) => r.version));
    const known = new Set(migrations.map((m) => m.version));
    const unknown = [...applied].filter((version) => !known.has(version));
    if (unknown.length > 0) {
      throw new Error(
        `the tables of ${owner} are at version ${Math.max(...applied)}, newer than this build understands; ` +
          "run the newer Mediabox release or restore a backup taken before the upgrade",
      );
    }
    for (const migration of [...scripts].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue;
      for (const statement of splitStatements(migration.sql)) if (statement.trim()) await tx.run(statement);
      await tx.run("INSERT INTO owned_migrations (owner, version, name, applied_at) VALUES (?, ?, ?, ?)", [owner, migration.version, migration.name, new Date().toISOString()]);
    }
  });
}
