/**
 * Hybrid search over document chunks, on SQLite or PostgreSQL through the data-access port:
 * keyword matching (BM25 over porter stems, stop words left out; keyword-query.ts, and
 * keyword-index.ts for each database's index) and vector similarity (cosine over the chunk vectors of the
 * text model; the built-in model is always there), fused into one score, one result per document
 * by default, pageable past the first page. In hybrid mode the keyword query is then expanded by
 * pseudo-relevance feedback from the first fused ranking (query-expansion.ts), the expanded
 * query's BM25 computed over that ranking's best chunks (bm25.ts), and the result fused again.
 *
 * Scores are each signal's own, never derived from ranks:
 * - keyword_score: the chunk's BM25 (higher is better; how high depends on the query); in hybrid
 *   mode the BM25 of the expanded query (a typed word weighs 1, an added word less);
 * - vector_similarity: cosine similarity of the query's and the chunk's vectors (-1..1), computed
 *   for every candidate either signal found;
 * - similarity_score (fused, 0..1): each signal min-max normalized over its own best
 *   NORMALIZED_OVER candidates for this query (the best 1, the 100th 0; a chunk the keyword side
 *   did not match 0), then (1 - w) x keyword + w x vector, with w the answering model's vector
 *   share (vectorWeight), halved for a query holding a word with digits (queryVectorWeight).
 *   Keyword-only, it is BM25 relative to the best match.
 * Why normalized per query: BM25 has no fixed scale and a model's cosines sit in a narrow band of
 * their own (bge-small's best 100 chunks for a query span ~0.65-0.85), so raw values let one
 * signal decide alone. On Cranfield (scripts/bench/retrieval.ts, docs/benchmarks.md) this took
 * hybrid nDCG@10 from 0.417 to 0.453 with bge-small (the former BM25 / best + 0.3 x cosine);
 * shares moved per query by other features (agreement of the two rankings, score gaps, query
 * length, the best keyword match's share of the query's idf, rare terms, the best cosine) were
 * measured and did not improve the held-out half.
 * similarity_threshold applies to vector_similarity, a real similarity: a query about something
 * the library does not hold returns nothing at a threshold of ~0.3-0.5. Without vectors it applies
 * to the fused (keyword) score.
 */
import type { SqlClient } from "../db/sql-client.ts";
import type { TextEmbedding } from "../embeddings/text-embedder.ts";
import type { DocumentDeps } from "./deps.ts";
import { MAX_NEIGHBOURS, type SearchableSpace, type VectorSpaces } from "../vectors/vector-spaces.ts";
import { keywordTerms, type KeywordTerm } from "./keyword-query.ts";
import { keywordIndexOf, type KeywordIndex } from "./keyword-index.ts";
import { expandQuery, FEEDBACK_DOCUMENTS } from "./query-expansion.ts";
import { weightedBm25 } from "./bm25.ts";
import { errorMessage } from "../errors.ts";
import { BUILTIN_TEXT_MODEL, textModelFallbackReason } from "../embeddings/text-models.ts";

/**
 * What searching reads, on either database: the chunks and their keyword index (through the
 * data-access port), the text model and the vector spaces.
 */
export interface SearchDeps {
  sql: SqlClient;
  embedder: TextEmbedding;
  spaces: VectorSpaces;
}

/** The appliance's search over its database and vector spaces. */
export function searchDepsOf(ctx: Pick<DocumentDeps, "sql" | "embedder" | "spaces">): SearchDeps {
  return { sql: ctx.sql, embedder: ctx.embedder, spaces: ctx.spaces };
}

/** Candidates of each signal whose scores set its normalization (best = 1, this one = 0). */
export const NORMALIZED_OVER = 100;

/**
 * The vector signal's share of the fused score for a model's cosines. Measured on Cranfield's
 * tuning half (held-out half improved too): the built-in model's vectors alone rank far below
 * keywords (nDCG@10 0.24 against 0.38) and pull hybrid below keywords at an equal share (0.36);
 * bge-small's rank above them (0.41) and do best at an equal share. Other folder models are
 * sentence-transformers models of bge-small's class (MiniLM, e5: 0.38-0.39 alone there).
 */
export function vectorWeight(model: string): number {
  return model === BUILTIN_TEXT_MODEL ? 0.2 : 0.5;
}

/**
 * The vector share for one query: halved when a query word the index holds has a digit in it
 * (a part number, "VX-4471", "EL1", "x-15"): a text model reads such a word as word pieces with
 * no meaning of their own, while keywords find it exactly. On Cranfield 3 of 225 queries have one;
 * the held-out half gained (+0.0007 nDCG@10 with bge-small), the tuning half held none.
 */
