/**
 * How late the process's event loop runs, and why. A timer due every SAMPLE_MS measures how late
 * it fires (its lateness: how long every request waited at that moment); when it is STALL_MS or
 * more late, the main thread's scheduler counters (Linux /proc/self/task/<pid>/schedstat: time on
 * a core, time waiting for one) split the stall by cause:
 * - `running`: the main thread was computing (synchronous code held the event loop; the fix is in
 *   the code);
 * - `waiting_for_cpu`: it was runnable but every core was taken (a busy machine; the fix is
 *   fewer threads competing, or a bigger machine);
 * - `blocked`: it was neither (a synchronous system call: disk I/O, a lock, page faults).
 * One monitor per process
 * (several servers in one process share the event loop); GET /metrics and GET /readyz show it.
 */
import { openSync, readSync } from "node:fs";

/** How often the timer is due. */
export const SAMPLE_MS = 20;
/** Lateness from which a tick counts as a stall and is split by cause. */
export const STALL_MS = 50;
/** How far back GET /readyz looks. */
export const WINDOW_MS = 60_000;
/** Stalls at least this long are logged as warnings (shorter ones at debug level). */
export const LONG_STALL_MS = 1_000;

export type StallCause = "running" | "waiting_for_cpu" | "blocked";
export const STALL_CAUSES: readonly StallCause[] = ["running", "waiting_for_cpu", "blocked"];

/** A stall: its lateness and how much of it each cause took (ms). */
export interface Stall {
  /** When the late tick fired (Date.now()). */
  at: number;
  lateMs: number;
  causes: Record<StallCause, number>;
}

/** What GET /readyz shows: the last WINDOW_MS. */
export interface EventLoopWindow {
  window_seconds: number;
  /** Ticks sampled in the window (one per SAMPLE_MS while the loop keeps up). */
  samples: number;
  lateness_p50_ms: number;
  lateness_p99_ms: number;
  lateness_max_ms: number;
  /** Ticks STALL_MS or more late. */
  stalls: number;
  /** The stalls' lateness split by cause (ms, rounded). */
  stall_ms: Record<StallCause, number>;
}

/** The main thread's nanoseconds on a core and waiting for one; null where Linux's schedstat is not there. */
export type SchedReader = () => { runNs: number; waitNs: number } | null;

/** The schedstat file, opened once: a read from offset 0 costs a fraction of open/read/close 50 times a second. */
let schedstat: { fd: number; buffer: Buffer } | null | undefined;

/** Reads the main thread's schedstat ("<ns on a core> <ns waiting> <timeslices>"). */
export const readMainThreadSched: SchedReader = () => {
  try {
    if (schedstat === null) return null;
    schedstat ??= { fd: openSync(`/proc/self/task/${process.pid}/schedstat`, "r"), buffer: Buffer.alloc(128) };
    const length = readSync(schedstat.fd, schedstat.buffer, 0, schedstat.buffer.length, 0);
    const [run, wait] = schedstat.buffer.toString("latin1", 0, length).split(" ").map(Number);
    return Number.isFinite(run) && Number.isFinite(wait) ? { runNs: run!, waitNs: wait! } : null;
  } catch {
    schedstat = null; // not Linux, or no schedstat: stalls are not split
    return null;
  }
};

/**
 * The bookkeeping, fed one tick at a time (by the timer of startEventLoopMonitor, or by a test
 * with figures of its own).
 */
export class EventLoopMonitor {
  /** Every tick's lateness (ms), Prometheus-style: cumulative until the process ends. */
  private readonly latenessListeners = new Set<(lateMs: number) => void>();
  private readonly stallListeners = new Set<(stall: Stall) => void>();
  /** Ticks of the window: [at, lateMs] pairs, oldest first. */
  private readonly ticks: { at: number; lateMs: number }[] = [];
  private readonly stalls: Stall[] = [];
  /** Stall time by cause since the process started (ms). */
  readonly stallTotals: Record<StallCause, number> = { running: 0, waiting_for_cpu: 0, blocked: 0 };

