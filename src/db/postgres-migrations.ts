/**
 * The schema migrations (written for SQLite, src/db/migrations/) expressed for PostgreSQL: one
 * list of migrations, translated statement by statement, so a new migration is written once.
 *
 * Translated mechanically: INTEGER -> BIGINT (milliseconds since the epoch overflow int4),
 * INTEGER PRIMARY KEY (with AUTOINCREMENT or not) -> an identity column, REAL -> DOUBLE PRECISION, BLOB -> BYTEA, WITHOUT ROWID
 * dropped, SQLite's implicit rowid -> an identity column, ifnull -> coalesce, `INSERT OR IGNORE` -> `ON CONFLICT DO NOTHING`, `json_each(x)` ->
 * jsonb_array_elements_text, `expr COLLATE NOCASE` in an index -> `lower(expr)`, triggers -> a
 * PL/pgSQL function and a row trigger, FTS5 tables -> a plain table keyed by `rowid` with a GIN
 * index over its text (stemmed, 'english', where the FTS5 table stems). SQLite-only statements
 * (the fts5vocab view of a keyword index) are left out: PostgreSQL's ts_stat answers the same
 * question. A statement none of this covers fails the translation with its text, so a migration
 * that needs a hand-written PostgreSQL form says so in test/sql-client.test.ts rather
 * than at a site's upgrade; OVERRIDES holds those forms, keyed by migration and statement.
 */
import type { Migration } from "./migrations/index.ts";

/** SQLite functions the migrations' CHECK constraints use, defined once on PostgreSQL. */
export const POSTGRES_PREAMBLE = `
CREATE OR REPLACE FUNCTION json_valid(t text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  PERFORM t::jsonb;
  RETURN true;
EXCEPTION WHEN others THEN
  RETURN false;
END $$;
`;

interface Override {
  version: number;
  /** Matches the statement (whitespace collapsed). */
  match: RegExp;
  /** The PostgreSQL statements instead; "" leaves it out. */
  postgres: string;
}

const OVERRIDES: Override[] = [
  {
    // SQLite numbers the existing rows by their rowid; PostgreSQL takes a sequence, which also
    // numbers new rows (the insert trigger below no longer needs max() + 1, which races).
    version: 4,
    match: /^UPDATE files SET search_rowid = rowid$/,
    postgres: `CREATE SEQUENCE files_search_rowid_seq OWNED BY files.search_rowid;
ALTER TABLE files ALTER COLUMN search_rowid SET DEFAULT nextval('files_search_rowid_seq');
UPDATE files SET search_rowid = nextval('files_search_rowid_seq')`,
  },
  {
    version: 4,
    match: /^CREATE TRIGGER files_search_insert AFTER INSERT ON files BEGIN/,
    postgres: triggerStatements("files_search_insert", "AFTER INSERT ON files", [
      "INSERT INTO files_fts (rowid, title, filename, tags, user_description, upload_description, visible_text) VALUES (NEW.search_rowid, NEW.title, NEW.filename, NEW.tags, NEW.user_description, NEW.upload_description, NEW.visible_text)",
    ]),
  },
];

/**
 * Statements of a script: split on `;` outside literals, comments and trigger bodies, SQLite's
 * (BEGIN ... END) and PostgreSQL's (a function's dollar-quoted body: a translated script is split
 * too, by migrateOwned).
 */
export function splitStatements(script: string): string[] {
  const statements: string[] = [];
  let current = "";
  let depth = 0; // BEGIN ... END of a trigger
  const text = script.replace(/--[^\n]*/g, "");
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      current += text.slice(i, end + 1);
      i = end;
      continue;
    }
    const dollar = c === "$" ? /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i)) : null;
    if (dollar) {
      const end = text.indexOf(dollar[0], i + dollar[0].length);
      const stop = end < 0 ? text.length : end + dollar[0].length;
      current += text.slice(i, stop);
      i = stop - 1;
      continue;
    }
    if (/[A-Za-z]/.test(c) && !/[A-Za-z0-9_]/.test(text[i - 1] ?? " ")) {
      const word = /^[A-Za-z_]+/.exec(text.slice(i))![0];
      const upper = word.toUpperCase();
      if (upper === "BEGIN" && /CREATE\s+TRIGGER/i.test(current)) depth++;
      else if (upper === "END" && depth > 0) depth--;
      current += word;
      i += word.length - 1;
      continue;
    }
    if (c === ";" && depth === 0) {
      if (current.trim()) statements.push(current.trim());
      current = "";
      continue;
    }
    current += c;
  }
  if (current.trim()) statements.push(current.trim());
  return statements;
}

const collapse = (sql: string) => sql.replace(/\s+/g, " ").trim();

function triggerStatements(name: string, event: string, body: string[]): string {
  return `CREATE OR REPLACE FUNCTION ${name}_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  ${body.join(";\n  ")};
  RETURN NULL;
END $$;
CREATE TRIGGER ${name} ${event} FOR EACH ROW EXECUTE FUNCTION ${name}_fn()`;
}

/**
 * SQLite gives every table but a WITHOUT ROWID one an implicit `rowid` in insertion order, which
 * queries use to break ties (`ORDER BY created_at DESC, rowid DESC`); PostgreSQL's table gets it
 * as an identity column, so those queries mean the same on both. A table whose INTEGER PRIMARY KEY
 * is its rowid (an alias in SQLite) keeps just its key, an identity column too (translateExpressions).
 */
