/**
 * BM25 of a weighted query over given chunks, computed as FTS5's bm25() computes it over the
 * chunk index (k1 1.2, b 0.75, the content column weighted 1 and headings 0.5, FTS5's idf with
 * its floor, document length = the row's tokens over both columns, the index's own row count and
 * average length). Owns that arithmetic; keyword-query.ts owns the stemmer it counts terms with.
 *
 * Why not let FTS5 score an expanded query: FTS5 has no per-term weights, and writing a term as
 * often as its weight says made the query ~80 phrases long, which FTS5 scored at 15-44 ms a
 * query on a 2,000-chunk index (busy machine), growing with the index. Here the cost is the
 * candidates' words (they are in memory) and one vocabulary lookup per term.
 */
import type { Database } from "bun:sqlite";
import { words } from "../text/stop-words.ts";
import { knownStem, stems } from "./keyword-query.ts";

const K1 = 1.2;
const B = 0.75;
/** Column weights, as search.ts passes them to bm25(chunks_fts, 1.0, 0.5). */
export const CONTENT_WEIGHT = 1.0;
export const HEADINGS_WEIGHT = 0.5;

export interface IndexTotals {
  rows: number;
  /** Average tokens per row, both columns together. */
  averageLength: number;
}

/** A SQLite varint (big-endian groups of 7 bits, the ninth byte whole), as FTS5 writes them. */
function readVarint(bytes: Uint8Array, at: { p: number }): number {
  let v = 0;
  for (let i = 0; i < 9; i++) {
    const c = bytes[at.p++] ?? 0;
    if (i === 8) return v * 256 + c;
    v = v * 128 + (c & 0x7f);
    if (!(c & 0x80)) return v;
  }
  return v;
}

/**
 * The chunk index's row count and average row length, from FTS5's own averages record (row 1 of
 * chunks_fts_data: the row count, then each column's total tokens, as varints), so the scores
 * use the very statistics bm25() uses.
 */
export function indexTotals(db: Database): IndexTotals {
  const row = db.query<{ block: Uint8Array }, []>("SELECT block FROM chunks_fts_data WHERE id = 1").get();
  if (!row) return { rows: 0, averageLength: 1 };
  const at = { p: 0 };
  const rows = readVarint(row.block, at);
  let tokens = 0;
  while (at.p < row.block.length) tokens += readVarint(row.block, at);
  return { rows, averageLength: rows > 0 ? tokens / rows || 1 : 1 };
}

/** FTS5's idf: ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6 for terms in half the rows or more. */
export function idf(rows: number, withTerm: number): number {
  const v = Math.log((rows - withTerm + 0.5) / (withTerm + 0.5));
  return v <= 0 ? 1e-6 : v;
}

export interface ScoredText {
  content: string;
  headings: string;
}

/** A term of a weighted query: its stem, weight (1 = an ordinary query term) and how many chunks hold it. */
export interface QueryTerm {
  stem: string;
  weight: number;
  frequency: number;
}

/** BM25 of each text for the weighted query `terms`, in the order given; 0 where no term occurs. */
export function weightedBm25(db: Database, terms: QueryTerm[], texts: ScoredText[]): number[] {
  if (!terms.length || !texts.length) return texts.map(() => 0);
  const totals = indexTotals(db);
  const byStem = new Map(terms.map((t) => [t.stem, { weight: t.weight * idf(totals.rows, t.frequency), f: 0 }]));
  const seen = new Set<string>();
  const pending: { text: number; list: string[]; columnWeight: number }[] = [];
  /** Each word met in this call: its query term, or null when it is none (one lookup a word after the first). */
  const termOf = new Map<string, { weight: number; f: number } | null>();
  const scores = texts.map((text, i) => {
    const content = words(text.content);
    const headings = text.headings === "[]" ? [] : words(text.headings);
    for (const t of byStem.values()) t.f = 0;
    // One pass over the words; a word the stemmer has not met yet is stemmed with the others
    // afterwards (in one batch) and its text counted again.
    let complete = true;
    const count = (list: string[], columnWeight: number) => {
      for (const w of list) {
        let t = termOf.get(w);
        if (t === undefined) {
          const stem = knownStem(w);
          if (stem === undefined) {
            complete = false;
            seen.add(w);
            continue;
          }
          t = byStem.get(stem) ?? null;
          termOf.set(w, t);
        }
        if (t) t.f += columnWeight;
      }
    };
    count(content, CONTENT_WEIGHT);
    count(headings, HEADINGS_WEIGHT);
    if (!complete) {
      pending.push({ text: i, list: content, columnWeight: CONTENT_WEIGHT }, { text: i, list: headings, columnWeight: HEADINGS_WEIGHT });
      return -1;
    }
    return score(byStem, norm(content.length + headings.length, totals.averageLength));
  });
  if (pending.length) {
    const batch = [...seen];
    const found = stems(batch);
    const fresh = new Map(batch.map((w, i) => [w, found[i]!]));
    for (let k = 0; k < pending.length; k += 2) {
      const [content, headings] = [pending[k]!, pending[k + 1]!];
      for (const t of byStem.values()) t.f = 0;
      for (const part of [content, headings]) {
        for (const w of part.list) {
          const t = byStem.get(knownStem(w) ?? fresh.get(w) ?? w);
          if (t) t.f += part.columnWeight;
        }
      }
      scores[content.text] = score(byStem, norm(content.list.length + headings.list.length, totals.averageLength));
    }
  }
  return scores;
}

/** BM25's length normalization: k1 x (1 - b + b x length / average length). */
function norm(length: number, averageLength: number): number {
  return K1 * (1 - B + (B * length) / averageLength);
}

function score(byStem: Map<string, { weight: number; f: number }>, lengthNorm: number): number {
  let sum = 0;
  for (const t of byStem.values()) if (t.f > 0) sum += t.weight * ((t.f * (K1 + 1)) / (t.f + lengthNorm));
  return sum;
}
