/**
 * The database a server runs on, opened before the appliance is composed (server.ts): the
 * data directory's SQLite file (the single-box default) or a PostgreSQL database that several
 * processes share (docs/scale-out.md). What differs between the two is decided here once; the
 * composition root and the features see the same services either way.
 */
import type { Database } from "bun:sqlite";
import type { Clock } from "./clock.ts";
import type { DataDir } from "./storage/data-dir.ts";
import type { VectorSpaces } from "./vectors/vector-spaces.ts";
import { PgVectorIndex } from "./vectors/pgvector-index.ts";
import { SqliteVectorSpaces } from "./vectors/sqlite-vector-spaces.ts";
import { MIGRATIONS } from "./db/migrations/index.ts";
import { openDatabase } from "./db/database.ts";
import { GroupCommit } from "./db/group-commit.ts";
import { openPostgres } from "./db/postgres-database.ts";
import type { SqlClient } from "./db/sql-client.ts";
import { SqliteClient } from "./db/sqlite-client.ts";

export interface OpenedDatabase {
  readonly engine: "sqlite" | "postgres";
  /** The data-access port: SQLite's client whose writes join the group commit, or PostgreSQL's pool. */
  readonly sql: SqlClient;
  /** Vector spaces: sqlite-vec beside the rows, or pgvector. */
  readonly spaces: VectorSpaces;
  /**
   * SQLite's handle (the vector spaces, the WAL checkpoints and the tests use it). On PostgreSQL
   * there is none: every use throws, naming what was asked, so a path that still reached for it
   * would fail loudly instead of writing elsewhere.
   */
  readonly db: Database;
  /**
   * Where the built-in text model keeps the vectors it made of words and word pieces: the
   * appliance's database on SQLite; on PostgreSQL a file of the process's own (the vectors are
   * derived from the model alone, so each process may make its own; the embedder reads them
   * synchronously on its hot path).
   */
  readonly textCache: Database;
  /** SQLite's file (its size is a metric; its write-ahead log is checkpointed); null on PostgreSQL. */
  readonly file: string | null;
  close(): Promise<void>;
}

export function openSqlite(dataDir: DataDir, clock: Clock): OpenedDatabase {
  const db = openDatabase(dataDir.database);
  const writes = new GroupCommit(db);
  return {
    engine: "sqlite",
    sql: new SqliteClient(db, writes),
    spaces: new SqliteVectorSpaces(db, clock, writes),
    db,
    textCache: db,
    file: dataDir.database,
    async close() {
      db.close();
    },
  };
}

/** The text model's tables only: the cache of one process on a PostgreSQL deployment. */
const TEXT_CACHE_MIGRATIONS = MIGRATIONS.filter((m) => m.name === "text_word_vectors" || m.name === "text_piece_vectors");

export async function openPostgresDatabase(url: string, dataDir: DataDir, clock: Clock): Promise<OpenedDatabase> {
  const client = await openPostgres(url);
  const db = unavailableHandle();
  const textCache = openDatabase(dataDir.textCache, TEXT_CACHE_MIGRATIONS);
  return {
    engine: "postgres",
    sql: client,
    spaces: new PgVectorIndex(client, clock),
    db,
    textCache,
    file: null,
    async close() {
      textCache.close();
      await client.close();
    },
  };
}

function unavailableHandle(): Database {
  return new Proxy({} as Database, {
    get(_target, property) {
      throw new Error(
        `the SQLite handle's ${String(property)} was used on a PostgreSQL database: code must go through the data-access port (docs/scale-out.md)`,
      );
    },
  });
}
