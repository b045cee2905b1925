/**
 * Hybrid search over document chunks: keyword matching (FTS5, BM25, common words left out) and,
 * when the text model is installed, vector similarity (the chunk vectors of sqlite-vec), fused by
 * reciprocal rank fusion so exact identifiers and rare words are found as well as paraphrases.
 *
 * similarity_score is the fused score scaled to 0-1: each signal contributes 1/(60 + rank) for a
 * chunk it ranks, and the sum is divided by what a chunk ranked first by every available signal
 * would get. A chunk first in both lists scores 1.0; first in one only, about 0.5.
 */
import type { Database } from "bun:sqlite";
import type { AppContext } from "../context.ts";
import { VectorSpace } from "../vectors/vector-index.ts";

const RRF_K = 60;
/** How deep each signal looks before fusion. */
const CANDIDATES = 100;

export interface SearchRequest {
  orgId: string;
  query: string;
  limit: number;
  similarityThreshold: number;
  documentIds: string[] | null;
}

export interface ChunkRow {
  seq: number;
  id: string;
  file_id: string;
  chunk_index: number;
  content: string;
  page_numbers: string;
  heading_hierarchy: string;
  token_count: number;
  chunk_type: string;
  embedding_status: string;
  filename: string;
}

export interface SearchHit {
  chunk: ChunkRow;
  similarity_score: number;
  keyword_rank: number | null;
  vector_rank: number | null;
  vector_similarity: number | null;
}

export interface SearchOutcome {
  hits: SearchHit[];
  signals: { keyword: boolean; vector: boolean; vector_model: string | null; vector_unavailable_reason: string | null };
}

/** Terms as the chunk index's tokenizer (unicode61, diacritics removed) cuts them. */
function tokens(text: string): string[] {
  return text.toLowerCase().normalize("NFKD").replace(/\p{M}/gu, "").match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * A term in more than this share of all chunks (and in more than COMMON_TERM_MIN_CHUNKS chunks:
 * small libraries keep every word) is left out of the keyword query.
 */
const COMMON_TERM_SHARE = 0.1;
const COMMON_TERM_MIN_CHUNKS = 1000;
const MIN_TERMS = 1;

/**
 * FTS5 query: each query word (identifiers like "VX-4471" kept as one phrase) as an OR-ed term,
 * so BM25 ranks chunks by how many rare words they match. In a large index, words found in more
 * than 10% of the chunks are left out, keeping at least the rarest one: they would match (and
 * make BM25 score) most of the index while ranking nothing.
 */
export function keywordQuery(db: Database, text: string): string | null {
  const words = [...new Set(text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}_-]*/gu) ?? [])].slice(0, 64);
  if (!words.length) return null;
  const docCount = db.query<{ doc: number }, [string]>("SELECT doc FROM chunks_fts_vocab WHERE term = ?");
  const total = db.query<{ n: number | null }, []>("SELECT max(seq) AS n FROM document_chunks").get()?.n ?? 0;
  const scored = words
    .map((word) => {
      const parts = tokens(word);
      const frequency = parts.length ? Math.min(...parts.map((t) => docCount.get(t)?.doc ?? 0)) : 0;
      return { phrase: `"${parts.join(" ")}"`, frequency, empty: parts.length === 0 };
    })
    .filter((w) => !w.empty && w.frequency > 0)
    .sort((a, b) => a.frequency - b.frequency);
  if (!scored.length) return null;
  const informative = scored.filter((w, i) => i < MIN_TERMS || w.frequency <= Math.max(total * COMMON_TERM_SHARE, COMMON_TERM_MIN_CHUNKS));
  return informative.map((w) => w.phrase).join(" OR ");
}

const CHUNK_COLUMNS = `c.seq, c.id, c.file_id, c.chunk_index, c.content, c.page_numbers, c.heading_hierarchy, c.token_count, c.chunk_type,
  c.embedding_status, f.filename`;

function scopeSql(documentIds: string[] | null): string {
  return documentIds ? `AND c.file_id IN (SELECT value FROM json_each(?))` : "";
}

