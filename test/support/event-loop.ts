/**
 * Whether work keeps off the event loop: a 2 ms timer ticks while it runs, and the longest gap
 * between ticks is how long the loop was blocked.
 */

/** Awaits `work` with the timer ticking; answers its result and the longest gap between ticks, in ms. */
export async function withLoopWatch<T>(work: () => Promise<T>): Promise<{ result: T; worstGapMs: number }> {
  let last = performance.now();
  let worstGapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worstGapMs = Math.max(worstGapMs, now - last);
    last = now;
  }, 2);
  try {
    const result = await work();
    return { result, worstGapMs };
  } finally {
    clearInterval(timer);
  }
}
