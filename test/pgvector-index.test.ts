/**
 * Vector spaces on PostgreSQL with pgvector (src/vectors/pgvector-index.ts) against the SQLite
 * spaces the appliance uses today, on the same vectors: nearest neighbours match the exact scan's
 * (recall@10 >= 0.95 per organization as the planner answers them, and through the HNSW index
 * alone, but for a tenant holding 2 % of the table: >= 0.85; the same similarities), an organization never sees
 * another's vectors and a small organization in a large table still gets k neighbours (iterative
 * index scans), upserts replace, removals remove, and a model's dimension is fixed. Skips, saying
 * why, where no PostgreSQL with pgvector is found.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { systemClock } from "../src/clock.ts";
import { openDatabase, type Database } from "../src/db/database.ts";
import { openPostgres } from "../src/db/postgres-database.ts";
import { PostgresClient } from "../src/db/postgres-client.ts";
import { PgVectorIndex, type PgVectorSpace } from "../src/vectors/pgvector-index.ts";
import { SqliteVectorSpaces, type SqliteVectorSpace } from "../src/vectors/sqlite-vector-spaces.ts";
import { postgresOrSkip, startPostgres, type TestPostgres } from "./support/postgres.ts";

const found = postgresOrSkip();
const binaries = found?.vector ? found : null;
if (found && !found.vector) console.warn(`skipping the pgvector tests: the PostgreSQL in ${found.bin} has no pgvector extension`);

const DIM = 64;
/** Rows per organization: a large, a middling and a small tenant in one table. */
const ORGS = { big: 1_500, mid: 300, small: 40 } as const;

/** A deterministic generator (mulberry32), so a failure reproduces. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const next = random(40);
const gaussian = () => Math.sqrt(-2 * Math.log(next() || 1e-12)) * Math.cos(2 * Math.PI * next());
/** Clustered vectors, as embeddings are: 24 centres, each vector a centre plus noise. */
const centres = Array.from({ length: 24 }, () => Float32Array.from({ length: DIM }, gaussian));
const near = (centre: Float32Array, noise: number) => centre.map((v) => v + noise * gaussian());

let sqliteDb: Database;
let sqliteSpace: SqliteVectorSpace;
let pg: TestPostgres | null = null;
let client: PostgresClient | null = null;
let pgUrl = "";
let pgIndex: PgVectorIndex;
let pgSpace: PgVectorSpace;
/**
 * The same space through connections that may not sort or scan the table, so every nearest-
 * neighbour query walks the HNSW index: on tables this small the planner rightly prefers the
 * organization's rows sorted exactly, which would leave the index untested.
 */
let hnswOnly: PostgresClient | null = null;
let hnswSpace: PgVectorSpace;
const owner = new Map<string, string>();

beforeAll(async () => {
  if (!binaries) return;
  sqliteDb = openDatabase(":memory:");
  sqliteSpace = await new SqliteVectorSpaces(sqliteDb, systemClock).open("image", "fixture-clip", DIM);
  pg = await startPostgres(binaries);
  pgUrl = await pg.createDatabase("vectors");
  client = await openPostgres(pgUrl, { max: 4 });
  pgIndex = new PgVectorIndex(client, systemClock);
  pgSpace = await pgIndex.open("image", "fixture-clip", DIM);
  hnswOnly = new PostgresClient(pgUrl, { max: 2, settings: { enable_sort: "off", enable_seqscan: "off", enable_bitmapscan: "off" } });
  hnswSpace = (await new PgVectorIndex(hnswOnly, systemClock).find("image", "fixture-clip"))!;
  for (const [org, count] of Object.entries(ORGS)) {
    for (let i = 0; i < count; i++) {
      const id = `${org}-${i}`;
      const vector = near(centres[Math.floor(next() * centres.length)]!, 0.6);
      owner.set(id, org);
      await sqliteSpace.upsert(id, org, vector);
      await pgSpace.upsert(id, org, vector);
    }
  }
}, 180_000);

afterAll(async () => {
  await hnswOnly?.close();
  await client?.close();
  await pg?.stop();
  sqliteDb?.close();
});

