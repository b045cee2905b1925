/**
 * Turns a search query into the FTS5 query for the chunk index (porter stemming over unicode61,
 * see migration 008): each content word an OR-ed term, so BM25 ranks chunks by how many of the
 * rare words they hold.
 *
 * - Stop words are left out (unless the query has nothing else): they match most chunks and rank
 *   nothing.
 * - A word the tokenizer splits ("shock-sound", "VX-4471") gives one term per part, not an exact
 *   phrase: a phrase would miss text that writes the parts apart or differently joined, while
 *   BM25 still ranks a chunk holding every part first.
 * - In a large index, terms found in more than 10% of the chunks are left out too (keeping at
 *   least the rarest one). Their document frequency is read from the index's vocabulary, which
 *   holds stems; the stem of each query word is found by the same tokenizer, run over the query
 *   in a scratch in-memory FTS5 table (so JavaScript never has to reimplement the stemmer).
 * - Words are quoted: no FTS syntax from the user reaches SQLite.
 */
import { Database } from "bun:sqlite";
import { STOP_WORDS, words as wordsOf } from "../text/stop-words.ts";

const COMMON_TERM_SHARE = 0.1;
const COMMON_TERM_MIN_CHUNKS = 1000;
const MAX_TERMS = 64;

/** Words whose stems are remembered (a library's vocabulary; ~100 bytes each). */
const STEM_CACHE_WORDS = 200_000;

let stemmer: { db: Database; stems: (words: string[]) => string[]; cache: Map<string, string> } | null = null;

/** The index's stem of each word (same tokenizer as the chunk index), remembered per word. */
export function stems(words: string[]): string[] {
  const cache = stemmerOf().cache;
  const missing = [...new Set(words.filter((w) => !cache.has(w)))];
  if (missing.length) {
    if (cache.size + missing.length > STEM_CACHE_WORDS) cache.clear();
    const found = stemmerOf().stems(missing);
    missing.forEach((w, i) => cache.set(w, found[i]!));
  }
  return words.map((w) => cache.get(w) ?? w);
}

/** The remembered stem of a word, or undefined (stems() finds and remembers it). */
export function knownStem(word: string): string | undefined {
  return stemmerOf().cache.get(word);
}

