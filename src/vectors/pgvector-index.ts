/**
 * Vector spaces in PostgreSQL with pgvector, for processes sharing one database
 * (docs/scale-out.md): one table per (purpose, model) as on SQLite (a `vector(n)` column has a
 * fixed dimension and two models' vectors are not comparable), registered in the same
 * `vector_spaces` table, with an HNSW index for cosine distance. Vectors are stored unit-length,
 * as VectorSpace stores them, so similarities agree with the SQLite scan's.
 *
 * A nearest-neighbour query filters by organization; an approximate index scan filtered after the
 * fact can come back short when the organization's rows are a small part of the table, so queries
 * use pgvector's iterative index scans (0.8+: the scan goes on until it has k rows of the
 * organization, in exact distance order).
 *
 * Asynchronous throughout, like the data-access port: document search reads through this
 * interface (vector-spaces.ts) on both databases; the image and text features call the
 * synchronous VectorIndex today, and move to it with their modules.
 */
import type { SqlClient } from "../db/sql-client.ts";
import { isoAt, type Clock } from "../clock.ts";
import { MAX_NEIGHBOURS, tableNameFor, type Neighbour, type VectorPurpose } from "./vector-index.ts";
import type { VectorSpaces, WritableSpace } from "./vector-spaces.ts";

/** HNSW candidates per query: pgvector's default is 40; at least k, at most pgvector's 1,000. */
const efSearch = (k: number) => Math.min(1_000, Math.max(100, 4 * k));

function unit(input: Float32Array): Float32Array {
  const norm = Math.sqrt(input.reduce((sum, v) => sum + v * v, 0)) || 1;
  return input.map((v) => v / norm);
}

/** pgvector's text form; the client sends it as a parameter cast with `::vector`. */
const literal = (vector: Float32Array) => `[${Array.from(vector).join(",")}]`;

export class PgVectorIndex implements VectorSpaces {
  constructor(
    private readonly db: SqlClient,
    private readonly clock: Clock,
  ) {}

  /** Opens the space for a model, creating its table and index on first use. */
  async open(purpose: VectorPurpose, model: string, dimension: number): Promise<PgVectorSpace> {
    const name = `${purpose}:${model}`;
    const existing = await this.find(purpose, model);
    if (existing) {
      if (existing.dimension !== dimension) {
        throw new Error(`vector space ${name} holds ${existing.dimension}-d vectors but the model now gives ${dimension}-d; re-index after changing models`);
      }
      return existing;
    }
    const table = tableNameFor(purpose, model, dimension);
    await this.db.transaction(async (tx) => {
      await tx.run(`CREATE TABLE IF NOT EXISTS ${table} (item_id TEXT PRIMARY KEY, org_id TEXT NOT NULL, embedding vector(${dimension}) NOT NULL)`);
      await tx.run(`CREATE INDEX IF NOT EXISTS ${table}_org ON ${table} (org_id)`);
      await tx.run(`CREATE INDEX IF NOT EXISTS ${table}_hnsw ON ${table} USING hnsw (embedding vector_cosine_ops)`);
      await tx.run(
        "INSERT INTO vector_spaces (name, purpose, model, dimension, table_name, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [name, purpose, model, dimension, table, isoAt(this.clock.now())],
      );
    });
    return new PgVectorSpace(this.db, name, model, dimension, table);
  }

  async find(purpose: VectorPurpose, model: string): Promise<PgVectorSpace | null> {
    const row = await this.db.one<{ name: string; model: string; dimension: number; table_name: string }>("SELECT * FROM vector_spaces WHERE name = ?", [`${purpose}:${model}`]);
    return row ? new PgVectorSpace(this.db, row.name, row.model, row.dimension, row.table_name) : null;
  }

  async all(purpose: VectorPurpose): Promise<PgVectorSpace[]> {
    const rows = await this.db.all<{ name: string; model: string; dimension: number; table_name: string }>("SELECT * FROM vector_spaces WHERE purpose = ?", [purpose]);
    return rows.map((row) => new PgVectorSpace(this.db, row.name, row.model, row.dimension, row.table_name));
  }
}

export class PgVectorSpace implements WritableSpace {
  constructor(
    private readonly db: SqlClient,
    readonly name: string,
    readonly model: string,
    readonly dimension: number,
    private readonly table: string,
  ) {}

  async upsert(itemId: string, orgId: string, input: Float32Array, tx: SqlClient = this.db): Promise<void> {
    if (input.length !== this.dimension) throw new Error(`expected a ${this.dimension}-d vector, got ${input.length}-d`);
    await tx.run(
      `INSERT INTO ${this.table} (item_id, org_id, embedding) VALUES (?, ?, ?::vector)
       ON CONFLICT (item_id) DO UPDATE SET org_id = excluded.org_id, embedding = excluded.embedding`,
      [itemId, orgId, literal(unit(input))],
    );
  }

  async remove(itemIds: string[], tx: SqlClient = this.db): Promise<void> {
    if (itemIds.length === 0) return;
    await tx.run(`DELETE FROM ${this.table} WHERE item_id IN (${itemIds.map(() => "?").join(", ")})`, itemIds);
  }

  async get(itemId: string): Promise<Float32Array | null> {
    return (await this.vectorsOf([itemId])).get(itemId) ?? null;
  }

  async vectorsOf(itemIds: readonly string[]): Promise<Map<string, Float32Array>> {
    if (itemIds.length === 0) return new Map();
    const rows = await this.db.all<{ item_id: string; embedding: string }>(
      `SELECT item_id, embedding::text AS embedding FROM ${this.table} WHERE item_id IN (${this.db.dialect.jsonValues})`,
      [JSON.stringify(itemIds)],
    );
    return new Map(rows.map((row) => [row.item_id, Float32Array.from(JSON.parse(row.embedding) as number[])]));
  }

  /** Cosine similarity of each of `itemIds` (of one organization) to `vector`; ids without a vector are left out. */
  async similarities(orgId: string, vector: Float32Array, itemIds: string[]): Promise<Map<string, number>> {
    if (itemIds.length === 0) return new Map();
    const rows = await this.db.all<{ item_id: string; distance: number }>(
      `SELECT item_id, embedding <=> ?::vector AS distance FROM ${this.table}
       WHERE org_id = ? AND item_id IN (${itemIds.map(() => "?").join(", ")})`,
      [literal(vector), orgId, ...itemIds],
    );
    return new Map(rows.map((row) => [row.item_id, 1 - row.distance]));
  }

  /** The k nearest items of one organization by cosine similarity, most similar first (HNSW). */
  async nearest(orgId: string, vector: Float32Array, k: number): Promise<Neighbour[]> {
    const limit = Math.max(1, Math.min(MAX_NEIGHBOURS, k));
    return this.db.transaction(async (tx) => {
      // Both settings for this transaction only (set_config's third argument), in one round trip.
      await tx.run("SELECT set_config('hnsw.ef_search', ?, true), set_config('hnsw.iterative_scan', 'strict_order', true)", [String(efSearch(limit))]);
      const rows = await tx.all<{ item_id: string; distance: number }>(
        `SELECT item_id, embedding <=> ?::vector AS distance FROM ${this.table} WHERE org_id = ? ORDER BY embedding <=> ?::vector LIMIT ?`,
        [literal(vector), orgId, literal(vector), limit],
      );
      return rows.map((row) => ({ itemId: row.item_id, similarity: 1 - row.distance }));
    });
  }
}
