/**
 * What a file's processing is doing right now, for people watching it: the stage running, its
 * place among the pipeline's stages, the whole run's percentage, and the units of the stage (a
 * document's pages read, a video's frames) when it counts some. Kept in memory only, as the job
 * runs, and dropped when the run ends: a restart loses nothing worth keeping (the job's percent
 * and the stages' outcomes are in the database).
 *
 * The stage runner reports to the appliance's board (AppContext.progress) and `GET
 * /files/uploads-status/{id}` reads it. Which board depends on the deployment (chosen in app.ts):
 * one process (SQLite, or `--single-process`) runs the files and answers the API, so a Map is
 * the whole board. Processes sharing a PostgreSQL database run files in the workers and answer
 * in the api processes, so the relayed board carries a worker's reports over the database's
 * notifications, thinned out, and the api keeps each for a limited time.
 */
import type { Clock } from "../clock.ts";
import type { SqlClient, Subscription } from "../db/sql-client.ts";

export interface LiveProgress {
  stage: string;
  /** 1-based place of the stage among the pipeline's stages. */
  stageNumber: number;
  stageCount: number;
  /** The whole run, 0-100. */
  percent: number;
  /** The stage's units, when it counts some: "page" (a document's pages read), "frame" (a video's keyframes). */
  unit: string | null;
  done: number | null;
  total: number | null;
}

export interface ProgressUnits {
  done: number;
  total: number;
  unit: string;
}

export interface ProgressBoard {
  /** Where the run of `fileId` is now (the stage runner reports as often as its stages do: each page). */
  report(fileId: string, progress: LiveProgress): void;
  /** The run of `fileId` ended, whatever its outcome. */
  end(fileId: string): void;
  /** What a run is doing with the file now, or null when no run is known to be at work on it. */
  current(fileId: string): LiveProgress | null;
  /** Starts taking the other processes' reports, where there are any. Resolves once it does. */
  open(): Promise<void>;
  /** Stops taking and sending reports; resolves once what was sent has left. */
  close(): Promise<void>;
}

/** The board of a process that both runs the files and answers about them: no database traffic. */
export class LocalProgressBoard implements ProgressBoard {
  private readonly runs = new Map<string, LiveProgress>();

  report(fileId: string, progress: LiveProgress): void {
    this.runs.set(fileId, progress);
  }

  end(fileId: string): void {
    this.runs.delete(fileId);
  }

  current(fileId: string): LiveProgress | null {
    return this.runs.get(fileId) ?? null;
  }

  async open(): Promise<void> {}

  async close(): Promise<void> {}
}

/** What the relayed board needs of the shared database: its notifications. */
export type ProgressRelay = Pick<SqlClient, "listen" | "notify">;

/** Runs `fn` after `ms`; the returned function cancels it. Tests pass one moved by a manual clock. */
export type Schedule = (fn: () => void, ms: number) => () => void;

const realTimers: Schedule = (fn, ms) => {
  const timer = setTimeout(fn, ms);
  // A run's refresh must not keep a stopping process alive.
  timer.unref?.();
  return () => clearTimeout(timer);
};

/** The database channel progress crosses (apart from the real-time events', which clients subscribe to). */
export const PROGRESS_CHANNEL = "mediabox_progress";

export interface RelayedBoardOptions {
  /** Whether this process answers the API and so keeps the others' reports: a worker only sends. */
  receives: boolean;
  /**
   * Least time between two notifications for one file. A stage that reports every page would
   * otherwise send a NOTIFY a page; a person watching sees no difference at two updates a second.
   * A stage's first report and the end of the run are sent at once whatever the time.
   */
  sendEveryMs?: number;
  /**
   * A run whose progress does not move (one long stage, e.g. a description by a model) sends it
   * again this often, so that the receivers' expiry drops only the runs of a dead worker.
   */
  refreshEveryMs?: number;
  /** A received report not refreshed for this long is dropped: its worker died mid-run (killed, its host lost) and will never send the end. */
  expireAfterMs?: number;
  /** A notification the database did not take (progress is for watching: the run goes on). */
  onError?: (err: unknown) => void;
  schedule?: Schedule;
}

/** A run this process is sending: its latest report, and what was last sent of it. */
interface Outgoing {
  progress: LiveProgress;
  sentAt: number;
  sentStage: number | null;
  /** A report withheld by the throttle, sent when `cancel`'s timer fires. */
  withheld: boolean;
  cancel: () => void;
}

