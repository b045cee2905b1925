/**
 * The chunks' keyword index on PostgreSQL: the app's BM25 over postings tables (migration 037),
 * with the tokens and stems FTS5 makes on SQLite, so a query ranks the same chunks with the same
 * scores on both databases (PostgreSQL's english stemmer is Porter2, not FTS5's Porter, and its
 * parser splits words otherwise).
 *
 * A stored chunk is copied into chunks_fts by the insert trigger of migration 008, which on
 * PostgreSQL is the queue of chunks awaiting the tokenizer. `ready()` (called before each search)
 * takes the chunks queued by then in batches, runs FTS5's tokenizer over them in an in-memory SQLite
 * table (keyword-query.ts's fts5Tokens), and writes each chunk's stems with their weighted counts, its length and the index's
 * totals in the transaction that took them off the queue: a search sees every chunk committed
 * before it, and processes searching at once take turns per batch (the queue's rows are locked)
 * instead of tokenizing a chunk twice. The delete trigger takes a deleted chunk out of the
 * postings and the totals.
 *
 * The score is FTS5's bm25() written out: for each query term t held by chunk d,
 * idf(t) x f x (k1 + 1) / (f + k1 x (1 - b + b x |d| / avgdl)), with f the term's count in d (the
 * content's occurrences 1, the headings' 0.5), |d| the chunk's tokens, and
 * idf(t) = ln((N - n(t) + 0.5) / (n(t) + 0.5)), floored at 1e-6.
 */
import type { SqlClient } from "../db/sql-client.ts";
import type { IndexTotals } from "./bm25.ts";
import { CONTENT_WEIGHT, HEADINGS_WEIGHT } from "./chunk-terms.ts";
import type { KeywordIndex, KeywordScope } from "./keyword-index.ts";
import { fts5Tokens, type KeywordTerm } from "./keyword-query.ts";

/** Queued chunks tokenized per transaction. */
const TOKENIZE_BATCH = 500;

interface QueuedChunk {
  rowid: number;
  content: string | null;
  headings: string | null;
}

interface TokenizedChunk {
  seq: number;
  length: number;
  terms: Map<string, number>;
}

/** Each chunk's stems with their weighted counts and its length, by FTS5's tokenizer (the chunk index's, migration 008). */
export function tokenizeChunks(chunks: QueuedChunk[]): TokenizedChunk[] {
  const out = chunks.map((c): TokenizedChunk => ({ seq: c.rowid, length: 0, terms: new Map() }));
  for (const token of fts5Tokens(chunks.map((c) => [c.content ?? "", c.headings ?? ""] as const))) {
    const chunk = out[token.doc - 1]!;
    chunk.length++;
    chunk.terms.set(token.term, (chunk.terms.get(token.term) ?? 0) + (token.col === "headings" ? HEADINGS_WEIGHT : CONTENT_WEIGHT));
  }
  return out;
}

export class PostgresKeywordIndex implements KeywordIndex {
  constructor(readonly sql: SqlClient) {}

  /**
   * Tokenizes every chunk queued when it is called. Another process may be tokenizing some of
   * them: a batch then comes back short (the rows it waited for are gone once that process
   * commits), so it goes on until none of those chunks is left in the queue, committed or not.
   */
  async ready(): Promise<void> {
    const last = (await this.sql.one<{ n: number | null }>("SELECT max(rowid) AS n FROM chunks_fts"))?.n ?? null;
    if (last === null) return;
    for (;;) {
      if ((await this.tokenizeQueued(TOKENIZE_BATCH, last)) === TOKENIZE_BATCH) continue;
      if (!(await this.sql.one("SELECT 1 AS queued FROM chunks_fts WHERE rowid <= ? LIMIT 1", [last]))) return;
    }
  }

  /** Moves up to `limit` queued chunks (up to chunk `last`) into the postings; returns how many. */
  private tokenizeQueued(limit: number, last: number): Promise<number> {
    return this.sql.transaction(async (tx) => {
      // Locked in seq order (no two takers deadlock); a taker waiting on another's rows finds them gone once it commits.
      const queued = await tx.all<QueuedChunk>(
        `DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks_fts WHERE rowid <= ? ORDER BY rowid LIMIT ? FOR UPDATE)
         RETURNING rowid, content, headings`,
        [last, limit],
      );
      if (!queued.length) return 0;
      const chunks = tokenizeChunks(queued);
      await tx.run(
        "INSERT INTO chunk_keyword_rows (seq, length) SELECT seq, length FROM jsonb_to_recordset(?::text::jsonb) AS r(seq bigint, length bigint)",
        [JSON.stringify(chunks.map((c) => ({ seq: c.seq, length: c.length })))],
      );
      const postings = chunks.flatMap((c) => [...c.terms].map(([stem, frequency]) => ({ stem, seq: c.seq, frequency })));
      await tx.run(
        "INSERT INTO chunk_keyword_postings (stem, seq, frequency) SELECT stem, seq, frequency FROM jsonb_to_recordset(?::text::jsonb) AS p(stem text, seq bigint, frequency double precision)",
        [JSON.stringify(postings)],
      );
      await tx.run("UPDATE chunk_keyword_totals SET chunks = chunks + ?, tokens = tokens + ?", [chunks.length, chunks.reduce((sum, c) => sum + c.length, 0)]);
      return queued.length;
    });
  }

