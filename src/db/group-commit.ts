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
 * the transaction) and must not await. `transaction(fn)` takes an asynchronous task (the
 * data-access port's transactions, db/sqlite-client.ts) into the same shared transaction, in a
 * savepoint of its own: the flush waits for it before taking the next task, so writes queued
 * meanwhile never join its savepoint nor roll back with it. Its body should await only the
 * database (statements run synchronously underneath, so the flush stays one turn of the event
 * loop); while it awaits anything else the whole flush, and every writer behind it, waits too.
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
  /** A flush is open (it may be waiting on an asynchronous task). */
  private flushing = false;
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

  /**
   * Runs the asynchronous `fn` in a savepoint of the next shared transaction; resolves with its
   * result once committed. A throw rolls back `fn`'s writes only.
   */
  transaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.write(fn as () => unknown) as Promise<T>;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  /**
   * One shared transaction over the queued tasks. Written as an async function that awaits only
   * a task that returned a promise: a flush of synchronous tasks runs to its end without
   * yielding, as it always has.
   */
  private async flush(): Promise<void> {
    this.scheduled = false;
    // A flush waiting on an asynchronous task schedules the next one when it ends.
    if (this.flushing) return;
    this.flushing = true;
    const started = this.now();
    const taken: Pending[] = [];
    const outcomes: ({ ok: true; value: unknown } | { ok: false; err: unknown })[] = [];
    try {
      this.db.run("BEGIN IMMEDIATE");
      try {
        while (this.queue.length && (taken.length === 0 || this.now() - started < SLICE_MS)) {
          const task = this.queue.shift()!;
          taken.push(task);
          this.db.run("SAVEPOINT group_task");
          try {
            let value = task.fn();
            if (value instanceof Promise) value = await value;
            this.db.run("RELEASE group_task");
            outcomes.push({ ok: true, value });
          } catch (err) {
            this.db.run("ROLLBACK TO group_task");
            this.db.run("RELEASE group_task");
            outcomes.push({ ok: false, err });
          }
        }
        this.db.run("COMMIT");
      } catch (err) {
        if (this.db.inTransaction) this.db.run("ROLLBACK");
        throw err;
      }
    } catch (err) {
      // The transaction itself failed: nothing of this flush was written.
      for (const task of taken) task.reject(err);
      taken.length = 0;
    } finally {
      this.flushing = false;
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
