/**
 * What happens in the library that other features react to (rules, outbound webhooks), without
 * the code where it happens knowing who listens: a file's processing ended, an upload session
 * finished. Listeners run inside the caller's transaction and write through its `tx`, one after
 * another, so what they record (a durable job, a delivery) commits with the change itself or not
 * at all, on either database; they must be quick, await only the database (the body of a port
 * transaction, docs/scale-out.md) and must not throw for reasons of their own (an error here rolls
 * the caller back).
 */
import type { SqlClient } from "../db/sql-client.ts";
import type { FileRow } from "../files/file.ts";

export interface LibraryEventMap {
  /** A file's processing job ended for good: `completed` (warnings allowed) or `failed`. */
  "file.processed": { file: FileRow; outcome: "completed" | "failed"; error: string | null };
  /** An upload session stored (or refused) all its files. */
  "batch.finished": { orgId: string; sessionId: string; status: string; totalFiles: number; completedFiles: number; failedFiles: number; skippedFiles: number };
}

type Listener<K extends keyof LibraryEventMap> = (tx: SqlClient, event: LibraryEventMap[K]) => Promise<void>;

export class LibraryEvents {
  private readonly listeners: { [K in keyof LibraryEventMap]: Listener<K>[] } = { "file.processed": [], "batch.finished": [] };

  on<K extends keyof LibraryEventMap>(type: K, listener: Listener<K>): void {
    this.listeners[type].push(listener);
  }

  /** Runs the listeners in the caller's transaction `tx`, in the order they were added. */
  async emit<K extends keyof LibraryEventMap>(type: K, tx: SqlClient, event: LibraryEventMap[K]): Promise<void> {
    if (!tx.inTransaction) throw new Error(`${type}: listeners run in the caller's transaction`);
    for (const listener of this.listeners[type]) await listener(tx, event);
  }
}
