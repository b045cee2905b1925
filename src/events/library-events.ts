/**
 * What happens in the library that other features react to (rules, outbound webhooks), without
 * the code where it happens knowing who listens: a file's processing ended, an upload session
 * finished. Listeners run synchronously inside the caller's transaction, so what they record (a
 * durable job, a delivery) commits with the change itself or not at all; they must be quick and
 * must not throw for reasons of their own (an error here rolls the caller back).
 */
import type { FileRow } from "../files/file.ts";

export interface LibraryEventMap {
  /** A file's processing job ended for good: `completed` (warnings allowed) or `failed`. */
  "file.processed": { file: FileRow; outcome: "completed" | "failed"; error: string | null };
  /** An upload session stored (or refused) all its files. */
  "batch.finished": { orgId: string; sessionId: string; status: string; totalFiles: number; completedFiles: number; failedFiles: number; skippedFiles: number };
}

type Listener<K extends keyof LibraryEventMap> = (event: LibraryEventMap[K]) => void;

export class LibraryEvents {
  private readonly listeners: { [K in keyof LibraryEventMap]: Listener<K>[] } = { "file.processed": [], "batch.finished": [] };

  on<K extends keyof LibraryEventMap>(type: K, listener: Listener<K>): void {
    this.listeners[type].push(listener);
  }

  emit<K extends keyof LibraryEventMap>(type: K, event: LibraryEventMap[K]): void {
    for (const listener of this.listeners[type]) listener(event);
  }
}
