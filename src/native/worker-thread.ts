/**
 * One request/answer channel to a worker thread: each request gets an id, the worker answers
 * with the same id, and a thread that dies answers every open request with an Error (and every
 * later one too), so callers can fall back instead of waiting forever. Idle threads never keep
 * the process alive.
 */
import { workerEntry } from "./packages.ts";

/**
 * Threads of the process that failed (died, or never started: a compiled binary missing a
 * worker entry), by what they are. Callers fall back (the vector scan to the event loop, hashing
 * to the request's thread), which keeps the appliance working but slower; GET /metrics shows it.
 */
const failures = new Map<string, number>();

function countFailure(what: string): void {
  failures.set(what, (failures.get(what) ?? 0) + 1);
}

/** Failed threads by what they are, since the process started. */
export function workerThreadFailures(): ReadonlyMap<string, number> {
  return failures;
}

export class WorkerThread<Request, Reply> {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, (reply: Reply | Error) => void>();
  private requests = 0;
  private failure: Error | null = null;

  /** `pathUnderSrc`: the worker's entry point, e.g. "vectors/scan-worker.ts" (see workerEntry). */
  constructor(pathUnderSrc: string, private readonly what: string) {
    try {
      this.worker = new Worker(workerEntry(pathUnderSrc));
    } catch (err) {
      countFailure(what);
      throw err;
    }
    (this.worker as Worker & { unref(): void }).unref(); // Bun's Worker has unref
    this.worker.onmessage = (event: MessageEvent<{ id: number; reply: Reply }>) => {
      this.waiting.get(event.data.id)?.(event.data.reply);
      this.waiting.delete(event.data.id);
    };
    this.worker.onerror = (event: ErrorEvent) => {
      if (!this.failure) countFailure(this.what);
      this.failure = new Error(`${this.what} failed: ${event.message}`);
      for (const settle of this.waiting.values()) settle(this.failure);
      this.waiting.clear();
    };
  }

  get broken(): boolean {
    return this.failure !== null;
  }

  /** Ends the thread; open and later requests answer with an Error. */
  terminate(): void {
    this.failure ??= new Error(`${this.what} was stopped`);
    for (const settle of this.waiting.values()) settle(this.failure);
    this.waiting.clear();
    this.worker.terminate();
  }

  /** The worker's answer, or the Error of a thread that failed. */
  ask(request: Request, transfer: Transferable[] = []): Promise<Reply | Error> {
    if (this.failure) return Promise.resolve(this.failure);
    const id = ++this.requests;
    return new Promise((settle) => {
      this.waiting.set(id, settle);
      this.worker.postMessage({ id, request }, transfer);
    });
  }
}

/** The worker side: answers each `{id, request}` with `{id, reply}`; `answer` may name buffers to transfer. */
export function serveRequests<Request, Reply>(answer: (request: Request) => Promise<{ reply: Reply; transfer?: Transferable[] }> | { reply: Reply; transfer?: Transferable[] }): void {
  const self = globalThis as unknown as Worker;
  self.onmessage = async (event: MessageEvent<{ id: number; request: Request }>) => {
    const { reply, transfer } = await answer(event.data.request);
    self.postMessage({ id: event.data.id, reply }, transfer ?? []);
  };
}
