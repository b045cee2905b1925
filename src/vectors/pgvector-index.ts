/**
 * Vector spaces in PostgreSQL with pgvector, for processes sharing one database
 * (docs/scale-out.md): one table per (purpose, model) as on SQLite (a `vector(n)` column has a
 * fixed dimension and two models' vectors are not comparable), registered in the same
 * `vector_spaces` table, with an HNSW index for cosine distance. Vectors are stored unit-length,
 * as the SQLite spaces store them, so similarities agree with the SQLite scan's.
 *
 * A nearest-neighbour query filters by organization; an approximate index scan filtered after the
 * fact can come back short when the organization's rows are a small part of the table, so queries
 * use pgvector's iterative index scans (0.8+: the scan goes on until it has k rows of the
 * organization, in exact distance order).
 *
 * Asynchronous throughout, like the data-access port; the features see it, and SQLite's spaces,
 * through the one interface of vector-spaces.ts. A write given `tx` is a statement of that
 * transaction.
 */
import { atomically, type SqlClient } from "../db/sql-client.ts";
import { isoAt, type Clock } from "../clock.ts";
import { MAX_NEIGHBOURS, tableNameFor, unitLength, type Neighbour, type VectorPurpose, type VectorSpaces, type WritableSpace } from "./vector-spaces.ts";

/** HNSW candidates per query: pgvector's default is 40; at least k, at most pgvector's 1,000. */
const efSearch = (k: number) => Math.min(1_000, Math.max(100, 4 * k));

/** Rows an insert writes at most: three parameters a row, within PostgreSQL's 65,535. */
const ROWS_PER_INSERT = 1_000;

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
      // Two first uses at once (two documents embedded side by side, or two processes) would both
      // create the table, and PostgreSQL's IF NOT EXISTS does not hold against a concurrent creation
      // (the second fails on pg_type's unique index): the second waits for the first, then finds it.
      await tx.one(tx.dialect.transactionLock(table));
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

  upsert(itemId: string, orgId: string, vector: Float32Array, tx?: SqlClient): Promise<void> {
    return this.upsertMany(orgId, [[itemId, vector]], tx);
  }

  async upsertMany(orgId: string, items: readonly (readonly [string, Float32Array])[], tx: SqlClient = this.db): Promise<void> {
    for (const [, input] of items) if (input.length !== this.dimension) throw new Error(`expected a ${this.dimension}-d vector, got ${input.length}-d`);
    // One statement may not update a row twice: an item given twice keeps its last vector.
    const rows = [...new Map(items.map(([itemId, input]) => [itemId, input])).entries()];
    if (rows.length === 0) return;
    const write = async (db: SqlClient) => {
      for (let at = 0; at < rows.length; at += ROWS_PER_INSERT) {
        const slice = rows.slice(at, at + ROWS_PER_INSERT);
        await db.run(
          `INSERT INTO ${this.table} (item_id, org_id, embedding) VALUES ${slice.map(() => "(?, ?, ?::vector)").join(", ")}
           ON CONFLICT (item_id) DO UPDATE SET org_id = excluded.org_id, embedding = excluded.embedding`,
          slice.flatMap(([itemId, input]) => [itemId, orgId, literal(unitLength(input))]),
        );
      }
    };
    await (rows.length > ROWS_PER_INSERT ? atomically(tx, write) : write(tx));
  }

  async remove(itemIds: readonly string[], tx: SqlClient = this.db): Promise<void> {
    if (itemIds.length === 0) return;
    await tx.run(`DELETE FROM ${this.table} WHERE item_id IN (${tx.dialect.jsonValues})`, [JSON.stringify(itemIds)]);
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
