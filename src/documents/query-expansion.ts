/**
 * Query expansion by pseudo-relevance feedback (RM3) for hybrid search: the words that the best
 * documents of a first ranking share are added to the keyword query, weighted, so chunks that
 * say the same thing in other words ("drag" for "resistance", "wing" for "airfoil") are found
 * and ranked. Owns choosing the terms and their weights; search.ts runs the queries.
 *
 * RM3 (Abdul-Jaleel et al., 2004, as in Anserini/Pyserini):
 * - relevance model: p(t|R) = sum over the feedback documents d of p(t|d) x w(d), where p(t|d)
 *   is the term's share of the document's words (those of its candidate chunks) and w(d) its
 *   fused score over the feedback set's total (a better match counts more);
 * - the FEEDBACK_TERMS most probable terms are kept and their weights normalized;
 * - the query becomes ORIGINAL_WEIGHT x the original terms (equal shares) + the rest x p(t|R).
 * The defaults are Anserini's (10 feedback documents, lambda 0.5) but with 20 terms instead of
 * 10, which did better on both halves of the Cranfield queries (odd and even ids).
 *
 * The expanded query is scored by bm25.ts over the first ranking's best chunks (FTS5 has no
 * per-term weights); an original term counts 1 there, an expansion term its weight relative to
 * an original term's. An original term is never dropped.
 *
 * Expansion terms leave out stop words, numbers, one-letter words and terms too common to rank
 * (in more than 1,000 chunks: the keyword query's own rule up to 10,000 chunks, stricter above).
 */
import { STOP_WORDS, words as wordsOf } from "../text/stop-words.ts";
import type { KeywordIndex } from "./keyword-index.ts";
import { commonTermLimit, rememberedCounts, stems, type CountMemo, type KeywordTerm } from "./keyword-query.ts";

/** Documents of the first ranking the feedback is taken from. */
export const FEEDBACK_DOCUMENTS = 10;
/** Terms of the relevance model added to the query. */
export const FEEDBACK_TERMS = 20;
/** Share of the expanded query's weight that stays with the original terms (RM3's lambda). */
export const ORIGINAL_WEIGHT = 0.5;
/**
 * Most chunks an added term may occur in (the typed words' limit is 10% of the index): counting
 * a word's chunks reads its postings, and at 100,000 chunks twenty words each in 10,000 of them
 * cost ~20 ms a query, for words whose low idf adds little. Equal to the typed words' limit up
 * to 10,000 chunks (Cranfield's figures are unaffected).
 */
const EXPANSION_TERM_MAX_CHUNKS = 1000;
/** Most candidate terms looked up per term kept (some are too common to keep). */
const MAX_LOOKUPS_PER_TERM = 3;

/** One feedback chunk: its words' stems (all of them, stop words included: they count in its length) and its score. */
export interface FeedbackChunk {
  stems: string[];
  words: string[];
  score: number;
}

export interface WeightedTerm {
  /** A word of the text that has this stem (what the FTS query is written with). */
  word: string;
  stem: string;
  /** Share of the expanded query (all terms sum to 1). */
  weight: number;
  /** Weight in the BM25 of the expanded query: the share relative to an original term's (an original term without feedback: 1). */
  bm25Weight: number;
  /** Chunks holding the stem. */
  frequency: number;
  /** True for a term of the query as typed. */
  original: boolean;
}

/**
 * RM1: the FEEDBACK_TERMS most probable terms of the feedback chunks, weights summing to 1.
 * `eligible` says which stems may be added (not stop words, numbers or too common).
 */
export function relevanceModel(feedback: FeedbackChunk[], eligible: (stem: string) => boolean, size = FEEDBACK_TERMS): Map<string, { word: string; p: number }> {
  const total = feedback.reduce((sum, f) => sum + Math.max(0, f.score), 0);
  const model = new Map<string, { word: string; p: number }>();
  for (const chunk of feedback) {
    if (!chunk.stems.length) continue;
    const docWeight = total > 0 ? Math.max(0, chunk.score) / total : 1 / feedback.length;
    const counts = new Map<string, { word: string; n: number }>();
    chunk.stems.forEach((stem, i) => {
      const c = counts.get(stem);
      if (c) c.n++;
      else counts.set(stem, { word: chunk.words[i]!, n: 1 });
    });
    for (const [stem, { word, n }] of counts) {
      if (!eligible(stem)) continue;
      const entry = model.get(stem) ?? { word, p: 0 };
      entry.p += (n / chunk.stems.length) * docWeight;
      model.set(stem, entry);
    }
  }
  const kept = [...model.entries()].sort((a, b) => b[1].p - a[1].p || (a[0] < b[0] ? -1 : 1)).slice(0, size);
  const sum = kept.reduce((s, [, e]) => s + e.p, 0);
  return new Map(sum > 0 ? kept.map(([stem, e]) => [stem, { word: e.word, p: e.p / sum }]) : []);
}