function stemmerOf(): NonNullable<typeof stemmer> {
  if (!stemmer) {
    const db = new Database(":memory:");
    db.run("CREATE VIRTUAL TABLE scratch USING fts5(w, tokenize = 'porter unicode61 remove_diacritics 2')");
    db.run("CREATE VIRTUAL TABLE scratch_terms USING fts5vocab(scratch, 'instance')");
    const clear = db.query("DELETE FROM scratch");
    const insert = db.query("INSERT INTO scratch (rowid, w) VALUES (?, ?)");
    const read = db.query<{ term: string; doc: number }, []>("SELECT term, doc FROM scratch_terms ORDER BY doc, offset");
    stemmer = {
      db,
      stems: (list) =>
        db.transaction(() => {
          clear.run();
          list.forEach((w, i) => insert.run(i + 1, w));
          const out = list.map((w) => w);
          const seen = new Set<number>();
          for (const row of read.all()) {
            if (!seen.has(row.doc)) out[row.doc - 1] = row.term;
            seen.add(row.doc);
          }
          return out;
        })(),
      cache: new Map(),
    };
  }
  return stemmer;
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

/** Chunk counts by stem, remembered for one database (see rememberedCounts). */
export interface CountMemo {
  rows: number;
  byStem: Map<string, number>;
}

/** Stems whose counts one memory keeps (it starts over when full). */
const REMEMBERED_STEMS = 50_000;

/**
 * The chunk counts `memos` remembers for `db`, started over once the index has grown by a tenth
 * (or shrunk) or holds REMEMBERED_STEMS: a count a little stale moves a term's idf by little,
 * while counting reads the word's postings (the vocabulary table all of them).
 */
export function rememberedCounts(memos: WeakMap<Database, CountMemo>, db: Database): Map<string, number> {
  const rows = db.query<{ n: number | null }, []>("SELECT max(seq) AS n FROM document_chunks").get()?.n ?? 0;
  let memo = memos.get(db);
  if (!memo || rows > memo.rows * 1.1 || rows < memo.rows || memo.byStem.size >= REMEMBERED_STEMS) memos.set(db, (memo = { rows, byStem: new Map() }));
  return memo.byStem;
}

/** Counts at least this large are remembered: counting reads every posting of the word. */
const REMEMBERED_MIN_CHUNKS = 100;
/** Remembered chunk counts of common stems, by database. */
const common = new WeakMap<Database, CountMemo>();

/**
 * How many chunks hold each stem (0 when none), from the index's vocabulary. Counting a word
 * reads all its postings (~8 ms a query at 100,000 chunks for words in most of them), so counts
 * of REMEMBERED_MIN_CHUNKS or more are remembered (rememberedCounts), while rare words (whose
 * counts change what matches) are always counted afresh.
 */
export function documentFrequencies(db: Database, stemList: string[]): Map<string, number> {
  const remembered = rememberedCounts(common, db);
  const docCount = db.query<{ doc: number }, [string]>("SELECT doc FROM chunks_fts_vocab WHERE term = ?");
  return new Map(
    stemList.map((stem) => {
      let n = remembered.get(stem);
      if (n === undefined) {
        n = docCount.get(stem)?.doc ?? 0;
        if (n >= REMEMBERED_MIN_CHUNKS) remembered.set(stem, n);
      }
      return [stem, n];
    }),
  );
}

/**
 * How many chunks hold `word`'s stem, counted only up to `cap` + 1: the vocabulary table counts a
 * term by reading all its postings (tens of milliseconds for a word in most of 100,000 chunks),
 * while a full-text match stops after `cap` + 1 rows. Exact when the result is `cap` or less.
 */
export function cappedFrequency(db: Database, word: string, cap: number): number {
  const row = db
    .query<{ n: number }, [string, number]>("SELECT count(*) AS n FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)")
    .get(matchQuery([{ word }]), Math.floor(cap) + 1);
  return row?.n ?? 0;
}

/** Most chunks a term may occur in and still rank anything (see the module comment). */
export function commonTermLimit(db: Database): number {
  const total = db.query<{ n: number | null }, []>("SELECT max(seq) AS n FROM document_chunks").get()?.n ?? 0;
  return Math.max(total * COMMON_TERM_SHARE, COMMON_TERM_MIN_CHUNKS);
}

/** The query's terms that take part in keyword matching, rarest first; empty when none is in the index. */
export function keywordTerms(db: Database, text: string): KeywordTerm[] {
  const words = queryWords(text);
  if (!words.length) return [];
  const stemmed = stems(words);
  const frequencies = documentFrequencies(db, [...new Set(stemmed)]);
  const byStem = new Map<string, KeywordTerm>();
  words.forEach((word, i) => {
    const stem = stemmed[i]!;
    if (!byStem.has(stem)) byStem.set(stem, { word, stem, frequency: frequencies.get(stem)! });
  });
  const scored = [...byStem.values()].filter((w) => w.frequency > 0).sort((a, b) => a.frequency - b.frequency);
  const limit = commonTermLimit(db);
  return scored.filter((w, i) => i === 0 || w.frequency <= limit);
}

/**
 * The FTS5 query OR-ing `terms`, each written `repeats` times (default once): FTS5's bm25() sums
 * one contribution per phrase of the query, so a term written twice counts twice. This is how
 * query expansion weights its terms (FTS5 has no per-term weights).
 */
export function matchQuery(terms: { word: string; repeats?: number }[]): string {
  const phrases: string[] = [];
  for (const t of terms) for (let i = 0; i < (t.repeats ?? 1); i++) phrases.push(`"${t.word.replaceAll('"', '""')}"`);
  return phrases.join(" OR ");
}

export function keywordQuery(db: Database, text: string): string | null {
  const terms = keywordTerms(db, text);
  return terms.length ? matchQuery(terms) : null;
}
