/** A scan thread (scan-threads.ts): runs topK over its share of a shared matrix. */
import { topK } from "./top-k.ts";
import type { ScanReply, ScanRequest } from "./scan-threads.ts";

declare const self: Worker;

self.onmessage = (event: MessageEvent<ScanRequest>) => {
  const { id, buffer, dimension, from, to, query, k } = event.data;
  const result = topK(new Float32Array(buffer), dimension, from, to, query, k);
  self.postMessage({ id, rows: result.rows.subarray(0, result.count), scores: result.scores.subarray(0, result.count) } satisfies ScanReply);
};