describe.skipIf(!binaries)("vector spaces on pgvector", () => {
  test("nearest neighbours match the exact scan's in every organization, as planned and through HNSW alone (recall@10), with the same similarities; no other organization's items", async () => {
    const table = (await client!.one<{ table_name: string }>("SELECT table_name FROM vector_spaces"))!.table_name;
    const plan = await hnswOnly!.all<{ "QUERY PLAN": string }>(`EXPLAIN SELECT item_id FROM ${table} WHERE org_id = 'small' ORDER BY embedding <=> ?::vector LIMIT 10`, [`[${new Array(DIM).fill(0.1).join(",")}]`]);
    expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toContain(`${table}_hnsw`);
    const recalls: Record<string, number> = {};
    for (const [name, space] of [["planner", pgSpace], ["hnsw", hnswSpace]] as const) {
      for (const org of Object.keys(ORGS)) {
        let hits = 0;
        const queries = 20;
        for (let q = 0; q < queries; q++) {
          const query = near(centres[q % centres.length]!, 0.8);
          const norm = Math.hypot(...query);
          const unitQuery = query.map((v) => v / norm);
          const exact = await sqliteSpace.nearest(org, unitQuery, 10);
          const found = await space.nearest(org, unitQuery, 10);
          // The small organization's 40 rows are 2 % of the table: the filtered index scan goes on until it has 10.
          expect(found).toHaveLength(10);
          expect(found.every((n) => owner.get(n.itemId) === org)).toBe(true);
          const exactById = new Map(exact.map((n) => [n.itemId, n.similarity]));
          for (const n of found) {
            const similarity = exactById.get(n.itemId);
            if (similarity === undefined) continue;
            hits++;
            expect(Math.abs(similarity - n.similarity)).toBeLessThan(1e-4);
          }
          // Most similar first.
          expect(found.map((n) => n.similarity)).toEqual([...found.map((n) => n.similarity)].sort((a, b) => b - a));
        }
        recalls[`${name}:${org}`] = hits / (queries * 10);
      }
    }
    console.log(`pgvector recall@10 against the exact scan: ${JSON.stringify(recalls)}`);
    // Measured: 1.0 everywhere but the HNSW walk for the 2 % organization (0.93; 0.905 with
    // pgvector's default ef_search of 40), which the planner answers from the organization's rows.
    for (const [name, recall] of Object.entries(recalls)) expect({ name, ok: recall >= (name === "hnsw:small" ? 0.85 : 0.95) }).toEqual({ name, ok: true });
  });

  test("similarities of named items agree with the SQLite space; upsert replaces, remove removes", async () => {
    const query = near(centres[3]!, 0.5);
    const norm = Math.hypot(...query);
    const unitQuery = query.map((v) => v / norm);
    const ids = ["mid-0", "mid-1", "mid-2", "big-5"];
    const expected = await sqliteSpace.similarities("mid", unitQuery, ids);
    const actual = await pgSpace.similarities("mid", unitQuery, ids);
    expect([...actual.keys()].sort()).toEqual(["mid-0", "mid-1", "mid-2"]);
    for (const [id, similarity] of actual) expect(Math.abs(similarity - expected.get(id)!)).toBeLessThan(1e-4);

    await pgSpace.upsert("small-0", "small", unitQuery.map((v) => v * 3));
    const stored = await pgSpace.get("small-0");
    expect(Math.abs(stored!.reduce((sum, v, i) => sum + v * unitQuery[i]!, 0) - 1)).toBeLessThan(1e-5);
    expect((await pgSpace.nearest("small", unitQuery, 1))[0]?.itemId).toBe("small-0");
    await pgSpace.remove(["small-0"]);
    expect(await pgSpace.get("small-0")).toBeNull();
    expect((await pgSpace.nearest("small", unitQuery, 50)).map((n) => n.itemId)).not.toContain("small-0");
  });

  test("a model's space keeps its dimension; reopening finds the same table", async () => {
    await expect(pgIndex.open("image", "fixture-clip", DIM + 1)).rejects.toThrow(/holds 64-d vectors/);
    const again = await pgIndex.open("image", "fixture-clip", DIM);
    expect((await again.nearest("big", centres[0]!.map((v) => v / Math.hypot(...centres[0]!)), 3))).toHaveLength(3);
    await expect(pgSpace.upsert("x", "big", new Float32Array(3))).rejects.toThrow(/expected a 64-d vector/);
  });

  test("a new model's space opened by several at once is created once, and every opener can write to it", async () => {
    // As two documents' first embeddings do side by side (each its own connection of the pool).
    const opened = await Promise.all(Array.from({ length: 6 }, () => pgIndex.open("text", "fixture-race", 8)));
    await Promise.all(opened.map((space, i) => space.upsert(`race-${i}`, "big", Float32Array.from({ length: 8 }, (_, k) => k + i + 1))));
    expect((await opened[0]!.nearest("big", Float32Array.from({ length: 8 }, (_, k) => k + 1), 10)).map((n) => n.itemId).sort()).toEqual(opened.map((_, i) => `race-${i}`));
    expect(Number((await client!.one<{ n: number }>("SELECT count(*) AS n FROM vector_spaces WHERE model = 'fixture-race'"))!.n)).toBe(1);
  });
});