export function queryVectorWeight(model: string, terms: readonly KeywordTerm[]): number {
  const identifier = terms.some((t) => /\p{N}/u.test(t.word));
  return vectorWeight(model) * (identifier ? 0.5 : 1);
}
/** Fewest candidates each signal contributes, however small the page. */
const MIN_CANDIDATES = 100;
/** Chunks looked at per wanted result when results are one per document (documents have several chunks). */
const CHUNKS_PER_RESULT = 4;

export interface SearchRequest {
  orgId: string;
  query: string;
  limit: number;
  /** Results skipped before the page (default 0). */
  offset?: number;
  similarityThreshold: number;
  documentIds: string[] | null;
  /** Most chunks returned per document; default 1 when searching many documents, unlimited with document_ids. */
  perDocument?: number;
  /** Which signals rank: both (default), or one alone (for comparison and benchmarks). */
  mode?: SearchMode;
}

export const SEARCH_MODES = ["hybrid", "keyword", "vector"] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

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
  keyword_score: number | null;
  keyword_rank: number | null;
  vector_rank: number | null;
  vector_similarity: number | null;
}

export interface SearchOutcome {
  hits: SearchHit[];
  /** Results of the whole ranking (every page), after the threshold and the per-document cut. */
  total: number;
  signals: {
    keyword: boolean;
    vector: boolean;
    vector_model: string | null;
    vector_unavailable_reason: string | null;
    /** Why the configured text model is not the one answering (the built-in model stands in), or null. */
    configured_model_unavailable_reason: string | null;
    weights: { keyword: number; vector: number };
    /** The keyword query as expanded by pseudo-relevance feedback (hybrid mode), or null. */
    expansion: { feedback_documents: number; terms: { term: string; weight: number; original: boolean }[] } | null;
  };
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;
/** BM25 has no fixed scale (a tiny index gives scores near 1e-6): four significant digits, not four decimals. */
const significant = (n: number) => Number(n.toPrecision(4));

const CHUNK_COLUMNS = `c.seq, c.id, c.file_id, c.chunk_index, c.content, c.page_numbers, c.heading_hierarchy, c.token_count, c.chunk_type,
  c.embedding_status, f.filename`;

function scopeSql(sql: SqlClient, documentIds: string[] | null): string {
  return documentIds ? `AND c.file_id IN (${sql.dialect.jsonValues})` : "";
}

/**
 * The keyword side's best `depth` chunks, best first. Ranked on (seq, score) alone, then the
 * page's rows read: sorting every match with its content cost a third of the query.
 */
async function keywordCandidates(sql: SqlClient, index: KeywordIndex, req: SearchRequest, depth: number, terms: readonly KeywordTerm[]): Promise<(ChunkRow & { score: number })[]> {
  const ranked = await index.ranked(req, terms, depth);
  if (!ranked.length) return [];
  const rows = await sql.all<ChunkRow>(
    `SELECT ${CHUNK_COLUMNS} FROM document_chunks c JOIN files f ON f.id = c.file_id
     WHERE c.seq IN (SELECT CAST(value AS BIGINT) FROM (${sql.dialect.jsonValues}) AS seqs)`,
    [JSON.stringify(ranked.map((r) => r.seq))],
  );
  const bySeq = new Map(rows.map((row) => [row.seq, row]));
  return ranked.flatMap((r) => {
    const row = bySeq.get(r.seq);
    return row ? [{ ...row, score: r.score }] : [];
  });
}

interface VectorSide {
  space: SearchableSpace | null;
  query: Float32Array | null;
  rows: { row: ChunkRow; similarity: number }[];
  model: string | null;
  reason: string | null;
}

async function vectorCandidates(ctx: SearchDeps, req: SearchRequest, depth: number): Promise<VectorSide> {
  const unavailable = await ctx.embedder.unavailableReason();
  if (unavailable) return { space: null, query: null, rows: [], model: null, reason: unavailable };
  const model = ctx.embedder.modelId;
  const space = await ctx.spaces.find("text", model);
  if (!space) return { space: null, query: null, rows: [], model, reason: "no document has been embedded yet" };
  let vector: Float32Array | undefined;
  try {
    [vector] = await ctx.embedder.embed([req.query], "query");
  } catch (err) {
    // The keyword side still answers; the response says why vectors took no part.
    return { space: null, query: null, rows: [], model, reason: errorMessage(err) };
  }
  if (!vector || !vector.some((v) => v !== 0)) return { space: null, query: null, rows: [], model, reason: "the query has no words the text model knows" };
  // Deleted documents and other documents (with document_ids) are filtered after the scan.
  const neighbours = await space.nearest(req.orgId, vector, Math.min(MAX_NEIGHBOURS, req.documentIds ? depth * 4 : depth * 2));
  // Read a page of neighbours at a time: most are kept, so usually one read of `depth` rows.
  const read = `SELECT ${CHUNK_COLUMNS} FROM document_chunks c JOIN files f ON f.id = c.file_id
     WHERE c.id IN (${ctx.sql.dialect.jsonValues}) AND c.org_id = ? AND f.deleted_at IS NULL ${scopeSql(ctx.sql, req.documentIds)}`;
  const rows: { row: ChunkRow; similarity: number }[] = [];
  for (let from = 0; from < neighbours.length && rows.length < depth; from += depth) {
    const page = neighbours.slice(from, from + depth);
    const params: string[] = [JSON.stringify(page.map((n) => n.itemId)), req.orgId];
    if (req.documentIds) params.push(JSON.stringify(req.documentIds));
    const found = new Map((await ctx.sql.all<ChunkRow>(read, params)).map((row) => [row.id, row]));
    for (const n of page) {
      const row = found.get(n.itemId);
      if (row) rows.push({ row, similarity: n.similarity });
      if (rows.length >= depth) break;
    }
  }
  return { space, query: vector, rows, model: space.model, reason: null };
}

/** Maps a score to 0..1 by the best and the NORMALIZED_OVER-th of `sorted` (best first); all equal: 1. */
function normalizer(sorted: number[]): (score: number) => number {
  const best = sorted[0] ?? 0;
  const floor = sorted[Math.min(sorted.length, NORMALIZED_OVER) - 1] ?? 0;
  const range = best - floor;
  return (score) => (range > 0 ? Math.min(1, Math.max(0, (score - floor) / range)) : 1);
}

/**
 * Scores every candidate either signal found: each signal's own score, and the fused score (see
 * the module comment), best first. Keyword candidates the vector list did not reach still get
 * their real cosine.
 */
async function fuse(req: SearchRequest, mode: SearchMode, keyword: (ChunkRow & { score: number })[], vector: VectorSide, w: Weights): Promise<SearchHit[]> {
  const useVector = vector.reason === null;
  const hits = new Map<string, SearchHit>();
  /** Unrounded BM25 by chunk id: the fused score is computed from these. */
  const bm25 = new Map(keyword.map((row) => [row.id, row.score]));
  const hit = (row: ChunkRow) => {
    let h = hits.get(row.id);
    if (!h) hits.set(row.id, (h = { chunk: row, similarity_score: 0, keyword_score: null, keyword_rank: null, vector_rank: null, vector_similarity: null }));
    return h;
  };
  keyword.forEach((row, i) => {
    const h = hit(row);
    h.keyword_rank = i + 1;
    h.keyword_score = significant(row.score);
  });
  vector.rows.forEach(({ row, similarity }, i) => {
    const h = hit(row);
    h.vector_rank = i + 1;
    h.vector_similarity = similarity;
  });
  if (vector.space && vector.query) {
    const missing = keyword.filter((row) => hits.get(row.id)!.vector_similarity === null).map((row) => row.id);
    for (const [id, similarity] of await vector.space.similarities(req.orgId, vector.query, missing)) hits.get(id)!.vector_similarity = similarity;
  }
  const bestKeyword = keyword.reduce((best, row) => Math.max(best, row.score), 0);
  const keywordNorm = normalizer(keyword.map((row) => row.score).sort((a, b) => b - a));
  const vectorNorm = normalizer(vector.rows.map((r) => r.similarity));
  for (const h of hits.values()) {
    const score = bm25.get(h.chunk.id);
    let fused: number;
    if (mode === "vector") fused = Math.max(0, h.vector_similarity ?? 0);
    else if (!useVector) fused = score !== undefined && bestKeyword > 0 ? score / bestKeyword : 0;
    else fused = w.keyword * (score !== undefined ? keywordNorm(score) : 0) + w.vector * (h.vector_similarity === null ? 0 : vectorNorm(h.vector_similarity));
    h.similarity_score = round(fused);
    if (h.vector_similarity !== null) h.vector_similarity = round(h.vector_similarity);
  }
  return [...hits.values()].sort(
    (a, b) => b.similarity_score - a.similarity_score || (b.vector_similarity ?? -2) - (a.vector_similarity ?? -2) || a.chunk.seq - b.chunk.seq,
  );
}

type Weights = { keyword: number; vector: number };

/** The signals' shares of the fused score for this query. */
function weightsOf(mode: SearchMode, vector: VectorSide, terms: readonly KeywordTerm[]): Weights {
  if (mode === "vector") return { keyword: 0, vector: 1 };
  if (vector.reason !== null || !vector.model) return { keyword: 1, vector: 0 };
  const w = queryVectorWeight(vector.model, terms);
  return { keyword: 1 - w, vector: w };
}

/**
 * The first `count` documents of a ranking as feedback: each one's candidate chunks joined (a
 * document's words, as far as the candidates hold them), with its best fused score.
 */
function feedbackDocuments(ranked: SearchHit[], count: number): { content: string; score: number }[] {
  const byFile = new Map<string, { parts: string[]; score: number }>();
  for (const h of ranked) {
    const doc = byFile.get(h.chunk.file_id);
    if (doc) doc.parts.push(h.chunk.content);
    else if (byFile.size < count) byFile.set(h.chunk.file_id, { parts: [h.chunk.content], score: h.similarity_score });
  }
  return [...byFile.values()].map((d) => ({ content: d.parts.join("\n"), score: d.score }));
}

export async function searchChunks(ctx: SearchDeps, req: SearchRequest): Promise<SearchOutcome> {
  const offset = req.offset ?? 0;
  const perDocument = req.perDocument ?? (req.documentIds ? Number.MAX_SAFE_INTEGER : 1);
  const wanted = offset + req.limit;
  const depth = Math.min(MAX_NEIGHBOURS, Math.max(MIN_CANDIDATES, wanted * (perDocument === 1 ? CHUNKS_PER_RESULT : 1)));
  const mode = req.mode ?? "hybrid";
  const index = keywordIndexOf(ctx.sql);
  const terms = mode === "vector" ? [] : await keywordTerms(index, req.query);
  let keyword = await keywordCandidates(ctx.sql, index, req, depth, terms);
  const vector: VectorSide =
    mode === "keyword" ? { space: null, query: null, rows: [], model: null, reason: "not asked for (mode keyword)" } : await vectorCandidates(ctx, req, depth);
  const useVector = vector.reason === null;
  const weights = weightsOf(mode, vector, terms);
  let ranked = await fuse(req, mode, keyword, vector, weights);
  let expansion: SearchOutcome["signals"]["expansion"] = null;
  if (mode === "hybrid" && keyword.length) {
    // Pseudo-relevance feedback (query-expansion.ts): the best documents of this first ranking
    // lend their words to the keyword query, whose BM25 is then computed over the ranking's
    // best `depth` chunks (bm25.ts) and fused again. Chunks outside them are not looked for: in
    // an offline run on Cranfield, scoring every chunk instead changed nDCG@10 by < 0.001 and
    // Recall@100 by 0.002, at a cost growing with the index instead of the page.
    const feedback = feedbackDocuments(ranked, FEEDBACK_DOCUMENTS);
    const expanded = await expandQuery(index, terms, feedback);
    if (expanded.some((t) => !t.original)) {
      const pool = ranked.slice(0, depth).map((h) => h.chunk);
      const query = expanded.map((t) => ({ stem: t.stem, weight: t.bm25Weight, frequency: t.frequency }));
      const scores = weightedBm25(await index.totals(), query, pool.map((c) => ({ id: c.id, content: c.content, headings: c.heading_hierarchy })));
      keyword = pool.map((row, i) => ({ ...row, score: scores[i]! })).filter((row) => row.score > 0).sort((a, b) => b.score - a.score || a.seq - b.seq);
      ranked = await fuse(req, mode, keyword, vector, weights);
      expansion = {
        feedback_documents: feedback.length,
        terms: expanded.map((t) => ({ term: t.word, weight: round(t.weight), original: t.original })),
      };
    }
  }
  const threshold = req.similarityThreshold;
  const passes = (h: SearchHit) => threshold <= 0 || (useVector ? (h.vector_similarity ?? -1) >= threshold : h.similarity_score >= threshold);
  const perFile = new Map<string, number>();
  const kept = ranked.filter(passes).filter((h) => {
    const n = perFile.get(h.chunk.file_id) ?? 0;
    perFile.set(h.chunk.file_id, n + 1);
    return n < perDocument;
  });
  return {
    hits: kept.slice(offset, offset + req.limit),
    total: kept.length,
    signals: {
      keyword: mode !== "vector",
      vector: useVector,
      vector_model: vector.model,
      vector_unavailable_reason: vector.reason,
      configured_model_unavailable_reason: textModelFallbackReason(ctx.embedder),
      weights,
      expansion,
    },
  };
}
