/**
 * Document search (src/documents/search.ts) through the data-access port, on SQLite (FTS5 and the
 * sqlite-vec spaces) and on PostgreSQL (the app's BM25 over postings, pgvector spaces), with the
 * same assertions: the keyword scores are FTS5's bm25() to nine digits (PostgreSQL's postings hold
 * FTS5's own tokens and stems), vector search ranks by the exact cosine, hybrid results and scores
 * agree across the two, a search never sees another organization's or a deleted file's chunks,
 * document_ids scope it, and chunks stored or deleted after a search count at the next one
 * (PostgreSQL tokenizes them then, each chunk once though two processes search at once). The PostgreSQL half skips, saying why, where no server with
 * pgvector is found.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { systemClock } from "../src/clock.ts";
import { openDatabase, type Database } from "../src/db/database.ts";
import { openPostgres } from "../src/db/postgres-database.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import { SqliteClient } from "../src/db/sqlite-client.ts";
import { keywordIndexOf } from "../src/documents/keyword-index.ts";
import { keywordTerms } from "../src/documents/keyword-query.ts";
import { searchChunks, type SearchDeps, type SearchMode, type SearchOutcome } from "../src/documents/search.ts";
import { TextEmbedder } from "../src/embeddings/text-embedder.ts";
import { PgVectorIndex } from "../src/vectors/pgvector-index.ts";
import { SqliteVectorSpaces } from "../src/vectors/sqlite-vector-spaces.ts";
import type { VectorSpaces } from "../src/vectors/vector-spaces.ts";
import { buildFixtureEmbeddingModel } from "./support/embedding-model.ts";
import { postgresOrSkip, startPostgres, type TestPostgres } from "./support/postgres.ts";
import { tempDir } from "./support/temp-dir.ts";

const found = postgresOrSkip();
const binaries = found?.vector ? found : null;
if (found && !found.vector) console.warn(`skipping the PostgreSQL search tests: the PostgreSQL in ${found.bin} has no pgvector extension`);

const NOW = "2026-01-01T00:00:00.000Z";
/** Files of the corpus: [file id, organization, deleted]. */
const FILES: [string, string, boolean][] = [
  ["f-flutter", "org-a", false],
  ["f-heat", "org-a", false],
  ["f-layers", "org-a", false],
  ["f-deleted", "org-a", true],
  ["f-other", "org-b", false],
];
/** Chunks: [seq, file, content, headings]. */
const CHUNKS: [number, string, string, string][] = [
  [1, "f-flutter", "Supersonic flutter of flat panels at high Mach numbers", '["Panel flutter"]'],
  [2, "f-flutter", "Flutter of wings in subsonic flow; the flutter speed was measured in the tunnel", "[]"],
  [3, "f-flutter", "Panels buckle when heated, and supersonic speeds make the buckling worse", '["Buckling"]'],
  [4, "f-heat", "Heat transfer to a flat plate in hypersonic flow with a laminar boundary layer", '["Heating"]'],
  [5, "f-heat", "Heat transfer measured at Mach 6 on a cone; the heating rates agree with theory", "[]"],
  [6, "f-layers", "Boundary layer transition on cones and flat plates at supersonic speeds", "[]"],
  [7, "f-layers", "The turbulent boundary layer thickens downstream; skin friction falls", '["Turbulence"]'],
  [8, "f-deleted", "Flutter of panels in supersonic flow, a deleted report", "[]"],
  [9, "f-other", "Panel flutter at supersonic speed in another organization's library", "[]"],
];

let embedder: TextEmbedder;
const vectors = new Map<string, Float32Array>();
let sqliteDb: Database;
let pg: TestPostgres | null = null;
const engines: Record<"sqlite" | "postgres", SearchDeps | null> = { sqlite: null, postgres: null };
let postgresUrl = "";

const chunkId = (seq: number) => `chunk-${seq}`;

async function seed(sql: SqlClient, open: (dim: number) => Promise<{ upsert(id: string, org: string, v: Float32Array): unknown }>): Promise<void> {
  for (const org of ["org-a", "org-b"]) {
    await sql.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, 'ENTERPRISE', ?)", [org, org, org, NOW]);
    await sql.run("INSERT INTO projects (id, org_id, name, name_key, created_at, updated_at) VALUES (?, ?, 'Default', 'default', ?, ?)", [`p-${org}`, org, NOW, NOW]);
  }
  for (const [id, org, deleted] of FILES) {
    await sql.run(
      "INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, deleted_at) VALUES (?, ?, ?, 'document', ?, ?, ?, ?)",
      [id, org, `p-${org}`, `${id}.txt`, NOW, NOW, deleted ? NOW : null],
    );
  }
  const space = await open((await embedder.dimension()));
  for (const [seq, file, content, headings] of CHUNKS) await addChunk(sql, space, seq, file, content, headings);
}

