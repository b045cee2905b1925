/**
 * Worker thread entry that runs Universal Sentence Encoder lite (use-runtime.ts) off the main
 * thread: a run over a batch of inputs takes tens to hundreds of milliseconds of synchronous wasm,
 * which would otherwise stall every request. Answers each request with the vectors (transferred)
 * or the error message; the model loads on the first request.
 */
import { serveRequests } from "../native/worker-thread.ts";
import { loadUseModel, type UseModel } from "./use-runtime.ts";
import { idleThreadPriority, lowerThreadPriority } from "../native/thread-priority.ts";

export interface UseRequest {
  /** Inputs as piece ids (the main thread tokenizes). */
  inputs: number[][];
  /** The compiled binary's assets directory (see compiledAssets), null in development. */
  assets: string | null;
  /** This thread does only work that can wait: it moves to the idle scheduling class (for good). */
  idle?: boolean;
}
export type UseReply = { vectors: Float32Array } | { error: string };

let model: Promise<UseModel> | null = null;

// Background work: the event loop that feeds this thread goes first on a busy machine.
lowerThreadPriority();

let idle = false;

serveRequests<UseRequest, UseReply>(async ({ inputs, assets, idle: idleRequested }) => {
  if (idleRequested && !idle) idle = idleThreadPriority() !== false;
  try {
    model ??= loadUseModel(assets).catch((err: unknown) => {
      model = null;
      throw err;
    });
    const vectors = await (await model).run(inputs);
    return { reply: { vectors }, transfer: [vectors.buffer as ArrayBuffer] };
  } catch (err) {
    return { reply: { error: err instanceof Error ? err.message : String(err) } };
  }
});
