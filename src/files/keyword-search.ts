/**
 * Keyword search in the library listing (`GET /files?search=`), on either database: what a
 * search adds to the listing's statement (a join, a condition, a relevance order). The same user
 * query finds the same files on both: every word must match (AND), a word the tokenizer splits
 * ("e-mail", "IMG_1234") is a phrase of its parts, the last word also matches as a prefix, and the
 * search modes look at their columns (all; metadata: title, filename, tags and descriptions;
 * visible_text). Words are stemmed by FTS5's porter tokenizer over unicode61 with diacritics
 * folded (migration 008) on both:
 * - SQLite: FTS5 MATCH over files_fts and its bm25() (fts5-file-search.ts);
 * - PostgreSQL: a tsvector per file made of the tokens FTS5's tokenizer gives, run in the process
 *   (postgres-file-search.ts), matched with a tsquery of the query's tokens made the same way and
 *   ranked with ts_rank_cd; PostgreSQL's own parser and english stemmer split and stem otherwise.
 */
import type { SqlClient, SqlValue } from "../db/sql-client.ts";
import { badRequest } from "../errors.ts";
import { STOP_WORDS } from "../text/stop-words.ts";
import { Fts5FileSearch } from "./fts5-file-search.ts";
import { PostgresFileSearch } from "./postgres-file-search.ts";

export const SEARCH_MODES = ["all", "metadata", "visible_text"] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/**
 * A phrase of the query: the parts of one word the user typed (letters and digits), which must
 * occur together, as the tokenizer splits the word in the files (INV-2024-001). The last phrase
 * matches as a prefix, so results follow typing.
 */
export type Phrase = string[];

/**
 * The phrases every matching file must hold. Stop words need not occur ("the annual report" finds
 * "Annual report 2024"), except the last word, which may be the start of a longer one, and a
 * query of nothing else. No search syntax from the user reaches the database.
 */
export function searchPhrases(search: string): Phrase[] {
  const words = search.split(/\s+/).filter(Boolean);
  const parts = (word: string) => word.match(/[\p{L}\p{N}]+/gu);
  const phrases: Phrase[] = [];
  for (const [i, word] of words.entries()) {
    const tokens = parts(word);
    const stop = i < words.length - 1 && tokens?.length === 1 && STOP_WORDS.has(tokens[0]!.toLowerCase());
    if (tokens && !stop) phrases.push(tokens);
  }
  if (phrases.length === 0) {
    for (const word of words) {
      const tokens = parts(word);
      if (tokens) phrases.push(tokens);
    }
  }
  if (phrases.length === 0) throw badRequest("search: must contain at least one letter or digit");
  return phrases;
}

/** What a search adds to `SELECT ... FROM files f`. */
export interface KeywordMatch {
  /** Joined after `files f` (and its index hint). */
  join: string;
  /** A WHERE condition; its parameters are `params`. */
  condition: string;
  params: SqlValue[];
  /** The ORDER BY term, best first; its parameters are `rankParams`. */
  rank: string;
  rankParams: SqlValue[];
}

export interface FileKeywordSearch {
  /** Brings the index up to date with the files committed so far (PostgreSQL tokenizes the rows changed since); FTS5 always is. */
  ready(): Promise<void>;
  /** The join, condition and relevance order for the query's phrases in a mode. */
  match(phrases: readonly Phrase[], mode: SearchMode): KeywordMatch;
}

const searches = new WeakMap<SqlClient, FileKeywordSearch>();

/** The library's keyword search on the database behind `sql` (one per client). */
export function fileKeywordSearchOf(sql: SqlClient): FileKeywordSearch {
  let search = searches.get(sql);
  if (!search) searches.set(sql, (search = sql.dialect.name === "postgres" ? new PostgresFileSearch(sql) : new Fts5FileSearch()));
  return search;
}
