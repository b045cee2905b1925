/**
 * Rebuilds a table with a changed definition, the way SQLite's ALTER TABLE documentation
 * prescribes for changes ALTER TABLE cannot make (dropping a CHECK, moving columns out): a new
 * table from the changed CREATE statement, the rows copied with their rowids, the old table
 * dropped, the new one renamed, and the table's indexes and triggers created again.
 * The caller runs it with foreign keys OFF (see Migration.rebuildsTables): dropping a parent table
 * with them on would delete every child row through ON DELETE CASCADE.
 */
import type { Database } from "bun:sqlite";

export interface Rebuild {
  /** The new CREATE TABLE statement from the current one (named as the table; renamed here). */
  create(current: string): string;
  /** Columns of the new table, copied from the old table's columns of the same name. Default: all of the new table's. */
  columns?: string[];
}

export function rebuildTable(db: Database, table: string, rebuild: Rebuild): void {
  if (db.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()?.foreign_keys) {
    throw new Error(`rebuilding ${table} needs foreign keys off (its children would be deleted with it)`);
  }
  const current = db.query<{ sql: string }, [string]>("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?").get(table);
  if (!current) throw new Error(`no table ${table}`);
  const dependents = db
    .query<{ sql: string }, [string]>("SELECT sql FROM sqlite_schema WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL")
    .all(table);
  const temporary = `${table}__rebuilt`;
  const created = rebuild.create(current.sql);
  const head = new RegExp(`^CREATE TABLE\\s+"?${table}"?\\s*\\(`, "i");
  if (!head.test(created)) throw new Error(`the new definition of ${table} must start with CREATE TABLE ${table} (`);
  db.run(created.replace(head, `CREATE TABLE ${temporary} (`));
  const columns = rebuild.columns ?? db.query<{ name: string }, []>(`PRAGMA table_info(${temporary})`).all().map((c) => c.name);
  const list = columns.map((c) => `"${c}"`).join(", ");
  db.run(`INSERT INTO ${temporary} (rowid, ${list}) SELECT rowid, ${list} FROM ${table}`);
  db.run(`DROP TABLE ${table}`);
  // Legacy renaming leaves views and other tables' triggers naming the table as they are (they
  // name it again once renamed) instead of refusing while it is missing.
  const legacy = db.query<{ legacy_alter_table: number }, []>("PRAGMA legacy_alter_table").get()?.legacy_alter_table ?? 0;
  db.run("PRAGMA legacy_alter_table = ON");
  try {
    db.run(`ALTER TABLE ${temporary} RENAME TO ${table}`);
  } finally {
    db.run(`PRAGMA legacy_alter_table = ${legacy}`);
  }
  for (const { sql } of dependents) db.run(sql);
  const broken = db.query(`PRAGMA foreign_key_check(${table})`).all();
  if (broken.length) throw new Error(`rebuilding ${table} broke ${broken.length} foreign keys`);
}
