/**
 * Work that can wait (preparing a model's vocabulary, re-embedding the library after a model
 * change, re-clustering) gives way to files being analysed: a newcomer's first uploads should not
 * share two cores with a start-up chore. Foreground work marks itself (`foreground()`); background
 * work waits for `idle()` before each step, and background job queues are not claimed while
 * `busy` (jobs/runner.ts). Background tasks also say what they prepare and how far they got, for
 * GET /readyz.
 */

/** Background work resumes only after this long without foreground work (files come in bursts). */
export const QUIET_MS = 1_000;

/** What GET /readyz shows of a background task. */
export interface PreparingView {
  task: string;
  model: string;
  done: number;
  total: number;
  /** True while it waits for files being analysed. */
  paused: boolean;
}

export interface PreparingTask {
  progress(done: number, total: number): void;
  end(): void;
}

export class BackgroundWork {
  private active = 0;
  private lastEnded = Number.NEGATIVE_INFINITY;
  private readonly waiters = new Set<() => void>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly tasks = new Set<PreparingView>();
  private readonly polled = new Map<string, { model: string; read: () => { done: number; total: number } | null }>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** True while foreground work runs, and for QUIET_MS after the last ended. */
  get busy(): boolean {
    return this.active > 0 || this.now() - this.lastEnded < QUIET_MS;
  }

  /** Marks foreground work (a file's analysis) until the returned function is called (once). */
  foreground(): () => void {
    this.active += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.active -= 1;
      this.lastEnded = this.now();
      if (this.active === 0) this.wakeWhenQuiet();
    };
  }

  /** Resolves once no foreground work has run for QUIET_MS (at once if none), or when `signal` aborts. */
  idle(signal?: AbortSignal): Promise<void> {
    if (!this.busy || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      this.waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
      this.wakeWhenQuiet();
    });
  }

  /** Registers a background task for /readyz until `end()`. */
  preparing(task: string, model: string): PreparingTask {
    const view: PreparingView = { task, model, done: 0, total: 0, paused: false };
    this.tasks.add(view);
    return {
      progress: (done, total) => {
        view.done = done;
        view.total = total;
      },
      end: () => this.tasks.delete(view),
    };
  }

  /**
   * Registers a background task whose progress is read when asked (work done by background job
   * queues); `read` answers null once it is over, which removes the task.
   */
  preparingPolled(task: string, model: string, read: () => { done: number; total: number } | null): void {
    this.polled.set(task, { model, read });
  }

  /** The background tasks under way, each marked paused while foreground work runs. */
  preparingNow(): PreparingView[] {
    const paused = this.busy;
    const views = [...this.tasks].map((t) => ({ ...t, paused }));
    for (const [task, { model, read }] of this.polled) {
      const progress = read();
      if (progress) views.push({ task, model, ...progress, paused });
      else this.polled.delete(task);
    }
    return views;
  }

  private wakeWhenQuiet(): void {
    if (this.timer || !this.waiters.size || this.active > 0) return;
    const wait = Math.max(0, QUIET_MS - (this.now() - this.lastEnded));
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.busy) return this.wakeWhenQuiet();
      for (const wake of [...this.waiters]) wake();
    }, wait);
    (this.timer as { unref?: () => void }).unref?.();
  }
}
