/**
 * Query expansion by pseudo-relevance feedback (RM3) for hybrid search: the words that the best
 * documents of a first ranking share are added to the keyword query, weighted, so chunks that
 * say the same thing in other words ("drag" for "resistance", "wing" for "airfoil") are found
 * and ranked. Owns choosing the terms and their weights; search.ts runs the queries.
 *
 * RM3 (Abdul-Jaleel et al., 2004, as in Anserini/Pyserini):
 * - relevance model: p(t|R) = sum over the feedback chunks d of p(t|d) x w(d), where p(t|d) is
 *   the term's share of the chunk's words and w(d) the chunk's fused score over the feedback
 *   set's total (a better match counts more);
 * - the FEEDBACK_TERMS most probable terms are kept and their weights normalized;
 * - the query becomes ORIGINAL_WEIGHT x the original terms (equal shares) + the rest x p(t|R).
 * The defaults are Anserini's (10 feedback documents, lambda 0.5) but with 20 terms instead of
 * 10, which did better on both halves of the Cranfield queries (odd and even ids).
 *
 * FTS5 has no per-term weights: its bm25() adds one contribution per phrase of the query, so a
 * term is written as many times as its weight says, an original term REPEATS_PER_QUERY_TERM
 * times. Rounding cost nothing measurable at 4 (nDCG@10 within 0.001 of exact weights on
 * Cranfield) and keeps the query short. An original term is never dropped; an expansion term
 * that rounds to no repeat is.
 *
 * Expansion terms leave out stop words, numbers, one-letter words and terms too common to rank
 * (the keyword query's own rule, keyword-query.ts).
 */
import type { Database } from "bun:sqlite";
import { STOP_WORDS, words as wordsOf } from "../text/stop-words.ts";
import { commonTermLimit, documentFrequencies, stems, type KeywordTerm } from "./keyword-query.ts";

/** Documents of the first ranking the feedback is taken from (their best chunk each). */
export const FEEDBACK_DOCUMENTS = 10;
/** Terms of the relevance model added to the query. */
export const FEEDBACK_TERMS = 20;
/** Share of the expanded query's weight that stays with the original terms (RM3's lambda). */
export const ORIGINAL_WEIGHT = 0.5;
/** Times an original term is written in the expanded query; expansion terms get proportionally fewer. */
export const REPEATS_PER_QUERY_TERM = 4;
/** Candidate terms looked up per term kept (some are too common to keep). */
const CANDIDATES_PER_TERM = 3;
/** Most phrases in the expanded query (FTS5 reads each phrase's postings). */
const MAX_PHRASES = 160;

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
  /** Times the term is written in the FTS query. */
  repeats: number;
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

/**
 * RM3: the original terms with ORIGINAL_WEIGHT shared equally, plus the relevance model with the
 * rest, each term's weight turned into repeats (an original term REPEATS_PER_QUERY_TERM times).
 */
export function expandedTerms(
  original: Pick<KeywordTerm, "word" | "stem">[],
  model: Map<string, { word: string; p: number }>,
  originalWeight = ORIGINAL_WEIGHT,
): WeightedTerm[] {
  if (!original.length) return [];
  const lambda = model.size ? originalWeight : 1;
  const terms = new Map<string, WeightedTerm>();
  for (const t of original) terms.set(t.stem, { word: t.word, stem: t.stem, weight: lambda / original.length, repeats: 0, original: true });
  for (const [stem, { word, p }] of model) {
    const t = terms.get(stem);
    if (t) t.weight += (1 - lambda) * p;
    else terms.set(stem, { word, stem, weight: (1 - lambda) * p, repeats: 0, original: false });
  }
  const unit = lambda / original.length / REPEATS_PER_QUERY_TERM;
  const out: WeightedTerm[] = [];
  let phrases = 0;
  // Originals first (never dropped), then expansion terms by weight until the phrase budget is spent.
  const ordered = [...terms.values()].sort((a, b) => Number(b.original) - Number(a.original) || b.weight - a.weight);
  for (const t of ordered) {
    const repeats = t.original ? Math.max(REPEATS_PER_QUERY_TERM, Math.round(t.weight / unit)) : Math.round(t.weight / unit);
    if (repeats <= 0 || (!t.original && phrases + repeats > MAX_PHRASES)) continue;
    phrases += repeats;
    out.push({ ...t, repeats });
  }
  return out;
}

/** The feedback chunks' words and stems (the index's stemmer, so stems match the index's terms). */
export function feedbackChunks(chunks: { content: string; score: number }[]): FeedbackChunk[] {
  const perChunk = chunks.map((c) => wordsOf(c.content));
  const distinct = [...new Set(perChunk.flat())];
  const stemmed = stems(distinct);
  const stemOf = new Map(distinct.map((w, i) => [w, stemmed[i]!]));
  return chunks.map((c, i) => ({ words: perChunk[i]!, stems: perChunk[i]!.map((w) => stemOf.get(w)!), score: c.score }));
}

/** The expanded query's terms for `original` given the first ranking's best chunks (best first). */
export function expandQuery(db: Database, original: KeywordTerm[], best: { content: string; score: number }[]): WeightedTerm[] {
  const feedback = feedbackChunks(best.slice(0, FEEDBACK_DOCUMENTS));
  const stopStems = new Set(feedback.flatMap((f) => f.stems.filter((_, i) => STOP_WORDS.has(f.words[i]!))));
  const plausible = (s: string) => s.length > 1 && !/^\p{N}+$/u.test(s) && !stopStems.has(s);
  // Document frequencies cost a vocabulary lookup each (~0.1 ms): only the most probable
  // candidates are looked up, enough to fill the model after the too-common ones are dropped.
  const candidates = [...relevanceModel(feedback, plausible, FEEDBACK_TERMS * CANDIDATES_PER_TERM).keys()];
  const frequencies = documentFrequencies(db, candidates);
  const limit = commonTermLimit(db);
  const eligible = (stem: string) => {
    const n = frequencies.get(stem);
    return n !== undefined && n > 0 && n <= limit;
  };
  return expandedTerms(original, relevanceModel(feedback, eligible));
}
