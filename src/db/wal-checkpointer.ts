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
  /** The checkpoint in progress. */
  private running: Promise<void> | null = null;
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
  checkpoint(): Promise<void> {
    if (!this.thread || this.running) return this.running ?? Promise.resolve();
    this.running = this.runCheckpoint(this.thread).finally(() => (this.running = null));
    return this.running;
  }

  private async runCheckpoint(thread: WorkerThread<CheckpointRequest, CheckpointReply>): Promise<void> {
    try {
      const reply = await thread.ask({ path: this.path });
      if (reply instanceof Error || "error" in reply) throw reply instanceof Error ? reply : new Error(reply.error);
      this.checkpoints += 1;
    } catch (err) {
      this.log.warn("the database checkpoint thread failed; SQLite checkpoints on commit again", { err: String(err) });
      this.end();
    }
  }

  /**
   * Stops the thread once its checkpoint in progress has ended, and gives checkpointing back to
   * SQLite (whose close checkpoints too). A thread terminated mid-checkpoint may leave its
   * connection open: a server restarted in the same process once found the database locked.
   */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    this.end();
  }

  private end(): void {
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