async function addChunk(sql: SqlClient, space: { upsert(id: string, org: string, v: Float32Array): unknown }, seq: number, file: string, content: string, headings: string): Promise<void> {
  const org = FILES.find(([id]) => id === file)?.[1] ?? "org-a";
  await sql.run(
    `INSERT INTO document_chunks (seq, id, file_id, org_id, chunk_index, content, page_numbers, heading_hierarchy, token_count, chunk_type, embedding_status, embedding_model)
     VALUES (?, ?, ?, ?, ?, ?, '[1]', ?, 12, 'text', 'completed', ?)`,
    [seq, chunkId(seq), file, org, seq, content, headings, embedder.modelId],
  );
  let vector = vectors.get(content);
  if (!vector) vectors.set(content, (vector = (await embedder.embed([content]))[0]!));
  await space.upsert(chunkId(seq), org, vector);
}

beforeAll(async () => {
  const modelsDir = tempDir("mediabox-search-models-");
  await buildFixtureEmbeddingModel(modelsDir);
  embedder = new TextEmbedder({ modelsDir, model: "all-MiniLM-L6-v2" });
  sqliteDb = openDatabase(join(tempDir("mediabox-search-"), "search.db"));
  const sqliteSql = new SqliteClient(sqliteDb);
  const sqliteVectors = new SqliteVectorSpaces(sqliteDb, systemClock);
  await seed(sqliteSql, (dim) => sqliteVectors.open("text", embedder.modelId, dim));
  engines.sqlite = { sql: sqliteSql, embedder, spaces: sqliteVectors };
  if (binaries) {
    pg = await startPostgres(binaries);
    postgresUrl = await pg.createDatabase("search");
    const client = await openPostgres(postgresUrl, { max: 3 });
    const pgVectors = new PgVectorIndex(client, systemClock);
    await seed(client, (dim) => pgVectors.open("text", embedder.modelId, dim));
    engines.postgres = { sql: client, embedder, spaces: pgVectors as VectorSpaces };
  }
}, 180_000);

afterAll(async () => {
  await engines.postgres?.sql.close();
  await pg?.stop();
  sqliteDb?.close();
  await embedder?.close();
});

const search = (deps: SearchDeps, query: string, mode: SearchMode, extra: { documentIds?: string[]; orgId?: string } = {}) =>
  searchChunks(deps, { orgId: extra.orgId ?? "org-a", query, limit: 20, similarityThreshold: 0, documentIds: extra.documentIds ?? null, perDocument: 100, mode });

const ids = (outcome: SearchOutcome) => outcome.hits.map((h) => h.chunk.id);

/** FTS5's own bm25() for a query over the SQLite chunks of org-a's files that are not deleted. */
function fts5Scores(query: string): Map<string, number> {
  const words = query.split(" ").map((w) => `"${w}"`).join(" OR ");
  return new Map(
    sqliteDb
      .query<{ id: string; score: number }, [string]>(
        `SELECT c.id, -bm25(chunks_fts, 1.0, 0.5) AS score FROM chunks_fts JOIN document_chunks c ON c.seq = chunks_fts.rowid
         JOIN files f ON f.id = c.file_id WHERE chunks_fts MATCH ? AND c.org_id = 'org-a' AND f.deleted_at IS NULL`,
      )
      .all(words)
      .map((r) => [r.id, r.score]),
  );
}

