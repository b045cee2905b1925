import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EventLoopMonitor, LONG_STALL_MS, readMainThreadSched, type Stall, splitStall, WINDOW_MS } from "../src/native/event-loop-monitor.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

describe("the event loop's bookkeeping", () => {
  test("a stall is split into running, waiting for a core and blocked; sleeping until the tick was due is idling", () => {
    // 220 ms between ticks due 20 ms apart: 200 ms late; the thread ran 110 ms, waited 55, slept
    // 55, of which 20 before the tick was due (idle) and 35 after (a blocking call).
    expect(splitStall(200, 220, { runMs: 110, waitMs: 55 })).toEqual({ running: 110, waiting_for_cpu: 55, blocked: 35 });
    // Slept only while idle: nothing blocked; the lateness is split between running and waiting.
    expect(splitStall(80, 100, { runMs: 60, waitMs: 20 })).toEqual({ running: 60, waiting_for_cpu: 20, blocked: 0 });
    // Counters read a little after the clock: never more than the lateness in all.
    const late = splitStall(100, 120, { runMs: 130, waitMs: 5 });
    expect(late.blocked).toBe(0);
    expect(late.running + late.waiting_for_cpu).toBeCloseTo(100, 6);
    // Without Linux's counters the whole stall counts as running.
    expect(splitStall(80, 100, null)).toEqual({ running: 80, waiting_for_cpu: 0, blocked: 0 });
  });

  test("the window keeps the last minute: percentiles, the worst tick, stalls by cause", () => {
    const monitor = new EventLoopMonitor();
    const start = 1_000_000;
    // 99 ticks on time, one 300 ms late (the thread blocked for all of it), then one a minute later.
    for (let i = 0; i < 99; i++) monitor.tick(start + i * 20, 21, 20, { runMs: 1, waitMs: 0 });
    monitor.tick(start + 2_300, 320, 20, { runMs: 0, waitMs: 0 });
    let window = monitor.window(start + 2_400);
    expect(window).toMatchObject({ window_seconds: WINDOW_MS / 1000, samples: 100, lateness_p50_ms: 1, lateness_max_ms: 300, stalls: 1 });
    expect(window.stall_ms).toEqual({ running: 0, waiting_for_cpu: 0, blocked: 300 });
    expect(monitor.stallTotals.blocked).toBe(300);
    window = monitor.window(start + 2_300 + WINDOW_MS + 1);
    expect(window).toMatchObject({ samples: 0, lateness_max_ms: 0, stalls: 0 });
    // The totals since start stay (Prometheus counts them).
    expect(monitor.stallTotals.blocked).toBe(300);
  });

  test("listeners hear every tick's lateness and every stall", () => {
    const monitor = new EventLoopMonitor();
    const lateness: number[] = [];
    const stalls: Stall[] = [];
    const stopLateness = monitor.onLateness((ms) => lateness.push(ms));
    const stopStalls = monitor.onStall((stall) => stalls.push(stall));
    monitor.tick(1, 25, 20, null);
    monitor.tick(2, 220, 20, null);
    monitor.tick(3, LONG_STALL_MS + 20, 20, { runMs: LONG_STALL_MS + 20, waitMs: 0 });
    stopLateness();
    stopStalls();
    monitor.tick(4, LONG_STALL_MS * 2, 20, null);
    expect(lateness).toEqual([5, 200, LONG_STALL_MS]);
    expect(stalls.map((s) => [s.lateMs, s.causes.running])).toEqual([[200, 200], [LONG_STALL_MS, LONG_STALL_MS]]);
  });
});

test.skipIf(process.platform !== "linux")("the main thread's scheduler counters are read, and grow with its work", () => {
  const before = readMainThreadSched()!;
  let x = 0;
  for (let i = 0; i < 5_000_000; i++) x += Math.sqrt(i);
  const after = readMainThreadSched()!;
  expect(x).toBeGreaterThan(0);
  expect(Number.isFinite(before.runNs) && Number.isFinite(before.waitNs)).toBe(true);
  expect(after.runNs).toBeGreaterThan(before.runNs);
  expect(after.waitNs).toBeGreaterThanOrEqual(before.waitNs);
});

describe("a server shows its event loop", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  test("a loop held by code shows in /readyz and /metrics", async () => {
    const held = performance.now();
    while (performance.now() - held < 300); // the server shares this thread
    let readyz = (await server.anonymous().get("/readyz")).body;
    // The monitor's tick after the hold may come just after this request: poll until it is in. The
    // monitor is the process's, so stalls of earlier test files (a server's start) may be in its
    // window already: wait for the hold's lateness, not for any stall.
    const deadline = Date.now() + 10_000;
    while (readyz.event_loop.lateness_max_ms < 200 && Date.now() < deadline) {
      await Bun.sleep(20);
      readyz = (await server.anonymous().get("/readyz")).body;
    }
    expect(readyz.event_loop.stalls).toBeGreaterThanOrEqual(1);
    expect(readyz.event_loop.lateness_max_ms).toBeGreaterThanOrEqual(200);
    expect(readyz.event_loop.samples).toBeGreaterThan(0);
    const { running, waiting_for_cpu, blocked } = readyz.event_loop.stall_ms;
    expect(running + waiting_for_cpu + blocked).toBeGreaterThanOrEqual(200);

    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^mediabox_event_loop_lateness_seconds_bucket\{le="\+Inf"\} [1-9]/m);
    expect(metrics).toMatch(/^mediabox_event_loop_lateness_seconds_bucket\{le="5"\} [1-9]/m);
    const stallSeconds = [...metrics.matchAll(/^mediabox_event_loop_stall_seconds_total\{cause="(\w+)"\} ([\d.e-]+)$/gm)];
    expect(stallSeconds.map((m) => m[1]).sort()).toEqual(["blocked", "running", "waiting_for_cpu"]);
    expect(stallSeconds.reduce((sum, m) => sum + Number(m[2]), 0)).toBeGreaterThanOrEqual(0.2);
  });
});
