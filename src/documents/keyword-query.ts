/**
 * Turns a search query into the terms the chunks' keyword index ranks by (keyword-index.ts, on
 * either database; porter stemming over unicode61 as FTS5 does it, migration 008): each content
 * word an OR-ed term, so BM25 ranks chunks by how many of the rare words they hold.
 *
 * - Stop words are left out (unless the query has nothing else): they match most chunks and rank
 *   nothing.
 * - A word the tokenizer splits ("shock-sound", "VX-4471") gives one term per part, not an exact
 *   phrase: a phrase would miss text that writes the parts apart or differently joined, while
 *   BM25 still ranks a chunk holding every part first.
 * - In a large index, terms found in more than 10% of the chunks are left out too (keeping at
 *   least the rarest one). Their document frequency is read from the index, which holds stems; the stem of each query word is found by the same tokenizer, run over the query
 *   in a scratch in-memory FTS5 table (so JavaScript never has to reimplement the stemmer).
 * - Words are quoted in an FTS5 query: no FTS syntax from the user reaches SQLite.
 */
import { Database } from "bun:sqlite";
import { STOP_WORDS, words as wordsOf } from "../text/stop-words.ts";
import type { KeywordIndex } from "./keyword-index.ts";

const COMMON_TERM_SHARE = 0.1;
const COMMON_TERM_MIN_CHUNKS = 1000;
const MAX_TERMS = 64;

/** Words whose stems are remembered (a library's vocabulary; ~100 bytes each). */
const STEM_CACHE_WORDS = 200_000;

let scratch: { tokens: (texts: readonly (readonly [string, string])[]) => FtsToken[]; cache: Map<string, string> } | null = null;

/** A token as the chunk index's tokenizer makes it: its term (stem), text number (from 1), column and place. */
export interface FtsToken {
  term: string;
  doc: number;
  col: "content" | "headings";
  offset: number;
}

/**
 * Every token of each [content, headings] pair as the chunk index's FTS5 tokenizer makes it, in
 * text and then place order: a scratch in-memory FTS5 table with the chunk index's columns and
 * tokenizer (migration 008), so no JavaScript reimplements its stemmer. The stemmer of queries
 * here and the PostgreSQL keyword index's tokenizer (postgres-keyword-index.ts) both use it.
 */
export function fts5Tokens(texts: readonly (readonly [string, string])[]): FtsToken[] {
  return scratchOf().tokens(texts);
}

/** The index's stem of each word (same tokenizer as the chunk index), remembered per word. */
export function stems(words: string[]): string[] {
  const cache = scratchOf().cache;
  const missing = [...new Set(words.filter((w) => !cache.has(w)))];
  if (missing.length) {
    if (cache.size + missing.length > STEM_CACHE_WORDS) cache.clear();
    const found = missing.map((w) => w);
    const seen = new Set<number>();
    for (const token of fts5Tokens(missing.map((w) => [w, ""] as const))) {
      if (!seen.has(token.doc)) found[token.doc - 1] = token.term;
      seen.add(token.doc);
    }
    missing.forEach((w, i) => cache.set(w, found[i]!));
  }
  return words.map((w) => cache.get(w) ?? w);
}

/** The remembered stem of a word, or undefined (stems() finds and remembers it). */
export function knownStem(word: string): string | undefined {
  return scratchOf().cache.get(word);
}

function scratchOf(): NonNullable<typeof scratch> {
  if (!scratch) {
    const db = new Database(":memory:");
    db.run("CREATE VIRTUAL TABLE scratch USING fts5(content, headings, tokenize = 'porter unicode61 remove_diacritics 2')");
    db.run("CREATE VIRTUAL TABLE scratch_tokens USING fts5vocab(scratch, 'instance')");
    const clear = db.query("DELETE FROM scratch");
    const insert = db.query("INSERT INTO scratch (rowid, content, headings) VALUES (?, ?, ?)");
    const read = db.query<FtsToken, []>("SELECT term, doc, col, offset FROM scratch_tokens ORDER BY doc, col, offset");
    scratch = {
      tokens: (texts) =>
        db.transaction(() => {
          clear.run();
          texts.forEach(([content, headings], i) => insert.run(i + 1, content, headings));
          const tokens = read.all();
          clear.run();
          return tokens;
        })(),
      cache: new Map(),
    };
  }
  return scratch;
}

