/**
 * A worker thread that polls a server's /healthz every ~20 ms until told to stop, then answers
 * with the latencies (ms). On its own thread, so the bench's own work (generating, hashing and
 * sending a 100 MB file) never delays a probe and counts as the server's stall.
 *
 *   const prober = new Worker(new URL("./healthz-prober.ts", import.meta.url));
 *   prober.postMessage({ url }); ... prober.postMessage("stop") → message: number[]
 *   prober.postMessage({ url, times: true }); ... → message: { latencies: number[]; at: number[] }
 *   (`at`: each probe's start, Date.now() milliseconds)
 */
const worker = globalThis as unknown as Worker;

let stopped = false;
worker.onmessage = async (event: MessageEvent<{ url: string; times?: boolean } | "stop">) => {
  if (event.data === "stop") {
    stopped = true;
    return;
  }
  const { url, times } = event.data;
  const latencies: number[] = [];
  const at: number[] = [];
  while (!stopped) {
    const started = performance.now();
    at.push(Date.now());
    const res = await fetch(`${url}/healthz`);
    await res.arrayBuffer();
    latencies.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
    await Bun.sleep(Math.max(0, 20 - (performance.now() - started)));
  }
  worker.postMessage(times ? { latencies, at } : latencies);
};
