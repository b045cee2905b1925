/**
 * Each chunk's stems and how often they occur in it, remembered by chunk id, so that hybrid
 * search's second BM25 pass (bm25.ts) does not split and stem the same candidate chunks query
 * after query: on Cranfield that was ~20 ms of a 100-result query, the largest part of its cost.
 * Owns that memory.
 *
 * A stored chunk's text never changes (a document read again gets new chunks with new ids), so an
 * entry never goes stale; entries of deleted chunks age out as the least recently used. Stems are
 * kept as small integers (one table for all chunks), ~0.8 KB a chunk of 100 distinct stems.
 */
import { words } from "../text/stop-words.ts";
import { stems } from "./keyword-query.ts";

/** Column weights, as search.ts passes them to bm25(chunks_fts, 1.0, 0.5). */
export const CONTENT_WEIGHT = 1.0;
export const HEADINGS_WEIGHT = 0.5;

/** Chunks remembered (the least recently used are dropped first). */
const REMEMBERED_CHUNKS = 20_000;
/** Distinct stems numbered before the numbering (and every entry) starts over. */
const NUMBERED_STEMS = 500_000;

export interface ChunkText {
  /** The chunk's id: the key it is remembered by. */
  id: string;
  content: string;
  /** The chunk's heading hierarchy as stored (a JSON array). */
  headings: string;
}

export interface ChunkTerms {
  /** Numbers of the chunk's distinct stems (see stemNumber). */
  stems: Int32Array;
  /** Occurrences of each, a heading's counting HEADINGS_WEIGHT and the content's CONTENT_WEIGHT. */
  counts: Float32Array;
  /** Words of content and headings together (BM25's document length). */
  length: number;
}

const numbers = new Map<string, number>();
const remembered = new Map<string, ChunkTerms>();

/** The number of a stem some chunk holds, or undefined when no remembered chunk holds it. */
export function stemNumber(stem: string): number | undefined {
  return numbers.get(stem);
}

function numberOf(stem: string): number {
  let n = numbers.get(stem);
  if (n === undefined) numbers.set(stem, (n = numbers.size));
  return n;
}

/** The terms of each chunk, in the order given: remembered ones looked up, the others counted in one batch. */
export function chunkTerms(chunks: ChunkText[]): ChunkTerms[] {
  if (numbers.size > NUMBERED_STEMS) {
    numbers.clear();
    remembered.clear();
  }
  const out: (ChunkTerms | undefined)[] = chunks.map((c) => {
    const terms = remembered.get(c.id);
    if (terms) {
      // Map order is insertion order: re-inserting marks it most recently used.
      remembered.delete(c.id);
      remembered.set(c.id, terms);
    }
    return terms;
  });
  const missing = chunks.flatMap((c, i) => (out[i] ? [] : [{ i, content: words(c.content), headings: c.headings === "[]" ? [] : words(c.headings) }]));
  if (missing.length) {
    const distinct = [...new Set(missing.flatMap((m) => [...m.content, ...m.headings]))];
    const found = stems(distinct);
    const stemOf = new Map(distinct.map((w, k) => [w, numberOf(found[k]!)]));
    for (const m of missing) {
      const counts = new Map<number, number>();
      const count = (list: string[], weight: number) => {
        for (const w of list) {
          const n = stemOf.get(w)!;
          counts.set(n, (counts.get(n) ?? 0) + weight);
        }
      };
      count(m.content, CONTENT_WEIGHT);
      count(m.headings, HEADINGS_WEIGHT);
      const terms: ChunkTerms = { stems: Int32Array.from(counts.keys()), counts: Float32Array.from(counts.values()), length: m.content.length + m.headings.length };
      out[m.i] = terms;
      remembered.set(chunks[m.i]!.id, terms);
    }
    for (const id of remembered.keys()) {
      if (remembered.size <= REMEMBERED_CHUNKS) break;
      remembered.delete(id);
    }
  }
  return out as ChunkTerms[];
}
