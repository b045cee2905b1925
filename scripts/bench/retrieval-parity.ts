/**
 * Ranking parity of document search on SQLite and on PostgreSQL (issue 40), for bench:retrieval:
 * the chunks and vectors a bench run indexed into its SQLite data directory are copied into a
 * throwaway PostgreSQL cluster with pgvector (test/support/postgres.ts), and every judged query
 * runs through the same search code (src/documents/search.ts) on both, in this process, with one
 * text model instance (the same query vectors): SQLite's FTS5 and sqlite-vec spaces against
 * PostgreSQL's postings and pgvector HNSW spaces. The server cannot serve on PostgreSQL yet
 * (the ingest and document modules still write through the SQLite handle), which is why the
 * copy: what is compared is the two databases' indexes and queries, not the indexing.
 */
import type { Database } from "bun:sqlite";
import { systemClock } from "../../src/clock.ts";
import { openDatabase } from "../../src/db/database.ts";
import { openPostgres } from "../../src/db/postgres-database.ts";
import type { PostgresClient } from "../../src/db/postgres-client.ts";
import { SqliteClient } from "../../src/db/sqlite-client.ts";
import { searchChunks, type SearchDeps, type SearchMode } from "../../src/documents/search.ts";
import { BUILTIN_TEXT_MODEL } from "../../src/embeddings/text-models.ts";
import { TextEmbedder, type TextEmbedding } from "../../src/embeddings/text-embedder.ts";
import { UseSifEmbedder } from "../../src/embeddings/use-sif-embedder.ts";
import { PgVectorIndex } from "../../src/vectors/pgvector-index.ts";
import { SqliteVectorSpaces } from "../../src/vectors/sqlite-vector-spaces.ts";
import { findPostgres, startPostgres } from "../../test/support/postgres.ts";
import { HALVES, type Half } from "./splits.ts";

export interface ParityQuery {
  id: string;
  text: string;
}

export interface ParityInput {
  /** The bench run's SQLite database file (the server stopped). */
  databasePath: string;
  /** The text model the chunks were embedded with, and where folder models live. */
  model: string;
  modelsDir: string;
  queries: ParityQuery[];
  half: Map<string, Half>;
  /** nDCG@10 of one query's ranked file ids. */
  score(queryId: string, fileIds: string[]): number;
}

const MODES: SearchMode[] = ["keyword", "vector", "hybrid"];
/** The most nDCG@10 may differ between the two databases, relative (issue 40). */
const TOLERANCE = 0.01;

/** Prints each mode's nDCG@10 on both databases (all queries and each half) and the largest relative difference. */
export async function printRankingParity(input: ParityInput): Promise<void> {
  const binaries = findPostgres();
  if ("missing" in binaries || !binaries.vector) {
    console.log(`ranking parity on PostgreSQL: not measured (${"missing" in binaries ? binaries.missing : `the PostgreSQL in ${binaries.bin} has no pgvector`})`);
    return;
  }
  const db = openDatabase(input.databasePath);
  const embedder: TextEmbedding = input.model === BUILTIN_TEXT_MODEL ? new UseSifEmbedder(db) : new TextEmbedder({ modelsDir: input.modelsDir, model: input.model });
  const server = await startPostgres(binaries);
  let postgres: PostgresClient | null = null;
  try {
    postgres = await openPostgres(await server.createDatabase("retrieval"), { max: 4 });
    const copyStarted = performance.now();
    const pgVectors = new PgVectorIndex(postgres, systemClock);
    const copied = await copyIndexedChunks(db, postgres, pgVectors, input.model);
    const sqlite: SearchDeps = { sql: new SqliteClient(db), embedder, spaces: new SqliteVectorSpaces(db, systemClock) };
    const pg: SearchDeps = { sql: postgres, embedder, spaces: pgVectors };
    // The first search on PostgreSQL tokenizes the copied chunks into its postings: timed apart.
    const tokenizeStarted = performance.now();
    await searchChunks(pg, { orgId: copied.orgId, query: "warm up", limit: 1, similarityThreshold: 0, documentIds: null, mode: "keyword" });
    console.log(`ranking parity: copied ${copied.chunks} chunks and ${copied.vectors} vectors into PostgreSQL in ${((tokenizeStarted - copyStarted) / 1000).toFixed(1)} s, ` +
      `tokenized into its postings in ${((performance.now() - tokenizeStarted) / 1000).toFixed(1)} s`);
    let worst = 0;
    for (const mode of MODES) {
      const figures = [];
      for (const [name, deps] of [["SQLite", sqlite], ["PostgreSQL", pg]] as const) {
        const perQuery = new Map<string, number>();
        const times: number[] = [];
        for (const q of input.queries) {
          const started = performance.now();
          const outcome = await searchChunks(deps, { orgId: copied.orgId, query: q.text, limit: 100, similarityThreshold: 0, documentIds: null, mode });
          times.push(performance.now() - started);
          if (mode !== "keyword" && !outcome.signals.vector) throw new Error(`${name} ${mode} ran without vectors: ${outcome.signals.vector_unavailable_reason}`);
          perQuery.set(q.id, input.score(q.id, outcome.hits.map((h) => h.chunk.file_id)));
        }
        const mean = (ids: string[]) => ids.reduce((sum, id) => sum + perQuery.get(id)!, 0) / ids.length;
        const all = mean(input.queries.map((q) => q.id));
        const halves = HALVES.map((h) => `${h} ${mean(input.queries.filter((q) => input.half.get(q.id) === h).map((q) => q.id)).toFixed(3)}`).join(", ");
        times.sort((a, b) => a - b);
        figures.push({ name, all, text: `${name} ${all.toFixed(4)} (${halves}; p50 ${times[Math.floor(times.length / 2)]!.toFixed(1)} ms)` });
      }
      const [a, b] = figures as [(typeof figures)[0], (typeof figures)[0]];
      const difference = Math.abs(a.all - b.all) / Math.max(a.all, 1e-9);
      worst = Math.max(worst, difference);
      console.log(`  ${mode.padEnd(8)} nDCG@10 ${a.text}  ${b.text}  difference ${(difference * 100).toFixed(2)} %`);
    }
    console.log(`ranking parity SQLite / PostgreSQL: largest nDCG@10 difference ${(worst * 100).toFixed(2)} % (target <= ${TOLERANCE * 100} %): ${worst <= TOLERANCE ? "yes" : "NO"}`);
  } finally {
    await postgres?.close();
    await server.stop();
    await embedder.close();
    db.close();
  }
}

