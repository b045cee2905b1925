/**
 * Letting go of work that cannot itself be cancelled (a model thread's queue, a socket's read)
 * the moment an AbortSignal fires.
 */

/** `promise`, or a rejection with the signal's reason as soon as it aborts (the work itself runs on). */
export function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
