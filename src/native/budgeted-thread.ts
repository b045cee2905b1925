/**
 * A worker thread for CPU-heavy work on untrusted input (a hostile page's DOM, a pathological
 * text), one request at a time, each with a time budget counted from when it starts on the
 * thread (never while it waits its turn). A request past its budget, or whose signal aborts,
 * has the thread terminated (JavaScript that loops cannot be interrupted any other way) and is
 * rejected; the requests behind it run on a fresh thread. The event loop never runs the work, so
 * a stuck request costs a core until its budget, never /healthz or a shutdown. A thread left idle
 * for `idleMs` is ended too, giving back the heap its last request grew (a hostile page's DOM
 * is hundreds of MB); the next request starts a fresh one.
 */
import { FAILURES } from "../errors.ts";
import { WorkerThread } from "./worker-thread.ts";

/** A request stopped at its budget; the message is the catalogue's. */
export class ThreadBudgetError extends Error {
  constructor(work: string, budgetMs: number) {
    super(FAILURES.workTimedOut(work, budgetMs));
    this.name = "ThreadBudgetError";
  }
}

export interface BudgetedRequest {
  /** Longest it may run on the thread, in ms. */
  budgetMs: number;
  /** What the work is, for the message of a stopped one ("reading the page"). */
  work: string;
  /** Aborting drops a waiting request, or stops the running one (rejecting with the signal's reason). */
  signal?: AbortSignal;
  transfer?: Transferable[];
}

interface Task<Request, Reply> {
  request: Request;
  options: BudgetedRequest;
  resolve: (reply: Reply) => void;
  reject: (err: unknown) => void;
}

export class BudgetedThread<Request, Reply> {
  private thread: WorkerThread<Request, Reply> | null = null;
  private readonly queue: Task<Request, Reply>[] = [];
  private running = false;
  private closed = false;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;

  /** `pathUnderSrc`: the worker's entry (see WorkerThread); `what`: the thread, for its errors. */
  constructor(
    private readonly pathUnderSrc: string,
    private readonly what: string,
    private readonly idleMs = 30_000,
  ) {}

  /** The worker's answer; rejects with ThreadBudgetError, the signal's reason, or the thread's failure. */
  run(request: Request, options: BudgetedRequest): Promise<Reply> {
    if (this.closed) return Promise.reject(new Error(`${this.what} is shut down`));
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    return new Promise<Reply>((resolve, reject) => {
      const task: Task<Request, Reply> = { request, options, resolve, reject };
      this.queue.push(task);
      options.signal?.addEventListener(
        "abort",
        () => {
          const at = this.queue.indexOf(task);
          if (at < 0) return; // running: run() stops it
          this.queue.splice(at, 1);
          reject(options.signal!.reason);
        },
        { once: true },
      );
      this.pump();
    });
  }

  /** Ends the thread; waiting and later requests are refused. */
  close(): void {
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    for (const task of this.queue.splice(0)) task.reject(new Error(`${this.what} is shut down`));
    this.stopThread();
  }

  private stopThread(): void {
    this.thread?.terminate();
    this.thread = null;
  }

  private pump(): void {
    if (this.running || this.closed) return;
    const task = this.queue.shift();
    if (!task) {
      this.idleTimer ??= setTimeout(() => {
        this.idleTimer = null;
        if (!this.running && this.queue.length === 0) this.stopThread();
      }, this.idleMs);
      (this.idleTimer as { unref?: () => void }).unref?.();
      return;
    }
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    this.running = true;
    void this.runTask(task).finally(() => {
      this.running = false;
      this.pump();
    });
  }

  private async runTask({ request, options, resolve, reject }: Task<Request, Reply>): Promise<void> {
    const { signal, budgetMs } = options;
    if (signal?.aborted) return reject(signal.reason);
    let thread: WorkerThread<Request, Reply>;
    try {
      if (!this.thread || this.thread.broken) this.thread = new WorkerThread<Request, Reply>(this.pathUnderSrc, this.what);
      thread = this.thread;
    } catch (err) {
      return reject(err);
    }
    let stopped: unknown = null;
    const stop = (why: unknown) => {
      stopped ??= why;
      // Terminating answers the open request with an Error, which settles the ask below.
      if (this.thread === thread) this.stopThread();
      else thread.terminate();
    };
    const timer = setTimeout(() => stop(new ThreadBudgetError(options.work, budgetMs)), budgetMs);
    const onAbort = () => stop(signal!.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const reply = await thread.ask(request, options.transfer ?? []);
      if (stopped !== null) reject(stopped);
      else if (reply instanceof Error) reject(reply);
      else resolve(reply);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }
}