/** Copies what document search reads (organizations, projects, files, chunks, the model's text vectors) from SQLite to PostgreSQL. */
async function copyIndexedChunks(db: Database, pg: PostgresClient, pgVectors: PgVectorIndex, model: string): Promise<{ orgId: string; chunks: number; vectors: number }> {
  const copy = async (table: string, columns: string[], types: string[]) => {
    const rows = db.query<Record<string, unknown>, []>(`SELECT ${columns.join(", ")} FROM ${table}`).all();
    await pg.run(
      `INSERT INTO ${table} (${columns.join(", ")}) SELECT ${columns.join(", ")} FROM jsonb_to_recordset(?::text::jsonb) AS r(${columns.map((c, i) => `${c} ${types[i]}`).join(", ")})`,
      [JSON.stringify(rows)],
    );
    return rows.length;
  };
  await copy("organizations", ["id", "name", "name_key", "tier", "created_at"], ["text", "text", "text", "text", "text"]);
  await copy("projects", ["id", "org_id", "name", "name_key", "created_at", "updated_at"], ["text", "text", "text", "text", "text", "text"]);
  await copy("files", ["id", "org_id", "project_id", "media_type", "filename", "created_at", "updated_at", "deleted_at"], ["text", "text", "text", "text", "text", "text", "text", "text"]);
  const chunkColumns = ["seq", "id", "file_id", "org_id", "chunk_index", "content", "page_numbers", "heading_hierarchy", "token_count", "chunk_type", "embedding_status", "embedding_model"];
  const chunks = await copy("document_chunks", chunkColumns, ["bigint", "text", "text", "text", "bigint", "text", "text", "text", "bigint", "text", "text", "text"]);
  const space = db.query<{ table_name: string; dimension: number }, [string]>("SELECT table_name, dimension FROM vector_spaces WHERE name = ?").get(`text:${model}`);
  if (!space) throw new Error(`no text vectors of ${model} in the bench's database`);
  const pgSpace = await pgVectors.open("text", model, space.dimension);
  const rows = db.query<{ item_id: string; org_id: string; embedding: Uint8Array }, []>(`SELECT item_id, org_id, embedding FROM ${space.table_name}`).all();
  for (const row of rows) await pgSpace.upsert(row.item_id, row.org_id, new Float32Array(row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.byteLength)));
  const org = db.query<{ org_id: string }, []>("SELECT org_id FROM document_chunks LIMIT 1").get();
  return { orgId: org!.org_id, chunks, vectors: rows.length };
}
