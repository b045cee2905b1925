/** A scan thread (scan-threads.ts): runs topK over its share of a shared scan memory, in its own scratch slot. */
import { serveRequests } from "../native/worker-thread.ts";
import { topK } from "./top-k.ts";
import type { ScanReply, ScanRequest } from "./scan-threads.ts";

serveRequests<ScanRequest, ScanReply>(({ matrix, slot, from, to, query, k }) => {
  const result = topK(matrix, slot, from, to, query, k);
  return { reply: { rows: result.rows.subarray(0, result.count), scores: result.scores.subarray(0, result.count) } };
});