/** RM3: the original terms with ORIGINAL_WEIGHT shared equally, plus the relevance model with the rest; originals first. */
export function expandedTerms(
  original: KeywordTerm[],
  model: Map<string, { word: string; p: number; frequency?: number }>,
  originalWeight = ORIGINAL_WEIGHT,
): WeightedTerm[] {
  if (!original.length) return [];
  const lambda = model.size ? originalWeight : 1;
  const share = lambda / original.length;
  const terms = new Map<string, WeightedTerm>();
  for (const t of original) terms.set(t.stem, { word: t.word, stem: t.stem, weight: share, bm25Weight: 1, frequency: t.frequency, original: true });
  for (const [stem, { word, p, frequency }] of model) {
    const t = terms.get(stem) ?? { word, stem, weight: 0, bm25Weight: 0, frequency: frequency ?? 0, original: false };
    t.weight += (1 - lambda) * p;
    t.bm25Weight = t.weight / share;
    terms.set(stem, t);
  }
  return [...terms.values()].sort((a, b) => Number(b.original) - Number(a.original) || b.weight - a.weight);
}

/** The feedback chunks' words and stems (the index's stemmer, so stems match the index's terms). */
export function feedbackChunks(chunks: { content: string; score: number }[]): FeedbackChunk[] {
  const perChunk = chunks.map((c) => wordsOf(c.content));
  const distinct = [...new Set(perChunk.flat())];
  const stemmed = stems(distinct);
  const stemOf = new Map(distinct.map((w, i) => [w, stemmed[i]!]));
  return chunks.map((c, i) => ({ words: perChunk[i]!, stems: perChunk[i]!.map((w) => stemOf.get(w)!), score: c.score }));
}

/** Counted chunks of candidate terms (capped, see KeywordIndex.cappedFrequency), by index: the same words come back query after query. */
const counted = new WeakMap<KeywordIndex, CountMemo>();

/** The expanded query's terms for `original` given the first ranking's best chunks (best first). */
export async function expandQuery(index: KeywordIndex, original: KeywordTerm[], best: { content: string; score: number }[]): Promise<WeightedTerm[]> {
  const feedback = feedbackChunks(best.slice(0, FEEDBACK_DOCUMENTS));
  const stopStems = new Set(feedback.flatMap((f) => f.stems.filter((_, i) => STOP_WORDS.has(f.words[i]!))));
  const plausible = (s: string) => s.length > 1 && !/^\p{N}+$/u.test(s) && !stopStems.has(s);
  // Document frequencies cost an index read each, counted only up to the limit (more would be
  // wasted on words about to be dropped): candidates are looked up most probable first, only
  // until the model is full (typed words' are known already).
  const candidates = relevanceModel(feedback, plausible, FEEDBACK_TERMS * MAX_LOOKUPS_PER_TERM);
  const frequencies = new Map(original.map((t) => [t.stem, t.frequency]));
  const limit = Math.min(await commonTermLimit(index), EXPANSION_TERM_MAX_CHUNKS);
  const kept = new Set<string>();
  const remembered = await rememberedCounts(counted, index);
  for (const [stem, { word }] of candidates) {
    if (kept.size >= FEEDBACK_TERMS) break;
    if (!frequencies.has(stem)) {
      let n = remembered.get(stem);
      if (n === undefined) remembered.set(stem, (n = await index.cappedFrequency({ word, stem }, limit)));
      frequencies.set(stem, n);
    }
    const n = frequencies.get(stem)!;
    if (n > 0 && n <= limit) kept.add(stem);
  }
  const eligible = (stem: string) => kept.has(stem);
  const model = relevanceModel(feedback, eligible);
  return expandedTerms(original, new Map([...model].map(([stem, e]) => [stem, { ...e, frequency: frequencies.get(stem)! }])));
}
