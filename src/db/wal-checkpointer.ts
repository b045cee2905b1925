/**
 * Checkpoints the server's write-ahead log from a worker thread. SQLite's automatic checkpoint
 * runs inside whichever commit crosses 1,000 log pages, on that connection's thread: in the
 * server that is the event loop, and the checkpoint's copy and fsync held it for 30-45 ms
 * (p99.9 of commits during a bulk import here), longer on a busy disk. The server turns the
 * automatic checkpoint off and this asks the thread to checkpoint every CHECKPOINT_EVERY_MS. If
 * the thread cannot start or fails, the automatic checkpoint is turned back on.
 */
import type { Database } from "bun:sqlite";
import type { Logger } from "../log.ts";
import { WorkerThread } from "../native/worker-thread.ts";
import type { CheckpointReply, CheckpointRequest } from "./wal-worker.ts";

const CHECKPOINT_EVERY_MS = 1_000;

export class WalCheckpointer {
  private thread: WorkerThread<CheckpointRequest, CheckpointReply> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private running = false;
  /** Checkpoints that completed (tests and logs). */
  checkpoints = 0;

  constructor(
    private readonly db: Database,
    private readonly path: string,
    private readonly log: Logger,
  ) {}

  start(): void {
    try {
      this.thread = new WorkerThread<CheckpointRequest, CheckpointReply>("db/wal-worker.ts", "the database checkpoint thread");
    } catch (err) {
      this.log.warn("the database checkpoint thread did not start; SQLite checkpoints on commit", { err: String(err) });
      return;
    }
    this.db.run("PRAGMA wal_autocheckpoint = 0");
    this.timer = setInterval(() => void this.checkpoint(), CHECKPOINT_EVERY_MS);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** One checkpoint now (unless one is running); resolves when it ended. */
  async checkpoint(): Promise<void> {
    if (!this.thread || this.running) return;
    this.running = true;
    try {
      const reply = await this.thread.ask({ path: this.path });
      if (reply instanceof Error || "error" in reply) throw reply instanceof Error ? reply : new Error(reply.error);
      this.checkpoints += 1;
    } catch (err) {
      this.log.warn("the database checkpoint thread failed; SQLite checkpoints on commit again", { err: String(err) });
      this.stop();
    } finally {
      this.running = false;
    }
  }

  /** Stops the thread and gives checkpointing back to SQLite (whose close checkpoints too). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.thread?.terminate();
    this.thread = null;
    try {
      this.db.run("PRAGMA wal_autocheckpoint = 1000");
    } catch {
      // Closed already.
    }
  }
}
