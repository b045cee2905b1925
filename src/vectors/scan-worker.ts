/** A scan thread (scan-threads.ts): runs topK over its share of a shared matrix. */
import { serveRequests } from "../native/worker-thread.ts";
import { topK } from "./top-k.ts";
import type { ScanReply, ScanRequest } from "./scan-threads.ts";

serveRequests<ScanRequest, ScanReply>(({ buffer, dimension, from, to, query, k }) => {
  const result = topK(new Float32Array(buffer), dimension, from, to, query, k);
  return { reply: { rows: result.rows.subarray(0, result.count), scores: result.scores.subarray(0, result.count) } };
});
