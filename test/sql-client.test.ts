/**
 * The data-access port (src/db/sql-client.ts) behaves the same on SQLite and on PostgreSQL: the
 * same statements, run through each implementation, give the same rows (numbers as numbers,
 * flags as 0/1, bytes as bytes), the same change counts, RETURNING and upserts, JSON fields read
 * through the dialect, transactions that commit or roll back whole, and the schema that every
 * migration builds has the same tables and columns on both. The PostgreSQL half skips, saying
 * why, where no server binary is found (.ci/run installs one).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase, type Database } from "../src/db/database.ts";
import { GroupCommit } from "../src/db/group-commit.ts";
import { MIGRATIONS } from "../src/db/migrations/index.ts";
import { POSTGRES_ONLY_TABLES } from "../src/db/migrations/037_keyword_postings.ts";
import { POSTGRES_ONLY_TABLES as FILE_SEARCH_TABLES } from "../src/db/migrations/040_file_search_terms.ts";
import { openPostgres } from "../src/db/postgres-database.ts";
import { PostgresClient } from "../src/db/postgres-client.ts";
import { postgresMigrations, splitStatements } from "../src/db/postgres-migrations.ts";
import { atomically, numberedPlaceholders, type SqlClient } from "../src/db/sql-client.ts";
import { SqliteClient } from "../src/db/sqlite-client.ts";
import { postgresOrSkip, startPostgres, type TestPostgres } from "./support/postgres.ts";
import { tempDir } from "./support/temp-dir.ts";

const binaries = postgresOrSkip();

test("placeholders are numbered outside literals, quoted names and comments", () => {
  expect(numberedPlaceholders("SELECT ? AS a, '?' AS \"b?\", 'it''s ?' -- what?\n, ? AS c")).toBe(
    "SELECT $1 AS a, '?' AS \"b?\", 'it''s ?' -- what?\n, $2 AS c",
  );
});

test("migration scripts split into statements, keeping trigger bodies whole", () => {
  const statements = splitStatements(`CREATE TABLE t (a TEXT DEFAULT ';'); -- a comment; with a semicolon
CREATE TRIGGER t_ins AFTER INSERT ON t BEGIN
  INSERT INTO u VALUES (new.a); DELETE FROM u WHERE a = 'x;y';
END;
CREATE INDEX t_a ON t(a)`);
  expect(statements).toHaveLength(3);
  expect(statements[1]).toMatch(/^CREATE TRIGGER t_ins[\s\S]*END$/);
  // Translated for PostgreSQL, a trigger's body is a function's, dollar-quoted.
  const translated = splitStatements(`CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM u; RETURN NULL; END $$;
CREATE FUNCTION g() RETURNS text LANGUAGE plpgsql AS $body$ BEGIN RETURN 'a;b'; END $body$; SELECT 1`);
  expect(translated).toHaveLength(3);
  expect(translated[0]).toMatch(/^CREATE FUNCTION f\(\)[\s\S]*END \$\$$/);
  expect(translated[1]).toMatch(/\$body\$$/);
});

test("every migration has a PostgreSQL form (a statement without one fails the translation)", () => {
  const translated = postgresMigrations(MIGRATIONS);
  expect(translated.map((m) => m.version)).toEqual(MIGRATIONS.map((m) => m.version).sort((a, b) => a - b));
  expect(() => postgresMigrations([{ version: 99, name: "x", sql: "CREATE VIRTUAL TABLE v USING vec0(e float[4])" }])).toThrow(/migration 99: no PostgreSQL form/);
});

interface Engine {
  name: string;
  client: () => SqlClient;
}

const engines: Engine[] = [];
let sqliteDb: Database;
let sqlite: SqliteClient;
let pg: TestPostgres | null = null;
let postgres: PostgresClient | null = null;

beforeAll(async () => {
  sqliteDb = openDatabase(join(tempDir("mediabox-port-"), "port.db"));
  sqlite = new SqliteClient(sqliteDb, new GroupCommit(sqliteDb));
  if (binaries) {
    pg = await startPostgres(binaries);
    postgres = await openPostgres(await pg.createDatabase("port"));
  }
}, 120_000);

afterAll(async () => {
  await postgres?.close();
  await pg?.stop();
  sqliteDb?.close();
});

engines.push({ name: "sqlite", client: () => sqlite });
if (binaries) engines.push({ name: "postgres", client: () => postgres! });

describe.each(engines)("the port on $name", ({ client }) => {
  const setup = async (db: SqlClient) => {
    await db.run("DELETE FROM jobs");
  };

  test("rows come back with numbers as numbers, flags as 0/1, nulls as null", async () => {
    const db = client();
    await setup(db);
    const at = Date.UTC(2030, 0, 1); // past 2^31: a 64-bit integer on both
    const inserted = await db.one<{ id: string; run_at: number; cancel_requested: number; org_id: string | null }>(
      `INSERT INTO jobs (id, org_id, queue, payload, status, max_attempts, run_at, cancel_requested, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?) RETURNING id, run_at, cancel_requested, org_id`,
      ["j1", null, "t.port", JSON.stringify({ fileId: "f-1", n: 2 }), 5, at, true, "2030-01-01T00:00:00.000Z", "2030-01-01T00:00:00.000Z"],
    );
    expect(inserted).toEqual({ id: "j1", run_at: at, cancel_requested: 1, org_id: null });
    const counted = await db.one<{ n: number; total: number }>("SELECT count(*) AS n, sum(run_at) AS total FROM jobs WHERE queue = ?", ["t.port"]);
    expect(counted).toEqual({ n: 1, total: at });
    const field = await db.one<{ file_id: string }>(`SELECT ${db.dialect.jsonText("payload", "fileId")} AS file_id FROM jobs WHERE id = ?`, ["j1"]);
    expect(field?.file_id).toBe("f-1");
    expect(await db.one("SELECT id FROM jobs WHERE id = ?", ["nope"])).toBeNull();
  });

  test("change counts, upserts with excluded, and ON CONFLICT DO NOTHING", async () => {
    const db = client();
    await setup(db);
    const row = (id: string, v: string) => [id, "t.port", v, "2030-01-01T00:00:00.000Z", "2030-01-01T00:00:00.000Z"];
    const insert = `INSERT INTO jobs (id, queue, payload, status, max_attempts, run_at, created_at, updated_at) VALUES (?, ?, ?, 'pending', 5, 0, ?, ?)`;
    expect((await db.run(insert, row("a", "{}"))).changes).toBe(1);
    expect((await db.run(insert, row("b", "{}"))).changes).toBe(1);
    expect((await db.run(`${insert} ON CONFLICT DO NOTHING`, row("a", "{}"))).changes).toBe(0);
    await db.run(`${insert} ON CONFLICT (id) DO UPDATE SET payload = excluded.payload`, row("a", '{"v":2}'));
    expect((await db.one<{ payload: string }>("SELECT payload FROM jobs WHERE id = ?", ["a"]))?.payload).toBe('{"v":2}');
    expect((await db.run("UPDATE jobs SET progress = ? WHERE queue = ?", [50, "t.port"])).changes).toBe(2);
    expect((await db.all<{ progress: number }>("SELECT progress FROM jobs ORDER BY id")).map((r) => r.progress)).toEqual([50, 50]);
  });

  test("a transaction commits whole, or rolls back whole when its body throws", async () => {
    const db = client();
    await setup(db);
    const insert = (tx: SqlClient, id: string) =>
      tx.run("INSERT INTO jobs (id, queue, payload, status, max_attempts, run_at, created_at, updated_at) VALUES (?, 't.port', '{}', 'pending', 5, 0, 'x', 'x')", [id]);
    const result = await db.transaction(async (tx) => {
      await insert(tx, "t1");
      await insert(tx, "t2");
      return (await tx.one<{ n: number }>("SELECT count(*) AS n FROM jobs"))!.n;
    });
    expect(result).toBe(2);
    await expect(
      db.transaction(async (tx) => {
        await insert(tx, "t3");
        await insert(tx, "t1"); // duplicate key
      }),
    ).rejects.toThrow();
    expect((await db.all<{ id: string }>("SELECT id FROM jobs ORDER BY id")).map((r) => r.id)).toEqual(["t1", "t2"]);
  });

  test("atomically: its own transaction alone, the caller's inside one (rolled back with it)", async () => {
    const db = client();
    await setup(db);
    const insert = (tx: SqlClient, id: string) =>
      tx.run("INSERT INTO jobs (id, queue, payload, status, max_attempts, run_at, created_at, updated_at) VALUES (?, 't.port', '{}', 'pending', 5, 0, 'x', 'x')", [id]);
    expect(db.inTransaction).toBe(false);
    await atomically(db, async (tx) => {
      expect(tx.inTransaction).toBe(true);
      await insert(tx, "alone");
    });
    await expect(
      db.transaction(async (tx) => {
        await atomically(tx, (inner) => insert(inner, "inside"));
        expect((await tx.one<{ n: number }>("SELECT count(*) AS n FROM jobs WHERE id = 'inside'"))!.n).toBe(1);
        throw new Error("the caller fails");
      }),
    ).rejects.toThrow("the caller fails");
    expect((await db.all<{ id: string }>("SELECT id FROM jobs ORDER BY id")).map((r) => r.id)).toEqual(["alone"]);
  });

  test("bytes go in and come back as bytes", async () => {
    const db = client();
    await db.run("DELETE FROM text_word_vectors");
    const q = new Uint8Array([0, 1, 2, 254, 255]);
    const columns = await db.all<{ name: string }>(
      db.dialect.name === "sqlite"
        ? "SELECT name FROM pragma_table_info('text_word_vectors')"
        : "SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'text_word_vectors' ORDER BY ordinal_position",
    );
    expect(columns.map((c) => c.name)).toContain("q");
    const names = columns.map((c) => c.name);
    const values = names.map((name) => (name === "q" ? q : name === "scale" || name === "weight" ? 0.5 : "w"));
    await db.run(`INSERT INTO text_word_vectors (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")})`, values);
    const back = await db.one<{ q: Uint8Array }>("SELECT q FROM text_word_vectors");
    expect(new Uint8Array(back!.q)).toEqual(q);
  });
});

/** Tables and their columns (name, type, NOT NULL) as the database describes them. */
type Schema = Record<string, string[]>;