function keywordCandidates(db: Database, req: SearchRequest): ChunkRow[] {
  const match = keywordQuery(db, req.query);
  if (!match) return [];
  const params: (string | number)[] = [match, req.orgId];
  if (req.documentIds) params.push(JSON.stringify(req.documentIds));
  params.push(CANDIDATES);
  return db
    .query<ChunkRow, (string | number)[]>(
      `SELECT ${CHUNK_COLUMNS} FROM chunks_fts
       JOIN document_chunks c ON c.seq = chunks_fts.rowid
       JOIN files f ON f.id = c.file_id
       WHERE chunks_fts MATCH ? AND c.org_id = ? AND f.deleted_at IS NULL ${scopeSql(req.documentIds)}
       ORDER BY bm25(chunks_fts, 1.0, 0.5) LIMIT ?`,
    )
    .all(...params);
}

async function vectorCandidates(ctx: AppContext, req: SearchRequest): Promise<{ rows: { row: ChunkRow; similarity: number }[]; model: string | null; reason: string | null }> {
  const unavailable = await ctx.embedder.unavailableReason();
  if (unavailable) {
    return { rows: [], model: null, reason: unavailable };
  }
  const space = VectorSpace.find(ctx.db, "text", ctx.embedder.modelId);
  if (!space) return { rows: [], model: ctx.embedder.modelId, reason: "no document has been embedded yet" };
  const [vector] = await ctx.embedder.embed([req.query]);
  // Deleted documents and other documents (with document_ids) are filtered after the KNN.
  const depth = req.documentIds ? CANDIDATES * 4 : CANDIDATES * 2;
  const neighbours = await space.nearest(req.orgId, vector!, depth);
  // One query for all neighbours' rows; those of deleted or out-of-scope documents do not come back.
  const params: string[] = [JSON.stringify(neighbours.map((n) => n.itemId)), req.orgId];
  if (req.documentIds) params.push(JSON.stringify(req.documentIds));
  const found = new Map(
    ctx.db
      .query<ChunkRow, string[]>(
        `SELECT ${CHUNK_COLUMNS} FROM document_chunks c JOIN files f ON f.id = c.file_id
         WHERE c.id IN (SELECT value FROM json_each(?)) AND c.org_id = ? AND f.deleted_at IS NULL ${scopeSql(req.documentIds)}`,
      )
      .all(...params)
      .map((row) => [row.id, row]),
  );
  const rows: { row: ChunkRow; similarity: number }[] = [];
  for (const n of neighbours) {
    const row = found.get(n.itemId);
    if (row) rows.push({ row, similarity: n.similarity });
    if (rows.length >= CANDIDATES) break;
  }
  return { rows, model: space.model, reason: null };
}

export async function searchChunks(ctx: AppContext, req: SearchRequest): Promise<SearchOutcome> {
  const keyword = keywordCandidates(ctx.db, req);
  const vector = await vectorCandidates(ctx, req);
  const useVector = vector.reason === null;
  const hits = new Map<string, SearchHit>();
  const hit = (row: ChunkRow) => {
    let h = hits.get(row.id);
    if (!h) hits.set(row.id, (h = { chunk: row, similarity_score: 0, keyword_rank: null, vector_rank: null, vector_similarity: null }));
    return h;
  };
  keyword.forEach((row, i) => (hit(row).keyword_rank = i + 1));
  vector.rows.forEach(({ row, similarity }, i) => {
    const h = hit(row);
    h.vector_rank = i + 1;
    h.vector_similarity = Math.round(similarity * 10_000) / 10_000;
  });
  const best = (useVector ? 2 : 1) / (RRF_K + 1);
  for (const h of hits.values()) {
    const fused = (h.keyword_rank ? 1 / (RRF_K + h.keyword_rank) : 0) + (h.vector_rank ? 1 / (RRF_K + h.vector_rank) : 0);
    h.similarity_score = Math.round((fused / best) * 10_000) / 10_000;
  }
  const ranked = [...hits.values()]
    .filter((h) => h.similarity_score >= req.similarityThreshold)
    .sort((a, b) => b.similarity_score - a.similarity_score || (b.vector_similarity ?? 0) - (a.vector_similarity ?? 0) || a.chunk.seq - b.chunk.seq)
    .slice(0, req.limit);
  return {
    hits: ranked,
    signals: { keyword: true, vector: useVector, vector_model: vector.model, vector_unavailable_reason: vector.reason },
  };
}
