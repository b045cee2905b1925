/**
 * The chunks' keyword index on SQLite: FTS5 with porter stemming (migration 008), kept by
 * triggers as chunks are stored and deleted, ranked by its own bm25().
 */
import type { SqlClient } from "../db/sql-client.ts";
import type { IndexTotals } from "./bm25.ts";
import { CONTENT_WEIGHT, HEADINGS_WEIGHT } from "./chunk-terms.ts";
import type { KeywordIndex, KeywordScope } from "./keyword-index.ts";
import { matchQuery, type KeywordTerm } from "./keyword-query.ts";

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

export class Fts5KeywordIndex implements KeywordIndex {
  constructor(readonly sql: SqlClient) {}

  async ready(): Promise<void> {}

  async frequencies(stems: readonly string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const stem of stems) counts.set(stem, (await this.sql.one<{ doc: number }>("SELECT doc FROM chunks_fts_vocab WHERE term = ?", [stem]))?.doc ?? 0);
    return counts;
  }

  /** A full-text match stops after `cap` + 1 rows, while the vocabulary table reads all of a term's postings. */
  async cappedFrequency(term: { word: string; stem: string }, cap: number): Promise<number> {
    const row = await this.sql.one<{ n: number }>(
      "SELECT count(*) AS n FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)",
      [matchQuery([{ word: term.word }]), Math.floor(cap) + 1],
    );
    return row?.n ?? 0;
  }

  /**
   * From FTS5's own averages record (row 1 of chunks_fts_data: the row count, then each column's
   * total tokens, as varints), so the app's BM25 (bm25.ts) uses the very statistics bm25() uses.
   */
  async totals(): Promise<IndexTotals> {
    const row = await this.sql.one<{ block: Uint8Array }>("SELECT block FROM chunks_fts_data WHERE id = 1");
    if (!row) return { rows: 0, averageLength: 1 };
    const at = { p: 0 };
    const rows = readVarint(row.block, at);
    let tokens = 0;
    while (at.p < row.block.length) tokens += readVarint(row.block, at);
    return { rows, averageLength: rows > 0 ? tokens / rows || 1 : 1 };
  }

  /** Deleted files are few: their ids are read once per query instead of looking up each match's file. */
  async ranked(scope: KeywordScope, terms: readonly KeywordTerm[], depth: number): Promise<{ seq: number; score: number }[]> {
    if (!terms.length) return [];
    const params: (string | number)[] = [matchQuery(terms), scope.orgId];
    if (scope.documentIds) params.push(JSON.stringify(scope.documentIds));
    params.push(depth);
    return this.sql.all<{ seq: number; score: number }>(
      `SELECT c.seq, -bm25(chunks_fts, ${CONTENT_WEIGHT.toFixed(1)}, ${HEADINGS_WEIGHT.toFixed(1)}) AS score FROM chunks_fts
       JOIN document_chunks c ON c.seq = chunks_fts.rowid
       WHERE chunks_fts MATCH ? AND c.org_id = ? AND c.file_id NOT IN (SELECT id FROM files WHERE deleted_at IS NOT NULL)
       ${scope.documentIds ? `AND c.file_id IN (${this.sql.dialect.jsonValues})` : ""}
       ORDER BY score DESC, c.seq LIMIT ?`,
      params,
    );
  }
}
