/**
 * A server's own account of its event loop over a stretch of a bench, read from GET /metrics
 * (src/native/event-loop-monitor.ts): read once before and once after, the difference says how
 * late the loop ran meanwhile (p99 to the histogram's bucket) and what its stalls were (code
 * running, waiting for a core, blocked in a system call). It tells a slow /healthz probe caused
 * by the server's code from one caused by the machine.
 */

export interface EventLoopReading {
  /** Cumulative tick counts at or under each bucket's bound (seconds; Infinity last). */
  buckets: [number, number][];
  stallSeconds: Record<string, number>;
}

export async function readEventLoop(url: string): Promise<EventLoopReading> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets: [number, number][] = [];
  const stallSeconds: Record<string, number> = {};
  for (const line of text.split("\n")) {
    const bucket = /^mediabox_event_loop_lateness_seconds_bucket\{le="([^"]+)"\} (\S+)$/.exec(line);
    if (bucket) buckets.push([bucket[1] === "+Inf" ? Infinity : Number(bucket[1]), Number(bucket[2])]);
    const stall = /^mediabox_event_loop_stall_seconds_total\{cause="(\w+)"\} (\S+)$/.exec(line);
    if (stall) stallSeconds[stall[1]!] = Number(stall[2]);
  }
  return { buckets, stallSeconds };
}

/** "lateness p99 <= 25 ms over 1234 ticks; stalls: running 1.2 s, waiting_for_cpu 3.4 s, blocked 0.1 s" between two readings. */
export function describeEventLoop(before: EventLoopReading, after: EventLoopReading): string {
  if (!after.buckets.length) return "not reported (a server without the event-loop monitor)";
  const counts = after.buckets.map(([le, n], i) => [le, n - (before.buckets[i]?.[1] ?? 0)] as const);
  const ticks = counts.at(-1)?.[1] ?? 0;
  const p99 = counts.find(([, n]) => n >= 0.99 * ticks)?.[0] ?? NaN;
  const bound = Number.isFinite(p99) ? `<= ${p99 * 1000} ms` : "> 5 s";
  const stalls = Object.entries(after.stallSeconds).map(([cause, s]) => `${cause} ${(s - (before.stallSeconds[cause] ?? 0)).toFixed(1)} s`);
  return `lateness p99 ${bound} over ${ticks} ticks of 20 ms; stalls (50 ms or more late): ${stalls.join(", ")}`;
}