function withRowid(translated: string, original: string): string {
  const create = /^CREATE TABLE (?:IF NOT EXISTS )?\w+\s*\(/i.exec(translated);
  if (!create || /\)\s*WITHOUT ROWID\s*$/i.test(original) || /\bINTEGER PRIMARY KEY\b/i.test(original)) return translated;
  const at = create[0].length;
  return `${translated.slice(0, at)}\n  rowid BIGINT GENERATED ALWAYS AS IDENTITY,${translated.slice(at)}`;
}

/** Column types and SQLite-only spellings inside one statement. */
function translateExpressions(sql: string): string {
  let out = sql
    .replace(/\bINTEGER PRIMARY KEY AUTOINCREMENT\b/gi, "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
    // A rowid alias (document_chunks.seq) is numbered by SQLite when an insert leaves it out; so by PostgreSQL.
    .replace(/\bINTEGER PRIMARY KEY\b/gi, "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
    .replace(/\bINTEGER\b/g, "BIGINT")
    .replace(/\bREAL\b/g, "DOUBLE PRECISION")
    .replace(/\bBLOB\b/g, "BYTEA")
    .replace(/\)\s*WITHOUT ROWID\s*$/i, ")")
    .replace(/\bifnull\(/gi, "coalesce(")
    .replace(/\bjson_each\(([^()]+)\)/gi, "jsonb_array_elements_text(($1)::jsonb) AS json_each(value)");
  if (/^INSERT OR IGNORE INTO\b/i.test(out)) out = `${out.replace(/^INSERT OR IGNORE INTO\b/i, "INSERT INTO")} ON CONFLICT DO NOTHING`;
  if (/^CREATE (UNIQUE )?INDEX\b/i.test(out)) {
    out = out.replace(/((?:\w+\([^()]*\))|\w+) COLLATE NOCASE\b/gi, "lower($1)");
  }
  return out;
}

interface State {
  /** Trigger name -> its table (PostgreSQL's DROP TRIGGER names the table). */
  triggers: Map<string, string>;
}

function translateStatement(statement: string, version: number, state: State): string {
  const flat = collapse(statement);
  const override = OVERRIDES.find((o) => o.version === version && o.match.test(flat));
  if (override) {
    const trigger = /^CREATE TRIGGER (\w+) .*? ON (\w+)/i.exec(flat);
    if (trigger) state.triggers.set(trigger[1]!, trigger[2]!);
    return override.postgres;
  }

  const fts = /^CREATE VIRTUAL TABLE (\w+) USING fts5\((.*)\)$/i.exec(flat);
  if (fts) {
    const [, table, args] = fts;
    const parts = args!.split(",").map((part) => part.trim());
    const columns = parts.filter((part) => !part.includes("="));
    const stemmed = parts.some((part) => /^tokenize\s*=.*porter/i.test(part));
    const text = columns.map((column) => `coalesce(${column}, '')`).join(" || ' ' || ");
    return `CREATE TABLE ${table} (rowid BIGINT PRIMARY KEY, ${columns.map((column) => `${column} TEXT`).join(", ")});
CREATE INDEX ${table}_search ON ${table} USING gin (to_tsvector('${stemmed ? "english" : "simple"}', ${text}))`;
  }
  if (/^CREATE VIRTUAL TABLE \w+ USING fts5vocab\(/i.test(flat)) return "";
  if (/^DROP TABLE (\w+_vocab)$/i.test(flat)) return "";

  const trigger = /^CREATE TRIGGER (\w+) ((?:BEFORE|AFTER) (?:INSERT|DELETE|UPDATE(?: OF [\w, ]+?)?) ON (\w+)) BEGIN (.*) END$/i.exec(flat);
  if (trigger) {
    const [, name, event, table, body] = trigger;
    state.triggers.set(name!, table!);
    const statements = splitStatements(body!).map((s) => translateExpressions(s));
    return triggerStatements(name!, event!, statements);
  }
  const dropTrigger = /^DROP TRIGGER (?:IF EXISTS )?(\w+)$/i.exec(flat);
  if (dropTrigger) {
    const table = state.triggers.get(dropTrigger[1]!);
    if (!table) throw new Error(`migration ${version}: DROP TRIGGER ${dropTrigger[1]} names a trigger no earlier migration created`);
    state.triggers.delete(dropTrigger[1]!);
    return `DROP TRIGGER ${dropTrigger[1]} ON ${table}`;
  }

  const out = withRowid(translateExpressions(statement.trim()), statement);
  const sqliteOnly = /\b(VIRTUAL TABLE|PRAGMA|INSERT OR|REPLACE INTO|AUTOINCREMENT|WITHOUT ROWID|COLLATE NOCASE|json_extract|strftime|unixepoch|datetime(?=\()|vec0)\b/i.exec(out);
  if (sqliteOnly) {
    throw new Error(`migration ${version}: no PostgreSQL form for "${sqliteOnly[0]}" in: ${collapse(statement).slice(0, 200)} (add one to OVERRIDES in src/db/postgres-migrations.ts)`);
  }
  return out;
}

/** Every migration's PostgreSQL script, in order. Throws on a statement it cannot express. */
export function postgresMigrations(migrations: readonly Migration[]): { version: number; name: string; sql: string }[] {
  const state: State = { triggers: new Map() };
  return [...migrations]
    .sort((a, b) => a.version - b.version)
    .map((migration) => ({
      version: migration.version,
      name: migration.name,
      // A migration written as code (a SQLite table rebuild) brings its PostgreSQL form.
      sql: "sql" in migration
        ? splitStatements(migration.sql)
          .map((statement) => translateStatement(statement, migration.version, state))
          .filter((statement) => statement !== "")
          .join(";\n") + ";"
        : "postgresOnly" in migration ? migration.postgresOnly : migration.postgres,
    }));
}
