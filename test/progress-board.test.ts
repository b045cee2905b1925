/**
 * The live progress boards (processing/progress-board.ts) with time moved by hand: the local one
 * keeps a run until it ends; the relayed one thins a worker's reports out (a stage's first report
 * and the run's end at once, then at most one notification per file per interval, the latest
 * report last), refreshes a run whose progress stands still, and drops on the receiving side what
 * a dead worker left once it is not refreshed.
 */
import { expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import { LocalProgressBoard, PROGRESS_CHANNEL, RelayedProgressBoard, type LiveProgress, type ProgressRelay, type Schedule } from "../src/processing/progress-board.ts";

/** Timers that fire when the manual clock is moved past them, in order. */
class ManualTimers {
  private pending: { at: number; fn: () => void }[] = [];
  constructor(private readonly clock: ManualClock) {}
  readonly schedule: Schedule = (fn, ms) => {
    const timer = { at: this.clock.now() + ms, fn };
    this.pending.push(timer);
    return () => void (this.pending = this.pending.filter((t) => t !== timer));
  };
  advance(ms: number): void {
    const until = this.clock.now() + ms;
    for (;;) {
      const next = this.pending.filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.pending = this.pending.filter((t) => t !== next);
      this.clock.advance(next.at - this.clock.now());
      next.fn();
    }
    this.clock.advance(until - this.clock.now());
  }
}

/** A database channel in memory: every notification goes to every listener at once, the sender's too (as PostgreSQL does). */
function fakeRelay() {
  const listeners = new Set<(payload: string) => void>();
  const sent: { file: string; progress: LiveProgress | null }[] = [];
  const relay: ProgressRelay = {
    async listen(channel, onPayload) {
      expect(channel).toBe(PROGRESS_CHANNEL);
      listeners.add(onPayload);
      return { unlisten: async () => void listeners.delete(onPayload) };
    },
    async notify(channel, payload) {
      expect(channel).toBe(PROGRESS_CHANNEL);
      const { file, progress } = JSON.parse(payload);
      sent.push({ file, progress });
      for (const listener of listeners) listener(payload);
    },
  };
  return { relay, sent };
}

function page(done: number, stageNumber = 1, stage = "extraction"): LiveProgress {
  return { stage, stageNumber, stageCount: 3, percent: done * 5, unit: "page", done, total: 10 };
}

/** A worker's board and an api's over one channel, on one manual clock. */
async function pair(options: { sendEveryMs?: number; refreshEveryMs?: number; expireAfterMs?: number } = {}) {
  const clock = new ManualClock(1_000_000);
  const timers = new ManualTimers(clock);
  const { relay, sent } = fakeRelay();
  const worker = new RelayedProgressBoard(relay, clock, { receives: false, schedule: timers.schedule, ...options });
  const api = new RelayedProgressBoard(relay, clock, { receives: true, schedule: timers.schedule, ...options });
  await Promise.all([worker.open(), api.open()]);
  /** Lets the chained notifications of the worker leave. */
  const flush = () => Bun.sleep(0);
  return { clock, timers, relay, sent, worker, api, flush };
}

test("the local board keeps a run's latest report until the run ends, and sends nothing", async () => {
  const board = new LocalProgressBoard();
  await board.open();
  board.report("f", page(1));
  board.report("f", page(2));
  expect(board.current("f")).toEqual(page(2));
  expect(board.current("other")).toBeNull();
  board.end("f");
  expect(board.current("f")).toBeNull();
  await board.close();
});

test("a stage reporting every page sends its first report, then at most one per interval with the latest last, and the end at once", async () => {
  const { timers, sent, worker, api, flush } = await pair({ sendEveryMs: 400 });
  worker.report("f", page(0));
  await flush();
  expect(sent).toEqual([{ file: "f", progress: page(0) }]);
  expect(api.current("f")).toEqual(page(0));
  // Ten pages 50 ms apart: 500 ms of reports.
  for (let done = 1; done <= 10; done++) {
    timers.advance(50);
    worker.report("f", page(done));
  }
  await flush();
  // Page 1 was withheld; when the interval ended (400 ms) the latest report, page 7, went. Pages 8
  // to 10 came within the next interval: the latest of them goes when it ends (800 ms).
  expect(sent.map((m) => m.progress?.done)).toEqual([0, 7]);
  // The sender shows its own latest report at once.
  expect(worker.current("f")).toEqual(page(10));
  expect(api.current("f")).toEqual(page(7));
  timers.advance(250);
  await flush();
  expect(sent.length).toBe(2);
  timers.advance(50);
  await flush();
  expect(sent.map((m) => m.progress?.done)).toEqual([0, 7, 10]);
  expect(api.current("f")).toEqual(page(10));
  // The next stage's first report goes at once, however soon.
  timers.advance(10);
  worker.report("f", page(0, 2, "chunks"));
  worker.report("f", page(1, 2, "chunks"));
  await flush();
  expect(sent.map((m) => [m.progress?.stage, m.progress?.done])).toEqual([["extraction", 0], ["extraction", 7], ["extraction", 10], ["chunks", 0]]);
  // The end goes at once too, and no withheld report follows it.
  worker.end("f");
  await flush();
  expect(sent.at(-1)).toEqual({ file: "f", progress: null });
  expect(api.current("f")).toBeNull();
  expect(worker.current("f")).toBeNull();
  const count = sent.length;
  timers.advance(60_000);
  await flush();
  expect(sent.length).toBe(count);
  await Promise.all([worker.close(), api.close()]);
});

test("files are throttled each on its own", async () => {
  const { timers, sent, worker, flush } = await pair({ sendEveryMs: 400 });
  worker.report("a", page(0));
  worker.report("b", page(0));
  timers.advance(100);
  worker.report("a", page(1));
  worker.report("b", page(1));
  await flush();
  expect(sent.map((m) => `${m.file}${m.progress?.done}`)).toEqual(["a0", "b0"]);
  timers.advance(300);
  await flush();
  expect(sent.map((m) => `${m.file}${m.progress?.done}`)).toEqual(["a0", "b0", "a1", "b1"]);
  await worker.close();
});

test("a run whose progress stands still is refreshed, so the api keeps it past the expiry", async () => {
  const { timers, sent, worker, api, flush } = await pair({ refreshEveryMs: 20_000, expireAfterMs: 60_000 });
  worker.report("f", page(3));
  await flush();
  timers.advance(90_000);
  await flush();
  // Sent at 0, 20, 40, 60 and 80 s.
  expect(sent.length).toBe(5);
  expect(api.current("f")).toEqual(page(3));
  await Promise.all([worker.close(), api.close()]);
});

test("what a dead worker left is dropped once it is not refreshed, on a read or when other notifications arrive", async () => {
  const { clock, timers, relay, worker, api, flush } = await pair({ expireAfterMs: 60_000 });
  worker.report("f", page(3));
  worker.report("g", page(1));
  await flush();
  expect(api.current("f")).toEqual(page(3));
  // The worker is killed: it sends nothing more (closing it stands for that here).
  await worker.close();
  timers.advance(59_000);
  expect(api.current("f")).toEqual(page(3));
  timers.advance(2_000);
  expect(api.current("f")).toBeNull();
  // "g" was never read again: another worker's notification sweeps it.
  const other = new RelayedProgressBoard(relay, clock, { receives: false, schedule: timers.schedule });
  other.report("h", page(1));
  await flush();
  // Its private map, as no read can tell without dropping the entry itself.
  expect((api as unknown as { received: Map<string, unknown> }).received.has("g")).toBe(false);
  expect(api.current("h")).toEqual(page(1));
  await Promise.all([other.close(), api.close()]);
});

test("a worker only sends: it keeps none of the other processes' reports", async () => {
  const { worker, api, flush } = await pair();
  api.report("f", page(2));
  await flush();
  expect(worker.current("f")).toBeNull();
  expect(api.current("f")).toEqual(page(2));
  await Promise.all([worker.close(), api.close()]);
});

test("a notification the database refuses is reported and the run goes on", async () => {
  const clock = new ManualClock();
  const errors: unknown[] = [];
  const board = new RelayedProgressBoard(
    { listen: async () => ({ unlisten: async () => {} }), notify: () => Promise.reject(new Error("connection lost")) },
    clock,
    { receives: true, onError: (err) => errors.push(err), schedule: new ManualTimers(clock).schedule },
  );
  board.report("f", page(1));
  board.end("f");
  await board.close();
  expect(errors.map(String)).toEqual(["Error: connection lost", "Error: connection lost"]);
});