describe.each(["sqlite", "postgres"] as const)("document search on %s", (name) => {
  const skip = name === "postgres" && !binaries;
  const deps = () => engines[name]!;

  test.skipIf(skip)("keyword scores are FTS5's bm25(), best first, for one organization's live files", async () => {
    const query = "flutter panels supersonic";
    const index = keywordIndexOf(deps().sql);
    const terms = await keywordTerms(index, query);
    expect(terms.map((t) => t.stem).sort()).toEqual(["flutter", "panel", "superson"]);
    const ranked = await index.ranked({ orgId: "org-a", documentIds: null }, terms, 50);
    const expected = fts5Scores(query);
    expect(ranked.length).toBe(expected.size);
    for (const r of ranked) expect(r.score).toBeCloseTo(expected.get(chunkId(r.seq))!, 9);
    const outcome = await search(deps(), query, "keyword");
    // Chunk 1 holds all three words (and "Panel flutter" in its headings); 8 is deleted, 9 another organization's.
    expect(ids(outcome)[0]).toBe("chunk-1");
    expect(ids(outcome)).not.toContain("chunk-8");
    expect(ids(outcome)).not.toContain("chunk-9");
    expect(new Set(ids(outcome))).toEqual(new Set([...expected.keys()]));
    expect(outcome.signals).toMatchObject({ keyword: true, vector: false });
  });

  test.skipIf(skip)("the index's totals and term counts are FTS5's", async () => {
    const index = keywordIndexOf(deps().sql);
    const reference = keywordIndexOf(engines.sqlite!.sql);
    expect(await index.totals()).toEqual(await reference.totals());
    const stems = ["flutter", "boundari", "heat", "nowher"];
    expect(await index.frequencies(stems)).toEqual(await reference.frequencies(stems));
    // As FTS5 counts: every organization's chunks, deleted files' too (1, 2, 8 and 9).
    expect((await index.frequencies(stems)).get("flutter")).toBe(4);
    expect(await index.cappedFrequency({ word: "flutter", stem: "flutter" }, 1)).toBe(2);
  });

  test.skipIf(skip)("vector search ranks by the exact cosine", async () => {
    const query = "heat transfer in hypersonic flow";
    const [q] = await embedder.embed([query], "query");
    const live = CHUNKS.filter(([, file]) => ["f-flutter", "f-heat", "f-layers"].includes(file));
    const cosine = (v: Float32Array) => v.reduce((sum, x, i) => sum + x * q![i]!, 0) / Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    const expected = live.map(([seq, , content]) => ({ id: chunkId(seq), similarity: cosine(vectors.get(content)!) })).sort((a, b) => b.similarity - a.similarity);
    const outcome = await search(deps(), query, "vector");
    expect(ids(outcome)).toEqual(expected.map((e) => e.id));
    outcome.hits.forEach((h, i) => expect(h.vector_similarity!).toBeCloseTo(expected[i]!.similarity, 3));
    expect(outcome.signals).toMatchObject({ keyword: false, vector: true, vector_model: embedder.modelId });
  });

  test.skipIf(skip)("hybrid results and scores are the same as on SQLite, with document_ids and organizations kept apart", async () => {
    for (const query of ["supersonic panel flutter", "boundary layer on flat plates", "heating of cones at Mach 6"]) {
      const ours = await search(deps(), query, "hybrid");
      const reference = await search(engines.sqlite!, query, "hybrid");
      expect(ids(ours)).toEqual(ids(reference));
      ours.hits.forEach((h, i) => {
        expect(h.similarity_score).toBeCloseTo(reference.hits[i]!.similarity_score, 3);
        expect(h.keyword_score).toEqual(reference.hits[i]!.keyword_score);
      });
      expect(ours.signals.expansion?.terms).toEqual(reference.signals.expansion?.terms);
    }
    const scoped = await search(deps(), "supersonic flutter boundary", "hybrid", { documentIds: ["f-layers"] });
    expect(scoped.hits.length).toBeGreaterThan(0);
    expect(scoped.hits.every((h) => h.chunk.file_id === "f-layers")).toBe(true);
    const other = await search(deps(), "panel flutter", "hybrid", { orgId: "org-b" });
    expect(ids(other)).toEqual(["chunk-9"]);
  });

  test.skipIf(skip)("chunks stored or deleted after a search count at the next one", async () => {
    const sql = deps().sql;
    const index = keywordIndexOf(sql);
    const before = await index.totals();
    expect(ids(await search(deps(), "aeroelastic divergence", "keyword"))).toEqual([]);
    const space = { upsert: async () => {} };
    await addChunk(sql, space, 20, "f-flutter", "Aeroelastic divergence of a swept wing", "[]");
    expect(ids(await search(deps(), "aeroelastic divergence", "keyword"))).toEqual(["chunk-20"]);
    expect((await index.totals()).rows).toBe(before.rows + 1);
    await sql.run("DELETE FROM document_chunks WHERE seq = 20");
    expect(ids(await search(deps(), "aeroelastic divergence", "keyword"))).toEqual([]);
    expect(await index.totals()).toEqual(before);
  });
});

describe.skipIf(!binaries)("the keyword index on PostgreSQL", () => {
  test("two processes searching at once tokenize each stored chunk once", async () => {
    const sql = engines.postgres!.sql;
    const other = await openPostgres(postgresUrl, { max: 2 });
    try {
      const before = await keywordIndexOf(sql).totals();
      const count = 1_234;
      await sql.run(
        `INSERT INTO document_chunks (seq, id, file_id, org_id, chunk_index, content, page_numbers, heading_hierarchy, token_count, chunk_type, embedding_status)
         SELECT 1000 + n, 'bulk-' || n, 'f-layers', 'org-a', 1000 + n, 'shock tube number ' || n, '[1]', '[]', 4, 'text', 'pending' FROM generate_series(1, ?) AS n`,
        [count],
      );
      // Each client is another process's keyword index; both take queued chunks at once.
      await Promise.all([keywordIndexOf(sql).ready(), keywordIndexOf(other).ready()]);
      const after = await keywordIndexOf(other).totals();
      expect(after.rows).toBe(before.rows + count);
      expect((await keywordIndexOf(sql).frequencies(["shock"])).get("shock")).toBe(count);
      expect((await sql.one<{ n: number }>("SELECT count(*) AS n FROM chunks_fts"))!.n).toBe(0);
      // "shock tube number n": four tokens each, whatever process counted them.
      expect(after.averageLength * after.rows).toBeCloseTo(before.averageLength * before.rows + 4 * count, 6);
      await sql.run("DELETE FROM document_chunks WHERE seq > 1000");
      expect(await keywordIndexOf(other).totals()).toEqual(before);
    } finally {
      await other.close();
    }
  });
});