const SQLITE_TYPES: Record<string, string> = { INTEGER: "bigint", TEXT: "text", REAL: "double precision", BLOB: "bytea", "": "text" };

function sqliteSchema(db: Database): Schema {
  const tables = db
    .query<{ name: string; sql: string }, []>("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .all();
  const virtual = new Set(tables.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql)).map((t) => t.name));
  // FTS5 keeps its index in shadow tables (<name>_data, _idx, _content, _docsize, _config); the
  // fts5vocab view has no PostgreSQL table (ts_stat answers the same question).
  const shadow = (name: string) => [...virtual].some((v) => name.startsWith(`${v}_`));
  const schema: Schema = {};
  for (const { name, sql } of tables) {
    if (shadow(name) || /USING fts5vocab/i.test(sql)) continue;
    const columns = db.query<{ name: string; type: string; notnull: number; pk: number }, []>(`SELECT * FROM pragma_table_info('${name}')`).all();
    // An FTS5 table's rowid is implicit; its PostgreSQL table names it.
    const described = columns.map((c) => `${c.name} ${SQLITE_TYPES[c.type.toUpperCase()] ?? c.type}${c.notnull || c.pk ? " not null" : ""}`);
    // Every table but a WITHOUT ROWID one, or one whose INTEGER PRIMARY KEY is its rowid, has an
    // implicit rowid; its PostgreSQL table names it.
    const keys = columns.filter((c) => c.pk > 0);
    const rowidAlias = keys.length === 1 && keys[0]!.type.toUpperCase() === "INTEGER";
    const hasRowid = virtual.has(name) || (!/\)\s*WITHOUT ROWID\s*$/i.test(sql) && !rowidAlias);
    schema[name] = hasRowid ? ["rowid bigint not null", ...described].sort() : described.sort();
  }
  return schema;
}

