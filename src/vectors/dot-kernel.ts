/**
 * The vector scan's dot products in WebAssembly SIMD (dot-kernel.wat), over a matrix that lives
 * in a shared WebAssembly memory so the scan threads read the same rows. Measured here on
 * 100,000 × 384: 12.7 ms a scan on one core against 33 ms for the JavaScript loop (which stays as
 * the fallback where WebAssembly SIMD is missing). Owns the compiled module, one instance per
 * memory, and the memory's layout: one scratch slot per scanning thread (its query, then a block
 * of scores), then the rows.
 */
import { DOT_KERNEL_WASM } from "./dot-kernel-bytes.ts";

/** Bytes of one scanning thread's scratch slot: its query, then the scores of a block of rows. */
const SLOT_BYTES = 65_536;
/** Where a slot's scores start (a query of up to 8,192 floats comes first). */
const SCORES_AT = 32_768;
/** Rows scored per kernel call (their scores fill the slot's second half). */
export const BLOCK_ROWS = (SLOT_BYTES - SCORES_AT) / 4;
/** Widest row the kernel takes (a query fills the slot's first half). */
export const MAX_KERNEL_STRIDE = SCORES_AT / 4;
/** Scratch slots: the calling thread's and up to seven scan threads'. */
export const SLOTS = 8;
/** Byte offset of row 0 in a scan memory. */
export const ROWS_AT = SLOTS * SLOT_BYTES;
const PAGE = 65_536;

/** Row length in floats: the dimension rounded up to the kernel's eight lanes (padding is zeros). */
export const strideOf = (dimension: number): number => Math.ceil(dimension / 8) * 8;

/** A shared memory for `rows` rows of `stride` floats, behind the scratch slots. */
export function scanMemory(rows: number, stride: number): WebAssembly.Memory {
  const pages = Math.ceil((ROWS_AT + rows * stride * 4) / PAGE);
  // Not growable: its size is its maximum, so it reserves no more address space than it holds;
  // a fuller matrix gets a new memory (memory-scan.ts doubles it).
  return new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
}

type Scores = (matrix: number, query: number, stride: number, from: number, to: number, out: number) => void;

let compiled: WebAssembly.Module | null | undefined;
const instances = new WeakMap<WebAssembly.Memory, Scores>();

function kernelFor(memory: WebAssembly.Memory): Scores | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(Buffer.from(DOT_KERNEL_WASM, "base64"));
    } catch {
      compiled = null; // no WebAssembly SIMD here: the JavaScript loop scans
    }
  }
  if (!compiled) return null;
  let scores = instances.get(memory);
  if (!scores) {
    scores = new WebAssembly.Instance(compiled, { env: { memory } }).exports.scores as Scores;
    instances.set(memory, scores);
  }
  return scores;
}

/**
 * Scores rows from..to of `memory` against `query` in blocks of BLOCK_ROWS, handing each block's
 * scores to `take(firstRow, scores)`, using scratch slot `slot` (one per thread scanning this
 * memory at once). False when the kernel cannot run here (or the rows are too wide): the caller
 * scans in JavaScript.
 */
export function scoreRows(memory: WebAssembly.Memory, stride: number, slot: number, from: number, to: number, query: Float32Array, take: (firstRow: number, scores: Float32Array) => void): boolean {
  if (stride > MAX_KERNEL_STRIDE || slot >= SLOTS) return false;
  const kernel = kernelFor(memory);
  if (!kernel) return false;
  const queryAt = slot * SLOT_BYTES;
  const view = new Float32Array(memory.buffer, queryAt, stride);
  view.fill(0);
  view.set(query.subarray(0, Math.min(query.length, stride)));
  const scores = new Float32Array(memory.buffer, queryAt + SCORES_AT, BLOCK_ROWS);
  for (let first = from; first < to; first += BLOCK_ROWS) {
    const last = Math.min(to, first + BLOCK_ROWS);
    kernel(ROWS_AT, queryAt, stride, first, last, queryAt + SCORES_AT);
    take(first, last - first === BLOCK_ROWS ? scores : scores.subarray(0, last - first));
  }
  return true;
}
