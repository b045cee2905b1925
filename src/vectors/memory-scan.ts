/**
 * An in-memory copy of one organization's vectors in one vector space, scanned by a SIMD
 * dot-product kernel (dot-kernel.ts, top-k.ts). sqlite-vec stays the store of record (and answers
 * everything else); this copy exists because a vec0 brute-force query costs ~0.5 µs per row
 * whatever the vector size (about 55-90 ms at 100,000 rows here) while the kernel scans 100,000
 * 384-d unit vectors in ~13 ms on one core (the JavaScript loop it replaced: ~33 ms), split over
 * the scan threads from PARALLEL_MIN_ROWS rows (scan-threads.ts). Loaded on the first query of
 * (space, organization) and kept in step by the space's writes in this process. Memory: 4 bytes x
 * the dimension rounded up to 8 per vector (154 MB per 100,000 384-d chunks), in a shared
 * WebAssembly memory the scan threads read.
 */
import { parallelTopK } from "./scan-threads.ts";
import { topK, type ScanMatrix, type TopK } from "./top-k.ts";
import { ROWS_AT, scanMemory, strideOf } from "./dot-kernel.ts";

/** Below this many rows a single-threaded scan takes under ~5 ms: not worth a thread hop. */
const PARALLEL_MIN_ROWS = 20_000;

export class MemoryScan {
  private ids: string[] = [];
  private readonly rows = new Map<string, number>();
  private readonly stride: number;
  private memory: WebAssembly.Memory;
  /** Rows the memory holds. */
  private capacity: number;
  /** The rows as floats (a view of the memory, renewed when the memory is replaced). */
  private matrix: Float32Array;
  /** Bumped by every write, so a scan that awaited threads can tell its rows moved meanwhile. */
  private version = 0;

  constructor(readonly dimension: number, entries: Iterable<[string, Float32Array]> = []) {
    this.stride = strideOf(dimension);
    this.capacity = 1024;
    this.memory = scanMemory(this.capacity, this.stride);
    this.matrix = new Float32Array(this.memory.buffer, ROWS_AT);
    for (const [id, vector] of entries) this.set(id, vector);
  }

  get size(): number {
    return this.ids.length;
  }

  set(id: string, vector: Float32Array): void {
    this.version += 1;
    let row = this.rows.get(id);
    if (row === undefined) {
      row = this.ids.length;
      if (row >= this.capacity) {
        this.capacity *= 2;
        const grown = scanMemory(this.capacity, this.stride);
        const matrix = new Float32Array(grown.buffer, ROWS_AT);
        matrix.set(this.matrix.subarray(0, row * this.stride));
        [this.memory, this.matrix] = [grown, matrix];
      }
      this.ids.push(id);
      this.rows.set(id, row);
    }
    this.matrix.set(vector.subarray(0, this.dimension), row * this.stride);
  }

  delete(id: string): void {
    const row = this.rows.get(id);
    if (row === undefined) return;
    this.version += 1;
    // Move the last row into the hole so the matrix stays packed.
    const last = this.ids.length - 1;
    if (row !== last) {
      const lastId = this.ids[last]!;
      this.matrix.copyWithin(row * this.stride, last * this.stride, (last + 1) * this.stride);
      this.ids[row] = lastId;
      this.rows.set(lastId, row);
    }
    this.ids.pop();
    this.rows.delete(id);
  }

  /** The rows as the scan reads them (the memory is replaced when it grows). */
  private scanMatrix(): ScanMatrix {
    return { memory: this.memory, dimension: this.dimension, stride: this.stride };
  }

  /** Cosine similarity of one stored row to `query`, or null when the id has no row. */
  similarity(id: string, query: Float32Array): number | null {
    const row = this.rows.get(id);
    if (row === undefined) return null;
    let dot = 0;
    for (let k = 0, at = row * this.stride; k < this.dimension; k++) dot += this.matrix[at + k]! * query[k]!;
    return dot;
  }

  /** The k rows with the highest cosine similarity to `query` (vectors are stored unit-length). */
  async nearest(query: Float32Array, k: number): Promise<{ id: string; similarity: number }[]> {
    const d = this.dimension;
    let norm = 0;
    for (let i = 0; i < d; i++) norm += query[i]! * query[i]!;
    const q = query.map((v) => v / (Math.sqrt(norm) || 1));
    const n = this.ids.length;
    let best: TopK;
    if (n >= PARALLEL_MIN_ROWS) {
      const version = this.version;
      best = await parallelTopK(this.scanMatrix(), n, q, k);
      // Rows written while the threads scanned may have moved: answer from a scan of the current rows.
      if (this.version !== version) best = topK(this.scanMatrix(), 0, 0, this.ids.length, q, k);
    } else {
      best = topK(this.scanMatrix(), 0, 0, n, q, k);
    }
    const out: { id: string; similarity: number }[] = [];
    for (let j = 0; j < best.count; j++) out.push({ id: this.ids[best.rows[j]!]!, similarity: best.scores[j]! });
    return out.sort((a, b) => b.similarity - a.similarity);
  }
}
