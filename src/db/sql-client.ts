/**
 * The data-access port: one asynchronous interface over SQLite (the single-box appliance) and
 * PostgreSQL (several processes sharing one database; docs/scale-out.md). Code written against it
 * runs unchanged on both: statements use `?` placeholders and the subset of SQL both engines
 * speak (RETURNING, `ON CONFLICT ... DO UPDATE SET x = excluded.x`, partial indexes, coalesce),
 * and the few things they spell differently come from `dialectOf(client)` below, never from a
 * check of the engine's name at the call site.
 *
 * Values both sides agree on: text, numbers (integers are 64-bit on both and come back as
 * numbers), null, bytes. Flags are stored as integers 0/1 on both (booleans passed in become 1/0);
 * times are ISO-8601 text or milliseconds since the epoch, as today.
 */
export type SqlValue = string | number | bigint | boolean | null | Uint8Array;
export type DialectName = "sqlite" | "postgres";

export interface RunResult {
  /** Rows the statement inserted, changed or deleted. */
  changes: number;
}

export interface SqlClient {
  readonly dialect: Dialect;
  /** Whether this is a transaction's client: its statements run inside it, and transaction() does not nest. */
  readonly inTransaction: boolean;
  /** Every row the statement returns. */
  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  /** The first row, or null. */
  one<T>(sql: string, params?: readonly SqlValue[]): Promise<T | null>;
  /** A statement run for its effect. */
  run(sql: string, params?: readonly SqlValue[]): Promise<RunResult>;
  /**
   * Runs `fn` in a transaction on one connection: committed when fn resolves, rolled back when it
   * throws. Inside, use only `tx` (a statement through the outer client would run outside it, or
   * on SQLite wait for it to end).
   */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>;
  /**
   * Calls `onPayload` for every notification on the channel, from any process sharing the
   * database (PostgreSQL LISTEN/NOTIFY; on SQLite, whose data directory one process holds, this
   * process's own). Resolves once listening.
   */
  listen(channel: string, onPayload: (payload: string) => void): Promise<Subscription>;
  /** Notifies the channel's listeners; inside a transaction, once it commits (PostgreSQL). */
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

export interface Subscription {
  unlisten(): Promise<void>;
}

/**
 * Runs `fn` in the caller's transaction when `db` is one (a function that must be atomic, called
 * both on its own and inside a larger transaction), else in a transaction of its own.
 */
export function atomically<T>(db: SqlClient, fn: (tx: SqlClient) => Promise<T>): Promise<T> {
  return db.inTransaction ? fn(db) : db.transaction(fn);
}

/** What the two engines spell differently, in one place. */
export interface Dialect {
  readonly name: DialectName;
  /**
   * Appended to a `SELECT` that picks rows to claim: on PostgreSQL concurrent claimers skip rows
   * another transaction holds (each job goes to one worker, none waits); SQLite has one writer at
   * a time, so its claim needs nothing.
   */
  readonly skipLocked: string;
  /** Appended to a `SELECT` of a row the transaction then relies on: PostgreSQL locks it; SQLite's transaction already excludes other writers. */
  readonly forUpdate: string;
  /** A text field of a JSON text column: `json_extract(col, '$.key')` / `(col::jsonb ->> 'key')`. */
  jsonText(column: string, key: string): string;
  /** A number field of a JSON text column, comparable with numbers. */
  jsonNumber(column: string, key: string): string;
  /** A subquery of the elements of a JSON array bound to its one `?`, as text in a column `value`: `x IN (${d.jsonValues})`. */
  readonly jsonValues: string;
  /**
   * A statement that makes transactions naming the same lock take turns, held until the
   * transaction ends, for a check of rows that may not exist yet (no row to lock `FOR UPDATE`):
   * PostgreSQL's transaction-scoped advisory lock; SQLite's write transaction already excludes
   * other writers.
   */
  transactionLock(name: string): string;
  /**
   * Text ordered and compared ignoring ASCII case, as an index over the same expression serves
   * it: `expr COLLATE NOCASE` / `lower(expr)` (the migrations' translation of such an index).
   */
  nocase(expr: string): string;
  /** The LIKE operator that ignores case (SQLite's LIKE does for ASCII; PostgreSQL's does not): `LIKE` / `ILIKE`. */
  readonly likeNocase: string;
  /** After a table in FROM: the index SQLite must use for it (`INDEXED BY name`); PostgreSQL's planner takes no such hint. */
  indexedBy(index: string): string;
  /** The UTC year ("2021"), month ("2021-06") or day ("2021-06-01") of an ISO-8601 text column; NULL stays NULL. */
  utcPeriod(column: string, period: "year" | "month" | "day"): string;
  /**
   * The vector search extension (/readyz reports it): its name, a statement answering its
   * `version`, and whether the vector spaces scan in memory beside it (sqlite-vec's do;
   * pgvector answers from its own index).
   */
  readonly vectorExtension: { name: string; versionQuery: string; scansInMemory: boolean };
}

const STRFTIME: Record<"year" | "month" | "day", string> = { year: "%Y", month: "%Y-%m", day: "%Y-%m-%d" };
const TO_CHAR: Record<"year" | "month" | "day", string> = { year: "YYYY", month: "YYYY-MM", day: "YYYY-MM-DD" };

/** An identifier spliced into SQL: a plain name, never user input. */
function identifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`bad identifier ${name}`);
  return name;
}