  /** One round trip for all the stems. */
  async frequencies(stems: readonly string[]): Promise<Map<string, number>> {
    const counts = new Map(stems.map((stem) => [stem, 0]));
    if (!stems.length) return counts;
    const rows = await this.sql.all<{ stem: string; n: number }>(
      `SELECT stem, count(*) AS n FROM chunk_keyword_postings WHERE stem IN (${stems.map(() => "?").join(", ")}) GROUP BY stem`,
      [...stems],
    );
    for (const row of rows) counts.set(row.stem, row.n);
    return counts;
  }

  async cappedFrequency(term: { word: string; stem: string }, cap: number): Promise<number> {
    const row = await this.sql.one<{ n: number }>(
      "SELECT count(*) AS n FROM (SELECT 1 FROM chunk_keyword_postings WHERE stem = ? LIMIT ?) AS capped",
      [term.stem, Math.floor(cap) + 1],
    );
    return row?.n ?? 0;
  }

  async totals(): Promise<IndexTotals> {
    const row = await this.sql.one<{ chunks: number; tokens: number }>("SELECT chunks, tokens FROM chunk_keyword_totals");
    const rows = row?.chunks ?? 0;
    return { rows, averageLength: rows > 0 ? row!.tokens / rows || 1 : 1 };
  }

  async ranked(scope: KeywordScope, terms: readonly KeywordTerm[], depth: number): Promise<{ seq: number; score: number }[]> {
    const stems = [...new Set(terms.map((t) => t.stem))];
    if (!stems.length) return [];
    // The stems are spelled out (not one array parameter) so the planner knows how few they are and
    // reads their postings by index; given an array it guessed 100 terms and read every posting.
    const list = stems.map(() => "?").join(", ");
    const params: (string | number)[] = [...stems, ...stems, scope.orgId];
    if (scope.documentIds) params.push(JSON.stringify(scope.documentIds));
    params.push(depth);
    // Double precision throughout (a bare 1.2 is numeric in PostgreSQL), as FTS5 computes in C.
    // The terms' idf is computed once (MATERIALIZED), and the terms' postings are scored before
    // the organization's chunks are looked up (as FTS5 matches over the whole index): inlined and
    // driven from the organization's chunks, the planner read every posting of every chunk and
    // counted a term's chunks again for every posting (2.9 s a query on Cranfield).
    return this.sql.all<{ seq: number; score: number }>(
      `WITH totals AS MATERIALIZED (
         SELECT chunks::float8 AS n, CASE WHEN chunks > 0 THEN tokens::float8 / chunks::float8 ELSE 1::float8 END AS avgdl FROM chunk_keyword_totals),
       weighted AS MATERIALIZED (
         SELECT stem, CASE WHEN ln(((SELECT n FROM totals) - count(*) + 0.5::float8) / (count(*) + 0.5::float8)) <= 0 THEN 1e-6::float8
           ELSE ln(((SELECT n FROM totals) - count(*) + 0.5::float8) / (count(*) + 0.5::float8)) END AS idf
         FROM chunk_keyword_postings WHERE stem IN (${list}) GROUP BY stem),
       scored AS (
         SELECT p.seq, sum(w.idf * ((p.frequency * (1.2::float8 + 1.0::float8)) /
           (p.frequency + 1.2::float8 * (1::float8 - 0.75::float8 + 0.75::float8 * r.length::float8 / (SELECT avgdl FROM totals))))) AS score
         FROM chunk_keyword_postings p
         JOIN weighted w ON w.stem = p.stem
         JOIN chunk_keyword_rows r ON r.seq = p.seq
         WHERE p.stem IN (${list})
         GROUP BY p.seq)
       SELECT s.seq, s.score FROM scored s
       JOIN document_chunks c ON c.seq = s.seq
       WHERE c.org_id = ? AND c.file_id NOT IN (SELECT id FROM files WHERE deleted_at IS NOT NULL)
       ${scope.documentIds ? `AND c.file_id IN (${this.sql.dialect.jsonValues})` : ""}
       ORDER BY s.score DESC, s.seq LIMIT ?`,
      params,
    );
  }
}
