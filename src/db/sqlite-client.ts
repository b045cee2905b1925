/**
 * The data-access port over the appliance's bun:sqlite handle. Statements run synchronously
 * underneath, so a read costs what it did before the port. Given the process's GroupCommit,
 * statements that write go through it: they commit with the other writes of the same turn, as
 * the job runner's claims and outcomes always have (db/group-commit.ts: autocommitted, they were
 * ~14 % of the event loop in a bulk import of notes).
 *
 * Given the group commit, a transaction is a savepoint of the turn's shared transaction
 * (GroupCommit.transaction): port transactions commit together with the turn's other writes, one
 * COMMIT for all, and roll back alone. Without it, a transaction holds the connection from BEGIN
 * IMMEDIATE to COMMIT, one at a time. Either way its statements run at once. Synchronous code
 * elsewhere that writes through the raw handle while its body awaits something other than the
 * database would join it (bun:sqlite nests as a savepoint): keep a transaction's body to
 * database calls, as the modules on the port do.
 */
import type { Database } from "bun:sqlite";
import type { GroupCommit } from "./group-commit.ts";
import { bindable, SQLITE_DIALECT, type Dialect, type RunResult, type SqlClient, type SqlValue, type Subscription } from "./sql-client.ts";

type Params = readonly SqlValue[];

const WRITES = /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i;

export class SqliteClient implements SqlClient {
  readonly dialect: Dialect = SQLITE_DIALECT;
  /** The end of the last port transaction without a group commit to hold (the next one starts after it). */
  private lastTransaction: Promise<unknown> = Promise.resolve();

  constructor(
    readonly db: Database,
    private readonly writes?: GroupCommit,
    private readonly listeners = new Map<string, Set<(payload: string) => void>>(),
    /** Inside a transaction: notifications held until it commits (dropped if it rolls back). */
    private readonly heldNotifications?: [string, string][],
  ) {}

  get inTransaction(): boolean {
    return this.heldNotifications !== undefined;
  }

  /** Inside a transaction: what runs once it ends, told whether it committed. */
  private readonly settledCallbacks: ((committed: boolean) => void)[] = [];

  /**
   * Inside a transaction: `fn` runs once it has committed (true) or rolled back (false). For
   * what SQLite-only code keeps in memory beside its rows (the vector spaces' scans), which must
   * not show a write that rolled back.
   */
  afterTransaction(fn: (committed: boolean) => void): void {
    if (!this.inTransaction) throw new Error("afterTransaction is for a transaction's client");
    this.settledCallbacks.push(fn);
  }

  all<T>(sql: string, params: Params = []): Promise<T[]> {
    return this.execute(sql, () => this.db.query<T, SqlValue[]>(sql).all(...bindable(params)));
  }

  one<T>(sql: string, params: Params = []): Promise<T | null> {
    return this.execute(sql, () => this.db.query<T, SqlValue[]>(sql).get(...bindable(params)));
  }

  run(sql: string, params: Params = []): Promise<RunResult> {
    return this.execute(sql, () => ({ changes: this.db.query(sql).run(...(bindable(params) as never[])).changes }));
  }

  private execute<T>(sql: string, fn: () => T): Promise<T> {
    if (this.writes && WRITES.test(sql)) return this.writes.write(fn);
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err);
    }
  }

  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    const notifications: [string, string][] = [];
    const tx = new SqliteClient(this.db, undefined, this.listeners, notifications);
    const settle = (committed: boolean) => {
      for (const settled of tx.settledCallbacks) settled(committed);
    };
    const committed = async (result: T) => {
      settle(true);
      for (const [channel, payload] of notifications) await this.notify(channel, payload);
      return result;
    };
    const rolledBack = (err: unknown): never => {
      settle(false);
      throw err;
    };
    // Joined to the group commit: a savepoint of the turn's shared transaction, committed with it.
    if (this.writes) return this.writes.transaction(() => fn(tx)).then(committed, rolledBack);
    const run = async () => {
      this.db.run("BEGIN IMMEDIATE");
      try {
        const result = await fn(tx);
        this.db.run("COMMIT");
        return result;
      } catch (err) {
        if (this.db.inTransaction) this.db.run("ROLLBACK");
        throw err;
      }
    };
    const result = this.lastTransaction.then(run, run);
    this.lastTransaction = result.catch(() => {});
    return result.then(committed, rolledBack);
  }

  /** One process holds a SQLite data directory: notifications stay in it (delivered on the next turn). */
  async listen(channel: string, onPayload: (payload: string) => void): Promise<Subscription> {
    const set = this.listeners.get(channel) ?? new Set();
    this.listeners.set(channel, set);
    const listener = (payload: string) => onPayload(payload);
    set.add(listener);
    return { unlisten: async () => void set.delete(listener) };
  }

  async notify(channel: string, payload: string): Promise<void> {
    if (this.heldNotifications) return void this.heldNotifications.push([channel, payload]);
    const set = this.listeners.get(channel);
    if (set?.size) setImmediate(() => set.forEach((listener) => listener(payload)));
  }

  /** The handle belongs to whoever opened it (server.ts closes it). */
  async close(): Promise<void> {}
}
