/**
 * The scan shared by the in-memory index and its scan threads: the k rows of a scan memory
 * (dot-kernel.ts: rows of `stride` floats after the scratch slots) with the highest dot product
 * with a query, by a min-heap of size k over scores from the WebAssembly kernel, or from a
 * JavaScript loop where the kernel cannot run.
 */
import { ROWS_AT, scoreRows } from "./dot-kernel.ts";

export interface TopK {
  /** Row indexes and their scores, `count` of them, in heap order (not sorted). */
  rows: Int32Array;
  scores: Float64Array;
  count: number;
}

/** The rows of a scan memory: `stride` floats each, the first `dimension` of them used. */
export interface ScanMatrix {
  memory: WebAssembly.Memory;
  dimension: number;
  stride: number;
}

/**
 * Rows from..to (exclusive); `query` must be unit length for cosine. `slot`: the caller's scratch
 * slot in the memory (0 for the event loop's thread, i + 1 for scan thread i).
 */
export function topK(matrix: ScanMatrix, slot: number, from: number, to: number, query: Float32Array, k: number): TopK {
  const size = Math.max(0, Math.min(k, to - from));
  const scores = new Float64Array(size);
  const rows = new Int32Array(size);
  let filled = 0;
  const siftDown = (at: number) => {
    for (;;) {
      const l = 2 * at + 1;
      const r = l + 1;
      let smallest = at;
      if (l < filled && scores[l]! < scores[smallest]!) smallest = l;
      if (r < filled && scores[r]! < scores[smallest]!) smallest = r;
      if (smallest === at) return;
      [scores[at], scores[smallest]] = [scores[smallest]!, scores[at]!];
      [rows[at], rows[smallest]] = [rows[smallest]!, rows[at]!];
      at = smallest;
    }
  };
  const offer = (row: number, score: number) => {
    if (filled < size) {
      scores[filled] = score;
      rows[filled] = row;
      filled += 1;
      if (filled === size) for (let j = (size >> 1) - 1; j >= 0; j--) siftDown(j);
    } else if (size > 0 && score > scores[0]!) {
      scores[0] = score;
      rows[0] = row;
      siftDown(0);
    }
  };
  if (size === 0) return { rows, scores, count: 0 };
  const viaKernel = scoreRows(matrix.memory, matrix.stride, slot, from, to, query, (first, block) => {
    for (let i = 0; i < block.length; i++) offer(first + i, block[i]!);
  });
  if (!viaKernel) {
    const m = new Float32Array(matrix.memory.buffer, ROWS_AT);
    const d = matrix.dimension;
    const q = query;
    for (let row = from; row < to; row++) {
      const o = row * matrix.stride;
      // Four accumulators let the JIT keep independent multiply-adds in flight.
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      let i = 0;
      for (; i + 3 < d; i += 4) {
        s0 += m[o + i]! * q[i]!;
        s1 += m[o + i + 1]! * q[i + 1]!;
        s2 += m[o + i + 2]! * q[i + 2]!;
        s3 += m[o + i + 3]! * q[i + 3]!;
      }
      for (; i < d; i++) s0 += m[o + i]! * q[i]!;
      offer(row, s0 + s1 + s2 + s3);
    }
  }
  return { rows, scores, count: filled };
}
