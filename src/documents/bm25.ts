/**
 * BM25 of a weighted query over given chunks, computed as FTS5's bm25() computes it over the
 * chunk index (k1 1.2, b 0.75, the content column weighted 1 and headings 0.5, FTS5's idf with
 * its floor, document length = the row's tokens over both columns, the index's own row count and
 * average length: KeywordIndex.totals()). Owns that arithmetic; chunk-terms.ts counts (and
 * remembers) each chunk's stems.
 *
 * Why not let FTS5 score an expanded query: FTS5 has no per-term weights, and writing a term as
 * often as its weight says made the query ~80 phrases long, which FTS5 scored at 15-44 ms a
 * query on a 2,000-chunk index (busy machine), growing with the index. Here the cost is one
 * lookup per distinct stem of each candidate chunk.
 */
import { chunkTerms, stemNumber, type ChunkText } from "./chunk-terms.ts";

const K1 = 1.2;
const B = 0.75;

export interface IndexTotals {
  rows: number;
  /** Average tokens per row, both columns together. */
  averageLength: number;
}

/** FTS5's idf: ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6 for terms in half the rows or more. */
export function idf(rows: number, withTerm: number): number {
  const v = Math.log((rows - withTerm + 0.5) / (withTerm + 0.5));
  return v <= 0 ? 1e-6 : v;
}

/** A term of a weighted query: its stem, weight (1 = an ordinary query term) and how many chunks hold it. */
export interface QueryTerm {
  stem: string;
  weight: number;
  frequency: number;
}

/** BM25 of each chunk for the weighted query `terms`, in the order given; 0 where no term occurs. */
export function weightedBm25(totals: IndexTotals, terms: QueryTerm[], chunks: ChunkText[]): number[] {
  if (!terms.length || !chunks.length) return chunks.map(() => 0);
  const counted = chunkTerms(chunks);
  // After chunkTerms: every stem the chunks hold has its number now.
  const weightOf = new Map<number, number>();
  for (const t of terms) {
    const n = stemNumber(t.stem);
    if (n !== undefined) weightOf.set(n, (weightOf.get(n) ?? 0) + t.weight * idf(totals.rows, t.frequency));
  }
  return counted.map((c) => {
    const lengthNorm = norm(c.length, totals.averageLength);
    let sum = 0;
    for (let i = 0; i < c.stems.length; i++) {
      const weight = weightOf.get(c.stems[i]!);
      if (weight === undefined) continue;
      const f = c.counts[i]!;
      sum += weight * ((f * (K1 + 1)) / (f + lengthNorm));
    }
    return sum;
  });
}

/** BM25's length normalization: k1 x (1 - b + b x length / average length). */
function norm(length: number, averageLength: number): number {
  return K1 * (1 - B + (B * length) / averageLength);
}
