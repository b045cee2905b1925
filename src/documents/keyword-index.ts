/**
 * The chunks' keyword index as document search reads it, on either database: which chunks hold a
 * term, the index's size, and the organization's best chunks for a query by BM25 (k1 1.2, b 0.75,
 * the content weighted 1 and headings 0.5, FTS5's idf and its floor). Two implementations give
 * the same scores from the same tokens and stems:
 * - SQLite: FTS5 and its bm25() (fts5-keyword-index.ts);
 * - PostgreSQL: the app's BM25 over postings tables filled with FTS5's tokenizer run in the
 *   process (postgres-keyword-index.ts), because PostgreSQL's own full-text search stems and
 *   splits words otherwise.
 */
import type { SqlClient } from "../db/sql-client.ts";
import type { IndexTotals } from "./bm25.ts";
import type { KeywordTerm } from "./keyword-query.ts";
import { Fts5KeywordIndex } from "./fts5-keyword-index.ts";
import { PostgresKeywordIndex } from "./postgres-keyword-index.ts";

/** Whose chunks a ranking looks at: one organization's, and with document_ids only those files'. */
export interface KeywordScope {
  orgId: string;
  documentIds: string[] | null;
}

export interface KeywordIndex {
  readonly sql: SqlClient;
  /** Brings the index up to date with the chunks stored (PostgreSQL tokenizes the chunks stored since); FTS5 always is. */
  ready(): Promise<void>;
  /** How many chunks hold each stem (0 when none). */
  frequencies(stems: readonly string[]): Promise<Map<string, number>>;
  /** How many chunks hold a term, counted only up to `cap` + 1 (exact when `cap` or less). */
  cappedFrequency(term: { word: string; stem: string }, cap: number): Promise<number>;
  /** The index's row count and average row length (tokens of content and headings). */
  totals(): Promise<IndexTotals>;
  /** The scope's `depth` best chunks by BM25 of the OR of `terms`, best first (ties by seq); deleted files' chunks left out. */
  ranked(scope: KeywordScope, terms: readonly KeywordTerm[], depth: number): Promise<{ seq: number; score: number }[]>;
}

const indexes = new WeakMap<SqlClient, KeywordIndex>();

/** The keyword index of the database behind `sql` (one per client: it remembers term counts). */
export function keywordIndexOf(sql: SqlClient): KeywordIndex {
  let index = indexes.get(sql);
  if (!index) indexes.set(sql, (index = sql.dialect.name === "postgres" ? new PostgresKeywordIndex(sql) : new Fts5KeywordIndex(sql)));
  return index;
}
