/**
 * Background worker threads (the text model, reading notes) run at a lower CPU priority than
 * the event loop, as the document reader process and ffmpeg do: on a busy machine (two cores, a
 * bulk import) the event loop, which answers requests and /healthz and feeds those very threads,
 * goes first instead of sharing a core with them. Linux names a thread by its own id, so a
 * worker lowers itself (setpriority on its id from /proc/thread-self); elsewhere, or where it is
 * not allowed, the thread keeps the normal priority.
 */
import { dlopen, FFIType, ptr } from "bun:ffi";
import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

/**
 * How much nicer than the process background threads and child processes run (0 normal, 19
 * lowest): relative, so a server started under `nice -n 10` (a bench, a site's service unit) still
 * has its event loop ahead of its model threads. With 10 as an absolute value such a server's
 * model threads ran level with its event loop: while 1,000 documents indexed under `nice -n 10`,
 * its stalls were 2.1 s waiting for a core against 0.1 s of its own code (bench:retrieval).
 */
export const BACKGROUND_NICENESS = 10;

/** The niceness `by` steps nicer than `current`, within Linux's range. */
export function nicerBy(current: number, by = BACKGROUND_NICENESS): number {
  return Math.min(19, current + by);
}

/**
 * Lowers the calling worker thread's priority `by` steps below the thread that started it
 * (whose niceness it inherited); never the main thread's (that would be the whole event loop).
 */
export function lowerThreadPriority(by = BACKGROUND_NICENESS): boolean {
  if (Bun.isMainThread) return false;
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").at(-1));
    if (!Number.isInteger(tid) || tid <= 0) return false;
    setPriority(tid, nicerBy(getPriority(tid), by));
    return true;
  } catch {
    return false;
  }
}

/** Linux's scheduling policy for work that runs only when a core has nothing else to do. */
const SCHED_IDLE = 5;

/**
 * Puts the calling worker thread in Linux's idle scheduling class (SCHED_IDLE): it gets a core
 * only when nothing else, in this process or any other, wants it. For work that can wait
 * indefinitely (preparing a model's vocabulary); never for work a request waits on, which would
 * starve on a busy machine. One way only: leaving the class needs privileges a server may lack,
 * so a thread that does this is dedicated to such work. Where the call is refused or not Linux,
 * falls back to the lowest niceness.
 */
export function idleThreadPriority(): "idle" | "nice" | false {
  if (Bun.isMainThread) return false;
  if (process.platform === "linux") {
    try {
      const libc = dlopen("libc.so.6", { sched_setscheduler: { args: [FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
      try {
        // pid 0: the calling thread; sched_priority must be 0 for SCHED_IDLE.
        if (libc.symbols.sched_setscheduler(0, SCHED_IDLE, ptr(new Int32Array(1))) === 0) return "idle";
      } finally {
        libc.close();
      }
    } catch {
      // No glibc (musl, a sandbox): niceness below.
    }
  }
  return lowerThreadPriority(19) ? "nice" : false; // 19 steps: the lowest there is
}
