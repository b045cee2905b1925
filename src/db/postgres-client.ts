/**
 * The data-access port over PostgreSQL, through Bun's built-in client (a connection pool; no
 * dependency). `?` placeholders become `$n`; 64-bit integers and numerics come back as numbers, as
 * they do from SQLite (Bun returns them as strings; every integer column is BIGINT here, since
 * SQLite's INTEGER holds milliseconds since the epoch).
 */
import { SQL } from "bun";
import { bindable, numberedPlaceholders, POSTGRES_DIALECT, type Dialect, type RunResult, type SqlClient, type SqlValue, type Subscription } from "./sql-client.ts";

type Params = readonly SqlValue[];

/** Type OIDs read back as JavaScript numbers: int8, numeric. */
const NUMERIC_TYPES = new Set([20, 1700]);

interface ResultColumn {
  name: string;
  type: number;
}

type Executor = Pick<SQL, "unsafe">;

function toNumbers<T>(rows: unknown[] & { columns?: ResultColumn[] }): T[] {
  const numeric = (rows.columns ?? []).filter((column) => NUMERIC_TYPES.has(column.type)).map((column) => column.name);
  if (numeric.length === 0) return rows as T[];
  return rows.map((row) => {
    const out = { ...(row as Record<string, unknown>) };
    for (const name of numeric) {
      const value = out[name];
      if (typeof value === "string" || typeof value === "bigint") {
        const n = Number(value);
        if (!Number.isSafeInteger(n) && Number.isInteger(n)) throw new Error(`column ${name}: ${value} does not fit a JavaScript number`);
        out[name] = n;
      }
    }
    return out as T;
  });
}

export class PostgresExecutor implements SqlClient {
  readonly dialect: Dialect = POSTGRES_DIALECT;

  constructor(protected readonly sql: Executor) {}

  /** An executor alone is a transaction's (the pool's client overrides it). */
  get inTransaction(): boolean {
    return true;
  }

  async all<T>(text: string, params: Params = []): Promise<T[]> {
    const rows = await this.sql.unsafe(numberedPlaceholders(text), bindable(params));
    return toNumbers<T>(rows);
  }

  async one<T>(text: string, params: Params = []): Promise<T | null> {
    return (await this.all<T>(text, params))[0] ?? null;
  }

  async run(text: string, params: Params = []): Promise<RunResult> {
    const result = (await this.sql.unsafe(numberedPlaceholders(text), bindable(params))) as { count?: number | null };
    return { changes: result.count ?? 0 };
  }

  /** Runs a script of several statements (migrations) in one round trip; no parameters. */
  async script(text: string): Promise<void> {
    await this.sql.unsafe(text).simple();
  }

  transaction<T>(_fn: (tx: PostgresExecutor) => Promise<T>): Promise<T> {
    return Promise.reject(new Error("a PostgreSQL transaction cannot nest (use savepoints through the outer transaction's client)"));
  }

  listen(_channel: string, _onPayload: (payload: string) => void): Promise<Subscription> {
    return Promise.reject(new Error("LISTEN runs on the pool, not inside a transaction"));
  }

  async notify(channel: string, payload: string): Promise<void> {
    await this.run("SELECT pg_notify(?, ?)", [channel, payload]);
  }

  async close(): Promise<void> {}
}

export class PostgresClient extends PostgresExecutor {
  private readonly pool: SQL;

  /** `settings`: run-time parameters every connection starts with (`{ statement_timeout: "30s" }`). */
  constructor(url: string, options: { max?: number; settings?: Record<string, string> } = {}) {
    const pool = new SQL(url, { max: options.max ?? 10, bigint: false, ...(options.settings ? { connection: options.settings } : {}) });
    super(pool);
    this.pool = pool;
  }

  override get inTransaction(): boolean {
    return false;
  }

  override async transaction<T>(fn: (tx: PostgresExecutor) => Promise<T>): Promise<T> {
    return (await this.pool.begin((tx) => fn(new PostgresExecutor(tx)))) as T;
  }

  /** Bun keeps one connection for every LISTEN of the pool and re-subscribes it after a reconnect. */
  override async listen(channel: string, onPayload: (payload: string) => void): Promise<Subscription> {
    return this.pool.listen(channel, onPayload);
  }

  override async close(): Promise<void> {
    await this.pool.close();
  }
}