/** What crosses the channel: the sending board, the file, its progress or null at the end of the run. */
interface ProgressMessage {
  from: string;
  file: string;
  progress: LiveProgress | null;
}

/**
 * The board of a process sharing a PostgreSQL database with others: the runs of this process are
 * sent to the channel (thinned out by sendEveryMs) and shown here at once; the runs of the other
 * processes are kept as their notifications arrive, for expireAfterMs after the last one.
 */
export class RelayedProgressBoard implements ProgressBoard {
  /** Tells this board's own notifications apart: PostgreSQL delivers them to its listener too. */
  private readonly id = crypto.randomUUID();
  private readonly sending = new Map<string, Outgoing>();
  private readonly received = new Map<string, { progress: LiveProgress; at: number }>();
  private subscription: Subscription | null = null;
  /** The last notification: the next waits for it, so a run's end never overtakes its last report over the pool. */
  private sent: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly sendEveryMs: number;
  private readonly refreshEveryMs: number;
  private readonly expireAfterMs: number;
  private readonly schedule: Schedule;

  constructor(
    private readonly relay: ProgressRelay,
    private readonly clock: Clock,
    private readonly options: RelayedBoardOptions,
  ) {
    this.sendEveryMs = options.sendEveryMs ?? 400;
    this.refreshEveryMs = options.refreshEveryMs ?? 20_000;
    this.expireAfterMs = options.expireAfterMs ?? 60_000;
    this.schedule = options.schedule ?? realTimers;
  }

  async open(): Promise<void> {
    if (!this.options.receives || this.subscription) return;
    this.subscription = await this.relay.listen(PROGRESS_CHANNEL, (payload) => this.take(payload));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const run of this.sending.values()) run.cancel();
    this.sending.clear();
    await this.subscription?.unlisten();
    this.subscription = null;
    this.received.clear();
    await this.sent;
  }

  report(fileId: string, progress: LiveProgress): void {
    if (this.closed) return;
    const run = this.sending.get(fileId);
    if (!run) {
      const started: Outgoing = { progress, sentAt: 0, sentStage: null, withheld: false, cancel: () => {} };
      this.sending.set(fileId, started);
      this.send(fileId, started);
      return;
    }
    run.progress = progress;
    const since = this.clock.now() - run.sentAt;
    if (run.sentStage !== progress.stageNumber || since >= this.sendEveryMs) {
      this.send(fileId, run);
    } else if (!run.withheld) {
      // The latest report goes when the interval is over, so the last page of a burst is not lost.
      run.withheld = true;
      run.cancel();
      run.cancel = this.schedule(() => this.send(fileId, run), this.sendEveryMs - since);
    }
  }

  end(fileId: string): void {
    const run = this.sending.get(fileId);
    if (!run) return;
    run.cancel();
    this.sending.delete(fileId);
    if (!this.closed) this.post({ from: this.id, file: fileId, progress: null });
  }

  current(fileId: string): LiveProgress | null {
    const own = this.sending.get(fileId);
    if (own) return own.progress;
    const entry = this.received.get(fileId);
    if (!entry) return null;
    if (this.expired(entry.at)) {
      this.received.delete(fileId);
      return null;
    }
    return entry.progress;
  }

  private send(fileId: string, run: Outgoing): void {
    run.cancel();
    run.sentAt = this.clock.now();
    run.sentStage = run.progress.stageNumber;
    run.withheld = false;
    this.post({ from: this.id, file: fileId, progress: run.progress });
    run.cancel = this.schedule(() => this.send(fileId, run), this.refreshEveryMs);
  }

  private post(message: ProgressMessage): void {
    const payload = JSON.stringify(message);
    this.sent = this.sent.then(() => this.relay.notify(PROGRESS_CHANNEL, payload).catch((err) => this.options.onError?.(err)));
  }

  private take(payload: string): void {
    let message: ProgressMessage;
    try {
      message = JSON.parse(payload) as ProgressMessage;
    } catch {
      return;
    }
    if (message.from === this.id || typeof message.file !== "string") return;
    if (message.progress) this.received.set(message.file, { progress: message.progress, at: this.clock.now() });
    else this.received.delete(message.file);
    // Entries nobody asks about again are dropped here, so a dead worker's runs do not pile up.
    for (const [fileId, entry] of this.received) if (this.expired(entry.at)) this.received.delete(fileId);
  }

  private expired(at: number): boolean {
    return this.clock.now() - at > this.expireAfterMs;
  }
}
