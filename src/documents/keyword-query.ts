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

let stemmer: { db: Database; stems: (words: string[]) => string[] } | null = null;

/** The index's stem of each word (same tokenizer as the chunk index). */
export function stems(words: string[]): string[] {
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
    };
  }
  return stemmer.stems(words);
}

/** The query's words that count for matching: content words, or every word of an all-stop-word query. */
export function queryWords(text: string): string[] {
  const all = [...new Set(wordsOf(text))];
  const content = all.filter((w) => !STOP_WORDS.has(w));
  return (content.length ? content : all).slice(0, MAX_TERMS);
}

export function keywordQuery(db: Database, text: string): string | null {
  const words = queryWords(text);
  if (!words.length) return null;
  const docCount = db.query<{ doc: number }, [string]>("SELECT doc FROM chunks_fts_vocab WHERE term = ?");
  const total = db.query<{ n: number | null }, []>("SELECT max(seq) AS n FROM document_chunks").get()?.n ?? 0;
  const stemmed = stems(words);
  const byStem = new Map<string, { word: string; frequency: number }>();
  words.forEach((word, i) => {
    const stem = stemmed[i]!;
    if (!byStem.has(stem)) byStem.set(stem, { word, frequency: docCount.get(stem)?.doc ?? 0 });
  });
  const scored = [...byStem.values()].filter((w) => w.frequency > 0).sort((a, b) => a.frequency - b.frequency);
  if (!scored.length) return null;
  const limit = Math.max(total * COMMON_TERM_SHARE, COMMON_TERM_MIN_CHUNKS);
  const informative = scored.filter((w, i) => i === 0 || w.frequency <= limit);
  return informative.map((w) => `"${w.word}"`).join(" OR ");
}
