/** /healthz latency while a bench runs: polled every 20 ms until stopped, then its p50 and p99. */

export interface HealthFigures {
  p50: number;
  p99: number;
  probes: number;
}

export function probeHealth(url: string): { stop(): Promise<HealthFigures> } {
  const times: number[] = [];
  let probing = true;
  const loop = (async () => {
    while (probing) {
      const sent = performance.now();
      await (await fetch(`${url}/healthz`)).text();
      times.push(performance.now() - sent);
      await Bun.sleep(20);
    }
  })();
  return {
    async stop() {
      probing = false;
      await loop.catch(() => {});
      times.sort((a, b) => a - b);
      const at = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))] ?? 0;
      return { p50: at(50), p99: at(99), probes: times.length };
    },
  };
}