/** A key spliced into SQL: a plain identifier, never user input. */
function jsonKey(key: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new Error(`bad JSON key ${key}`);
  return key;
}

export const SQLITE_DIALECT: Dialect = {
  name: "sqlite",
  skipLocked: "",
  forUpdate: "",
  jsonText: (column, key) => `json_extract(${column}, '$.${jsonKey(key)}')`,
  jsonNumber: (column, key) => `json_extract(${column}, '$.${jsonKey(key)}')`,
  jsonValues: "SELECT value FROM json_each(?)",
  transactionLock: (name) => `SELECT '${jsonKey(name)}' AS lock`,
  nocase: (expr) => `${expr} COLLATE NOCASE`,
  likeNocase: "LIKE",
  indexedBy: (index) => ` INDEXED BY ${identifier(index)}`,
  utcPeriod: (column, period) => `strftime('${STRFTIME[period]}', ${column})`,
  vectorExtension: { name: "sqlite-vec", versionQuery: "SELECT vec_version() AS version", scansInMemory: true },
};

export const POSTGRES_DIALECT: Dialect = {
  name: "postgres",
  skipLocked: "FOR UPDATE SKIP LOCKED",
  forUpdate: "FOR UPDATE",
  jsonText: (column, key) => `(${column}::jsonb ->> '${jsonKey(key)}')`,
  jsonNumber: (column, key) => `((${column}::jsonb ->> '${jsonKey(key)}')::double precision)`,
  jsonValues: "SELECT value FROM jsonb_array_elements_text(?::text::jsonb) AS elements(value)",
  transactionLock: (name) => `SELECT pg_advisory_xact_lock(hashtext('${jsonKey(name)}'))`,
  nocase: (expr) => `lower(${expr})`,
  likeNocase: "ILIKE",
  indexedBy: () => "",
  // The stored times are ISO-8601 with their zone (Z); read as instants, then written in UTC as SQLite's strftime does.
  utcPeriod: (column, period) => `to_char((${column})::timestamptz AT TIME ZONE 'UTC', '${TO_CHAR[period]}')`,
  vectorExtension: { name: "pgvector", versionQuery: "SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'", scansInMemory: false },
};

/** Booleans are stored as 0/1 on both engines; undefined is never a value. */
export function bindable(params: readonly SqlValue[]): SqlValue[] {
  return params.map((value) => {
    if (value === undefined) throw new Error("undefined bound to a SQL statement (use null)");
    return typeof value === "boolean" ? (value ? 1 : 0) : value;
  });
}

/**
 * `?` placeholders to PostgreSQL's `$1, $2, ...`, leaving string literals, quoted identifiers and
 * comments alone.
 */
export function numberedPlaceholders(sql: string): string {
  let out = "";
  let n = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      const stop = end < 0 ? sql.length : end;
      out += sql.slice(i, stop + 1);
      i = stop;
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      const stop = end < 0 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (c === "?") {
      out += `$${++n}`;
    } else {
      out += c;
    }
  }
  return out;
}