/** The query's words that count for matching: content words, or every word of an all-stop-word query. */
export function queryWords(text: string): string[] {
  const all = [...new Set(wordsOf(text))];
  const content = all.filter((w) => !STOP_WORDS.has(w));
  return (content.length ? content : all).slice(0, MAX_TERMS);
}

/** A query term as the index knows it: the word typed, its stem, and how many chunks hold the stem. */
export interface KeywordTerm {
  word: string;
  stem: string;
  frequency: number;
}

/** Chunk counts by stem, remembered for one index (see rememberedCounts). */
export interface CountMemo {
  rows: number;
  byStem: Map<string, number>;
}

/** Stems whose counts one memory keeps (it starts over when full). */
const REMEMBERED_STEMS = 50_000;

/** Chunks stored, by the highest chunk number (an index read, where counting rows reads them all). */
async function chunkCount(index: KeywordIndex): Promise<number> {
  return (await index.sql.one<{ n: number | null }>("SELECT max(seq) AS n FROM document_chunks"))?.n ?? 0;
}

/**
 * The chunk counts `memos` remembers for `index`, started over once the index has grown by a
 * tenth (or shrunk) or holds REMEMBERED_STEMS: a count a little stale moves a term's idf by little,
 * while counting reads the word's postings.
 */
export async function rememberedCounts(memos: WeakMap<KeywordIndex, CountMemo>, index: KeywordIndex): Promise<Map<string, number>> {
  const rows = await chunkCount(index);
  let memo = memos.get(index);
  if (!memo || rows > memo.rows * 1.1 || rows < memo.rows || memo.byStem.size >= REMEMBERED_STEMS) memos.set(index, (memo = { rows, byStem: new Map() }));
  return memo.byStem;
}

/** Counts at least this large are remembered: counting reads every posting of the word. */
const REMEMBERED_MIN_CHUNKS = 100;
/** Remembered chunk counts of common stems, by index. */
const common = new WeakMap<KeywordIndex, CountMemo>();

/**
 * How many chunks hold each stem (0 when none). Counting a word reads all its postings (~8 ms a
 * query at 100,000 chunks for words in most of them), so counts of REMEMBERED_MIN_CHUNKS or more
 * are remembered (rememberedCounts), while rare words (whose counts change what matches) are
 * always counted afresh.
 */
export async function documentFrequencies(index: KeywordIndex, stemList: string[]): Promise<Map<string, number>> {
  const remembered = await rememberedCounts(common, index);
  const counted = await index.frequencies(stemList.filter((stem) => !remembered.has(stem)));
  for (const [stem, n] of counted) if (n >= REMEMBERED_MIN_CHUNKS) remembered.set(stem, n);
  return new Map(stemList.map((stem) => [stem, remembered.get(stem) ?? counted.get(stem)!]));
}

/** Most chunks a term may occur in and still rank anything (see the module comment). */
export async function commonTermLimit(index: KeywordIndex): Promise<number> {
  return Math.max((await chunkCount(index)) * COMMON_TERM_SHARE, COMMON_TERM_MIN_CHUNKS);
}

/** The query's terms that take part in keyword matching, rarest first; empty when none is in the index. */
export async function keywordTerms(index: KeywordIndex, text: string): Promise<KeywordTerm[]> {
  const words = queryWords(text);
  if (!words.length) return [];
  await index.ready();
  const stemmed = stems(words);
  const frequencies = await documentFrequencies(index, [...new Set(stemmed)]);
  const byStem = new Map<string, KeywordTerm>();
  words.forEach((word, i) => {
    const stem = stemmed[i]!;
    if (!byStem.has(stem)) byStem.set(stem, { word, stem, frequency: frequencies.get(stem)! });
  });
  const scored = [...byStem.values()].filter((w) => w.frequency > 0).sort((a, b) => a.frequency - b.frequency);
  const limit = await commonTermLimit(index);
  return scored.filter((w, i) => i === 0 || w.frequency <= limit);
}

/**
 * The FTS5 query OR-ing `terms`, each written `repeats` times (default once): FTS5's bm25() sums
 * one contribution per phrase of the query, so a term written twice counts twice.
 */
export function matchQuery(terms: readonly { word: string; repeats?: number }[]): string {
  const phrases: string[] = [];
  for (const t of terms) for (let i = 0; i < (t.repeats ?? 1); i++) phrases.push(`"${t.word.replaceAll('"', '""')}"`);
  return phrases.join(" OR ");
}
