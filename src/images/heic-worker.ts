/**
 * The HEIC decoding thread (heic.ts): libheif (wasm) decodes one HEIC at a time here, so a 12 MP
 * photo's ~270 ms of decoding never blocks the server's event loop. libheif-js reports a failed
 * decode only with console.log("Decoding image failed", handle, error) (a multi-line object dump
 * that would land among the server's JSON log lines) and a bare "HEIF processing error": this
 * thread's console.log keeps that message for the reply instead of printing it.
 */
import decodeHeic from "heic-decode";
import { serveRequests } from "../native/worker-thread.ts";
import { lowerThreadPriority } from "../native/thread-priority.ts";
import { errorMessage } from "../errors.ts";

export interface HeicRequest {
  bytes: Uint8Array;
}

export type HeicReply = { width: number; height: number; data: Uint8ClampedArray } | { error: string };

const libheifSaid: string[] = [];
const log = console.log;
console.log = (...args: unknown[]) => {
  if (args[0] !== "Decoding image failed") return log(...args);
  libheifSaid.push(String((args[2] as { message?: unknown } | undefined)?.message ?? "unknown libheif error").trim());
};

let queue: Promise<unknown> = Promise.resolve();

// Background work: the event loop goes first on a busy machine.
lowerThreadPriority();

serveRequests<HeicRequest, HeicReply>(({ bytes }) => {
  // One decode at a time: libheif's failure message has to belong to the request that failed.
  const decoded = queue.then(async (): Promise<{ reply: HeicReply; transfer?: Transferable[] }> => {
    libheifSaid.length = 0;
    try {
      const { width, height, data } = await decodeHeic({ buffer: bytes });
      return { reply: { width, height, data }, transfer: [data.buffer] };
    } catch (err) {
      return { reply: { error: libheifSaid.at(-1) ?? errorMessage(err) } };
    }
  });
  queue = decoded;
  return decoded;
});
