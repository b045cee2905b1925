/**
 * At most N tasks at once per key, the others waiting their turn in arrival order: link fetches
 * per organization and host (politeness), files processed per media type. One instance per
 * owner, never module state: two servers in one process keep their own counts.
 */
/** Runs tasks at most N at once per key (KeyedLimiter in one process; db/leased-limiter.ts across processes). */
export interface TaskLimiter {
  run<T>(key: string, work: () => Promise<T>): Promise<T>;
}

export class KeyedLimiter implements TaskLimiter {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  /** `perKey`: the limit of every key, or of each key. */
  constructor(private readonly perKey: number | ((key: string) => number)) {}

  private limitOf(key: string): number {
    return typeof this.perKey === "number" ? this.perKey : this.perKey(key);
  }

  /** Runs `work` once fewer than the limit of `key`'s tasks are running. */
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    await this.acquire(key);
    try {
      return await work();
    } finally {
      this.release(key);
    }
  }

  /** Tasks running now for `key` (tests and metrics). */
  active(key: string): number {
    return this.running.get(key) ?? 0;
  }

  private acquire(key: string): Promise<void> {
    const count = this.running.get(key) ?? 0;
    if (count < this.limitOf(key)) {
      this.running.set(key, count + 1);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const queue = this.waiting.get(key) ?? [];
      queue.push(resolve);
      this.waiting.set(key, queue);
    });
  }

  private release(key: string): void {
    const queue = this.waiting.get(key);
    const next = queue?.shift();
    if (next) {
      // The slot passes straight to the next waiter: the count stays.
      if (!queue!.length) this.waiting.delete(key);
      next();
      return;
    }
    const count = (this.running.get(key) ?? 1) - 1;
    if (count <= 0) this.running.delete(key);
    else this.running.set(key, count);
  }
}
