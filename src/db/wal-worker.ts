/**
 * Worker thread entry that checkpoints the server's write-ahead log on a connection of its own
 * (wal-checkpointer.ts), so the checkpoint's copying and fsync never run on the event loop.
 */
import { Database } from "bun:sqlite";
import { serveRequests } from "../native/worker-thread.ts";

export interface CheckpointRequest {
  path: string;
}
export type CheckpointReply = { busy: boolean; walPages: number; checkpointed: number } | { error: string };

let db: Database | null = null;

serveRequests<CheckpointRequest, CheckpointReply>(({ path }) => {
  try {
    if (!db) {
      db = new Database(path);
      db.run("PRAGMA busy_timeout = 5000");
    }
    // PASSIVE: copies what no reader still needs and never waits for writers; the writer starts
    // the log over once all of it was copied.
    const row = db.query<{ busy: number; log: number; checkpointed: number }, []>("PRAGMA wal_checkpoint(PASSIVE)").get()!;
    return { reply: { busy: row.busy === 1, walPages: row.log, checkpointed: row.checkpointed } };
  } catch (err) {
    return { reply: { error: err instanceof Error ? err.message : String(err) } };
  }
});
