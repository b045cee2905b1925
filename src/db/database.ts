/**
 * Opens the appliance's SQLite database: pragmas for a concurrent, crash-safe server (WAL,
 * busy timeout, foreign keys), the sqlite-vec extension, and the versioned migrations.
 */
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { getLoadablePath } from "sqlite-vec";
import { MIGRATIONS, type Migration } from "./migrations/index.ts";

export type { Database };

/**
 * Compiled statements `db.query()` keeps, by SQL text (Bun's default: the 20 most recently
 * used). The server runs a few hundred distinct statements; with 20 kept, nearly every query of
 * a bulk import compiled its SQL again (a files INSERT and its triggers, each job claim and
 * finish), ~7 % of the event loop's time. Variants built from request filters are bounded by
 * this too.
 */
Database.MAX_QUERY_CACHE_SIZE = 1_000;

export function openDatabase(path: string, migrations: Migration[] = MIGRATIONS): Database {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  // First: switching to WAL waits for a lock like any statement.
  db.run("PRAGMA busy_timeout = 5000");
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA foreign_keys = ON");
  // NORMAL is durable across process crashes in WAL mode; only an OS crash can lose the last commits.
  db.run("PRAGMA synchronous = NORMAL");
  db.loadExtension(getLoadablePath());
  migrate(db, migrations);
  return db;
}

export function migrate(db: Database, migrations: Migration[]): void {
  db.run(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const applied = db.query<{ version: number }, []>("SELECT version FROM schema_migrations").all();
  const known = new Set(migrations.map((m) => m.version));
  const newest = Math.max(0, ...applied.map((r) => r.version));
  const unknown = applied.filter((r) => !known.has(r.version));
  if (unknown.length > 0) {
    throw new Error(
      `database schema version ${newest} is newer than this build understands; ` +
        "run the newer Mediabox release or restore a backup taken before the upgrade",
    );
  }
  const done = new Set(applied.map((r) => r.version));
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (done.has(migration.version)) continue;
    const apply = () => {
      if ("sql" in migration) db.run(migration.sql);
      else if ("run" in migration) migration.run(db);
      db.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        migration.version,
        migration.name,
        new Date().toISOString(),
      );
    };
    if (!("rebuildsTables" in migration)) {
      db.transaction(apply).immediate();
      continue;
    }
    // Foreign keys cannot be switched inside a transaction; the rebuild checks them itself before committing.
    const enforced = db.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()?.foreign_keys ?? 0;
    db.run("PRAGMA foreign_keys = OFF");
    try {
      db.transaction(apply).immediate();
    } finally {
      db.run(`PRAGMA foreign_keys = ${enforced}`);
    }
  }
}

export function schemaVersion(db: Database): number {
  return db.query<{ v: number | null }, []>("SELECT max(version) AS v FROM schema_migrations").get()?.v ?? 0;
}