  /**
   * One tick: fired at `at` (ms), `elapsedMs` after the one before although due after
   * `intervalMs`; `runMs` / `waitMs`: the main thread's time on a core and waiting for one in
   * that interval (null when unknown: the whole stall then counts as running).
   */
  tick(at: number, elapsedMs: number, intervalMs: number, sched: { runMs: number; waitMs: number } | null): void {
    const lateMs = Math.max(0, elapsedMs - intervalMs);
    this.ticks.push({ at, lateMs });
    for (const listener of this.latenessListeners) listener(lateMs);
    if (lateMs >= STALL_MS) {
      const causes = splitStall(lateMs, elapsedMs, sched);
      const stall = { at, lateMs, causes };
      this.stalls.push(stall);
      for (const cause of STALL_CAUSES) this.stallTotals[cause] += causes[cause];
      for (const listener of this.stallListeners) listener(stall);
    }
    this.forget(at - WINDOW_MS);
  }

  private forget(before: number): void {
    let old = 0;
    while (old < this.ticks.length && this.ticks[old]!.at < before) old++;
    if (old) this.ticks.splice(0, old);
    old = 0;
    while (old < this.stalls.length && this.stalls[old]!.at < before) old++;
    if (old) this.stalls.splice(0, old);
  }

  /** The last WINDOW_MS before `now`. */
  window(now = Date.now()): EventLoopWindow {
    this.forget(now - WINDOW_MS);
    const late = this.ticks.map((t) => t.lateMs).sort((a, b) => a - b);
    const at = (p: number) => (late.length ? late[Math.min(late.length - 1, Math.floor((p / 100) * late.length))]! : 0);
    const stallMs = { running: 0, waiting_for_cpu: 0, blocked: 0 };
    for (const stall of this.stalls) for (const cause of STALL_CAUSES) stallMs[cause] += stall.causes[cause];
    const round = (ms: number) => Math.round(ms * 10) / 10;
    return {
      window_seconds: WINDOW_MS / 1000,
      samples: late.length,
      lateness_p50_ms: round(at(50)),
      lateness_p99_ms: round(at(99)),
      lateness_max_ms: round(late.at(-1) ?? 0),
      stalls: this.stalls.length,
      stall_ms: { running: Math.round(stallMs.running), waiting_for_cpu: Math.round(stallMs.waiting_for_cpu), blocked: Math.round(stallMs.blocked) },
    };
  }

  /** Calls `listener` with every tick's lateness (ms); returns the unsubscribe. */
  onLateness(listener: (lateMs: number) => void): () => void {
    this.latenessListeners.add(listener);
    return () => this.latenessListeners.delete(listener);
  }

  /** Calls `listener` with every stall (STALL_MS or more late); returns the unsubscribe. */
  onStall(listener: (stall: Stall) => void): () => void {
    this.stallListeners.add(listener);
    return () => this.stallListeners.delete(listener);
  }
}

/**
 * The stall's lateness split by cause from the interval's counters: of `elapsedMs`, the thread ran
 * `runMs`, waited for a core `waitMs`, and slept the rest. Sleeping until the tick was due is the
 * loop idling; sleep beyond that can only be a blocking call, so that much of the lateness is
 * `blocked`, and the remainder is split between running and waiting in their proportion.
 */
export function splitStall(lateMs: number, elapsedMs: number, sched: { runMs: number; waitMs: number } | null): Record<StallCause, number> {
  if (!sched) return { running: lateMs, waiting_for_cpu: 0, blocked: 0 };
  const run = Math.max(0, sched.runMs);
  const wait = Math.max(0, sched.waitMs);
  const slept = Math.max(0, elapsedMs - run - wait);
  const blocked = Math.min(lateMs, Math.max(0, slept - (elapsedMs - lateMs)));
  const rest = lateMs - blocked;
  const busy = run + wait;
  return busy > 0 ? { running: (rest * run) / busy, waiting_for_cpu: (rest * wait) / busy, blocked } : { running: 0, waiting_for_cpu: 0, blocked: lateMs };
}

let processMonitor: EventLoopMonitor | null = null;

/**
 * The process's monitor, its timer started on the first call (an unref'd timer: it never keeps
 * the process alive).
 */
export function eventLoopMonitor(readSched: SchedReader = readMainThreadSched): EventLoopMonitor {
  if (processMonitor) return processMonitor;
  const monitor = new EventLoopMonitor();
  processMonitor = monitor;
  let last = performance.now();
  let lastSched = readSched();
  const timer = setInterval(() => {
    const now = performance.now();
    const sched = readSched();
    const interval = sched && lastSched ? { runMs: (sched.runNs - lastSched.runNs) / 1e6, waitMs: (sched.waitNs - lastSched.waitNs) / 1e6 } : null;
    monitor.tick(Date.now(), now - last, SAMPLE_MS, interval);
    last = now;
    lastSched = sched;
  }, SAMPLE_MS);
  timer.unref();
  return monitor;
}
