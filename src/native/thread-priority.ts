/**
 * Background worker threads (the text model, reading notes) run at a lower CPU priority than
 * the event loop, as the document reader process and ffmpeg do: on a busy machine (two cores, a
 * bulk import) the event loop, which answers requests and /healthz and feeds those very threads,
 * goes first instead of sharing a core with them. Linux names a thread by its own id, so a
 * worker lowers itself (setpriority on its id from /proc/thread-self); elsewhere, or where it is
 * not allowed, the thread keeps the normal priority.
 */
import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

/** Niceness of background threads (0 normal, 19 lowest). */
export const BACKGROUND_NICENESS = 10;

/** Lowers the calling worker thread's priority; never the main thread's (that would be the whole event loop). */
export function lowerThreadPriority(niceness = BACKGROUND_NICENESS): boolean {
  if (Bun.isMainThread) return false;
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").at(-1));
    if (!Number.isInteger(tid) || tid <= 0) return false;
    // Never raises it: a server started under `nice` keeps its threads at least that low.
    setPriority(tid, Math.max(getPriority(tid), niceness));
    return true;
  } catch {
    return false;
  }
}