async function postgresSchema(db: PostgresClient): Promise<Schema> {
  const rows = await db.all<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>(
    `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
     WHERE table_schema = 'public' AND table_name IN (SELECT tablename FROM pg_tables WHERE schemaname = 'public')`,
  );
  const schema: Schema = {};
  for (const row of rows) (schema[row.table_name] ??= []).push(`${row.column_name} ${row.data_type}${row.is_nullable === "NO" ? " not null" : ""}`);
  for (const name of Object.keys(schema)) schema[name]!.sort();
  return schema;
}

describe.skipIf(!binaries)("migrations on PostgreSQL", () => {
  test("every migration builds the same tables and columns (types, NOT NULL) as on SQLite", async () => {
    const expected = sqliteSchema(sqliteDb);
    const actual = await postgresSchema(postgres!);
    // The chunks' keyword postings and the files' search terms: PostgreSQL's own (SQLite's FTS5 keeps them in its shadow tables).
    for (const table of [...POSTGRES_ONLY_TABLES, ...FILE_SEARCH_TABLES]) {
      expect(actual[table]).toBeDefined();
      delete actual[table];
    }
    // The whole schema is compared, keyword tables included (a comparison of nothing would pass).
    expect(Object.keys(expected).length).toBeGreaterThan(40);
    expect(expected.files_fts).toContain("visible_text text");
    expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
    for (const table of Object.keys(expected)) expect({ table, columns: actual[table] }).toEqual({ table, columns: expected[table]! });
  });

  test("the translated triggers keep the keyword tables and tags in step with the files row", async () => {
    const db = postgres!;
    const now = "2030-01-01T00:00:00.000Z";
    await db.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES ('o1', 'O', 'o', 'FREE', ?)", [now]);
    await db.run("INSERT INTO projects (id, org_id, name, name_key, created_at, updated_at) VALUES ('p1', 'o1', 'P', 'p', ?, ?)", [now, now]);
    const insert = "INSERT INTO files (id, org_id, project_id, media_type, filename, tags, created_at, updated_at) VALUES (?, 'o1', 'p1', 'image', ?, ?, ?, ?)";
    await db.run(insert, ["f1", "harbour.jpg", '["Boat","sea"]', now, now]);
    await db.run(insert, ["f2", "terminated leases.pdf", "[]", now, now]);
    const rowids = await db.all<{ search_rowid: number }>("SELECT search_rowid FROM files ORDER BY id");
    expect(new Set(rowids.map((r) => r.search_rowid)).size).toBe(2);
    expect((await db.all<{ tag_key: string }>("SELECT tag_key FROM file_tags WHERE file_id = 'f1' ORDER BY tag_key")).map((r) => r.tag_key)).toEqual(["boat", "sea"]);
    await db.run("UPDATE files SET tags = ?, title = ? WHERE id = 'f1'", ['["Harbour"]', "Evening"]);
    expect((await db.all<{ tag_key: string }>("SELECT tag_key FROM file_tags WHERE file_id = 'f1'")).map((r) => r.tag_key)).toEqual(["harbour"]);
    // Stemmed search over the keyword table (as FTS5's porter tokenizer): "terminate" finds "terminated".
    const found = await db.all<{ id: string }>(
      `SELECT files.id FROM files_fts JOIN files ON files.search_rowid = files_fts.rowid
       WHERE to_tsvector('english', coalesce(files_fts.title, '') || ' ' || coalesce(files_fts.filename, '')) @@ plainto_tsquery('english', ?)`,
      ["terminate"],
    );
    expect(found.map((r) => r.id)).toEqual(["f2"]);
    expect((await db.one<{ title: string }>("SELECT title FROM files_fts WHERE rowid = (SELECT search_rowid FROM files WHERE id = 'f1')"))?.title).toBe("Evening");
    await db.run("DELETE FROM files WHERE id = 'f1'");
    expect(await db.one("SELECT 1 FROM file_tags WHERE file_id = 'f1'")).toBeNull();
    expect((await db.one<{ n: number }>("SELECT count(*) AS n FROM files_fts"))?.n).toBe(1);
  });

  test("a second process opening the same database finds nothing left to migrate", async () => {
    const again = await openPostgres(pg!.url.replace(/\/postgres$/, "/port"), { max: 1 });
    try {
      expect((await again.one<{ n: number }>("SELECT count(*) AS n FROM schema_migrations"))?.n).toBe(MIGRATIONS.length);
    } finally {
      await again.close();
    }
  });
});
