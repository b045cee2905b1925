/**
 * Worker threads that share the in-memory vector scan (memory-scan.ts) of large indexes: the
 * matrix lives in a shared WebAssembly memory, each thread scans a slice of rows (in its own
 * scratch slot of that memory) and returns its top k. Measured here (2 cores, 100,000 × 384,
 * JavaScript loop): 29.7 ms on one thread, 17.7 ms on two. Threads start on
 * first use and never keep the process alive; a thread that fails is dropped and its slice is
 * scanned by the caller, so the scan works (on one core) even where threads cannot start.
 */
import { cpus } from "node:os";
import { WorkerThread } from "../native/worker-thread.ts";
import { topK, type ScanMatrix, type TopK } from "./top-k.ts";
import { SLOTS, scanMemory } from "./dot-kernel.ts";

/** Scan threads at most besides the calling thread (each needs a scratch slot of its own). */
const MAX_THREADS = Math.min(3, SLOTS - 1);

export interface ScanRequest {
  matrix: ScanMatrix;
  /** The thread's scratch slot in the matrix's memory. */
  slot: number;
  from: number;
  to: number;
  query: Float32Array;
  k: number;
}

export interface ScanReply {
  rows: Int32Array;
  scores: Float64Array;
}

type ScanThread = WorkerThread<ScanRequest, ScanReply>;
let threads: ScanThread[] | null = null;

/** The live scan threads, each with its scratch slot: thread i of the pool scans in slot i + 1 (slot 0 is the caller's). */
function available(): { thread: ScanThread; slot: number }[] {
  // Not os.availableParallelism(): Bun reads it from navigator, which pdf.js's legacy build replaces.
  const want = Math.min(MAX_THREADS, cpus().length - 1);
  threads ??= [];
  try {
    for (let i = 0; i < want; i++) {
      // A broken thread is replaced in its place, so no two live threads share a slot.
      if (!threads[i] || threads[i]!.broken) threads[i] = new WorkerThread<ScanRequest, ScanReply>("vectors/scan-worker.ts", "vector scan thread");
    }
  } catch {
    // No worker threads here: the caller scans alone.
  }
  return threads.flatMap((thread, i) => (i < want && !thread.broken ? [{ thread, slot: i + 1 }] : []));
}

let ready: number | null = null;

/**
 * Starts the scan threads and has each scan one row, so the first real query does not pay for
 * their start; resolves to the number of threads a scan now uses (the caller's included).
 */
export async function startScanThreads(): Promise<number> {
  const matrix: ScanMatrix = { memory: scanMemory(1, 8), dimension: 4, stride: 8 };
  const query = new Float32Array([1, 0, 0, 0]);
  const answers = await Promise.all(available().map(({ thread, slot }) => thread.ask({ matrix, slot, from: 0, to: 1, query, k: 1 })));
  ready = 1 + answers.filter((a) => !(a instanceof Error)).length;
  return ready;
}

/** Threads a scan uses, once startScanThreads has run (null before). */
export const scanThreadsReady = (): number | null => ready;

/** topK over rows 0..rows of the scan memory, split between the calling thread and the scan threads. */
export async function parallelTopK(matrix: ScanMatrix, rows: number, query: Float32Array, k: number): Promise<TopK> {
  const helpers = available();
  const share = Math.ceil(rows / (helpers.length + 1));
  const slices = helpers.map(({ thread, slot }, i) => {
    const from = Math.min(rows, (i + 1) * share);
    const to = Math.min(rows, (i + 2) * share);
    return { from, to, reply: from < to ? thread.ask({ matrix, slot, from, to, query, k }) : null };
  });
  const parts: TopK[] = [topK(matrix, 0, 0, Math.min(rows, share), query, k)];
  for (const slice of slices) {
    if (!slice.reply) continue;
    const reply = await slice.reply;
    parts.push(reply instanceof Error ? topK(matrix, 0, slice.from, slice.to, query, k) : { rows: reply.rows, scores: reply.scores, count: reply.rows.length });
  }
  return merge(parts, k);
}

/** The best k of several partial results. */
function merge(parts: TopK[], k: number): TopK {
  const all: { row: number; score: number }[] = [];
  for (const part of parts) for (let i = 0; i < part.count; i++) all.push({ row: part.rows[i]!, score: part.scores[i]! });
  all.sort((a, b) => b.score - a.score);
  const best = all.slice(0, k);
  return { rows: Int32Array.from(best.map((b) => b.row)), scores: Float64Array.from(best.map((b) => b.score)), count: best.length };
}
