/**
 * The scan kernel shared by the in-memory index and its scan threads: the k rows of a packed
 * row-major matrix with the highest dot product with a query, by a min-heap of size k.
 */
export interface TopK {
  /** Row indexes and their scores, `count` of them, in heap order (not sorted). */
  rows: Int32Array;
  scores: Float64Array;
  count: number;
}

/** Rows from..to (exclusive) of `matrix`, `dimension` floats each; `query` must be unit length for cosine. */
export function topK(matrix: Float32Array, dimension: number, from: number, to: number, query: Float32Array, k: number): TopK {
  const d = dimension;
  const m = matrix;
  const q = query;
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
  for (let row = from; row < to; row++) {
    const o = row * d;
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
    const score = s0 + s1 + s2 + s3;
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
  }
  return { rows, scores, count: filled };
}
