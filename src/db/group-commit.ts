/**
 * Commits the writes of tasks running side by side in one transaction. A commit's own cost
 * dominates a small document's writes: each full-text index a transaction touched flushes a new
 * segment (0.3-0.6 ms for one 1 KB row; 0.07-0.09 ms a row sixteen rows at a time) and the
 * write-ahead log takes the transaction's pages. In a bulk import a dozen notes are stored,
 * recorded and embedded at once; their writes queued within the same turn of the event loop
 * commit together on the next. Each task's writes run in a savepoint of their own, so one that
 * throws rolls back only its own writes and rejects only its caller. A flush stops taking tasks
 * after SLICE_MS and leaves the rest to the next turn, so /healthz never waits behind a long one.
 *
 * `write(fn)` resolves once fn's writes are committed; fn must be synchronous (it runs inside
 * the transaction) and must not await. `exclusive(fn)` holds the connection for an asynchronous
 * transaction of its own (the data-access port's, db/sqlite-client.ts): flushes wait for it, so
 * writes queued meanwhile never join that transaction nor roll back with it.
 */
import type { Database } from "bun:sqlite";

/** Longest one flush holds the event loop (it always takes at least one task). */
const SLICE_MS = 15;

interface Pending {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  /** The exclusive holder's end, while one holds the connection. */
  private held: Promise<unknown> | null = null;
  /** Flushes that committed, and the tasks they carried (metrics and tests). */
  commits = 0;
  tasks = 0;

  constructor(
    private readonly db: Database,
    /** Milliseconds of a monotonic clock (tests pass their own). */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Runs `fn` in the next shared transaction; resolves with its result once committed. */
  write<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Runs `fn` with no flush in between; exclusive holders run one after another. */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    while (this.held) await this.held.catch(() => {});
    const run = fn();
    this.held = run;
    try {
      return await run;
    } finally {
      this.held = null;
      if (this.queue.length) this.schedule();
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    // exclusive() schedules the flush again when it lets go.
    if (this.held) return;
    const started = this.now();
    const taken: Pending[] = [];
    const outcomes: ({ ok: true; value: unknown } | { ok: false; err: unknown })[] = [];
    try {
      this.db
        .transaction(() => {
          while (this.queue.length && (taken.length === 0 || this.now() - started < SLICE_MS)) {
            const task = this.queue.shift()!;
            taken.push(task);
            try {
              outcomes.push({ ok: true, value: this.db.transaction(task.fn)() });
            } catch (err) {
              outcomes.push({ ok: false, err });
            }
          }
        })
        .immediate();
    } catch (err) {
      // The commit itself failed: nothing of this flush was written.
      for (const task of taken) task.reject(err);
      taken.length = 0;
    }
    if (taken.length) {
      this.commits += 1;
      this.tasks += taken.length;
    }
    taken.forEach((task, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) task.resolve(outcome.value);
      else task.reject(outcome.err);
    });
    if (this.queue.length) this.schedule();
  }
}
