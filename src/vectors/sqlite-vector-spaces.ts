/**
 * The vector spaces on SQLite (vector-spaces.ts), in sqlite-vec: one vec0 table per (purpose,
 * model), because a vec0 column has a fixed dimension and vectors of two models are not
 * comparable. Items are partitioned by organization so a nearest-neighbour query never sees
 * another tenant's vectors. The registry table `vector_spaces` records which table holds which
 * model. sqlite-vec is the store of record; nearest-neighbour queries scan an in-memory copy per
 * organization (memory-scan.ts), which is several times faster than vec0's own brute-force scan.
 *
 * Statements run synchronously on the one connection, as the port's SqliteClient runs them. A
 * write given a port transaction's `tx` runs on the connection that transaction holds, and
 * reaches the in-memory scans only once it commits (a write that rolled back is never found).
 * Without one, it commits with the turn's other writes (GroupCommit), or on its own where there
 * is none (tests, benchmarks).
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";
import type { GroupCommit } from "../db/group-commit.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { SqliteClient } from "../db/sqlite-client.ts";
import { MemoryScan } from "./memory-scan.ts";
import { MAX_NEIGHBOURS, tableNameFor, unitLength, type Neighbour, type VectorPurpose, type VectorSpaces, type WritableSpace } from "./vector-spaces.ts";

interface SpaceRow {
  name: string;
  model: string;
  dimension: number;
  table_name: string;
}

/**
 * Vectors in one vec0 chunk (its default is 1,024). An insert writes into its chunk's blob, and
 * the deeper into the blob, the longer the walk to the page: 512-d vectors in 2 MB chunks cost
 * ~0.35 ms an insert in bulk imports, ~3x what 256 costs. Searches scan the in-memory copy, so
 * chunk size does not touch them. Tables created before keep the default.
 */
const VEC0_CHUNK_SIZE = 256;

function toVector(blob: Uint8Array): Float32Array {
  return new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
}

function asBlob(vector: Float32Array): Uint8Array {
  return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
}

/**
 * The server's vector spaces, and their in-memory scan copies (by vec0 table, then organization),
 * which must be shared by everyone who reads or writes the same database.
 */
export class SqliteVectorSpaces implements VectorSpaces {
  private readonly scans = new Map<string, Map<string, MemoryScan>>();

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    /** The process's group commit, which writes made outside a transaction join (none: each commits on its own). */
    private readonly writes?: GroupCommit,
  ) {}

  /** Opens the space for a model, creating its table on first use. */
  async open(purpose: VectorPurpose, model: string, dimension: number): Promise<SqliteVectorSpace> {
    const { db, clock } = this;
    const name = `${purpose}:${model}`;
    const existing = this.spaceNamed(name);
    if (existing) {
      if (existing.dimension !== dimension) {
        throw new Error(`vector space ${name} holds ${existing.dimension}-d vectors but the model now gives ${dimension}-d; re-index after changing models`);
      }
      return existing;
    }
    const table = tableNameFor(purpose, model, dimension);
    db.transaction(() => {
      db.run(
        `CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING vec0(
           item_id TEXT PRIMARY KEY, org_id TEXT PARTITION KEY, embedding float[${dimension}] distance_metric=cosine,
           chunk_size=${VEC0_CHUNK_SIZE})`,
      );
      db.query("INSERT OR IGNORE INTO vector_spaces (name, purpose, model, dimension, table_name, created_at) VALUES (?, ?, ?, ?, ?, ?)").run(
        name, purpose, model, dimension, table, isoAt(clock.now()),
      );
    }).immediate();
    return this.spaceOf({ name, model, dimension, table_name: table });
  }

  async find(purpose: VectorPurpose, model: string): Promise<SqliteVectorSpace | null> {
    return this.spaceNamed(`${purpose}:${model}`);
  }

  async all(purpose: VectorPurpose): Promise<SqliteVectorSpace[]> {
    return this.db
      .query<SpaceRow, [string]>("SELECT * FROM vector_spaces WHERE purpose = ?")
      .all(purpose)
      .map((row) => this.spaceOf(row));
  }

  private spaceNamed(name: string): SqliteVectorSpace | null {
    const row = this.db.query<SpaceRow, [string]>("SELECT * FROM vector_spaces WHERE name = ?").get(name);
    return row ? this.spaceOf(row) : null;
  }

  private spaceOf(row: SpaceRow): SqliteVectorSpace {
    let byOrg = this.scans.get(row.table_name);
    if (!byOrg) this.scans.set(row.table_name, (byOrg = new Map()));
    return new SqliteVectorSpace(this.db, this.writes, row.name, row.model, row.dimension, row.table_name, byOrg);
  }
}

/** One model's vectors: the vec0 table and its in-memory scans by organization. */
export class SqliteVectorSpace implements WritableSpace {
  constructor(
    private readonly db: Database,
    private readonly writes: GroupCommit | undefined,
    readonly name: string,
    readonly model: string,
    readonly dimension: number,
    private readonly table: string,
    private readonly scansByOrg: Map<string, MemoryScan>,
  ) {}

  private scanOf(orgId: string): MemoryScan {
    const byOrg = this.scansByOrg;
    let scan = byOrg.get(orgId);
    if (!scan) {
      const rows = this.db.query<{ item_id: string; embedding: Uint8Array }, [string]>(`SELECT item_id, embedding FROM ${this.table} WHERE org_id = ?`).all(orgId);
      scan = new MemoryScan(this.dimension, rows.map((r) => [r.item_id, toVector(r.embedding)] as [string, Float32Array]));
      byOrg.set(orgId, scan);
    }
    return scan;
  }

  upsert(itemId: string, orgId: string, vector: Float32Array, tx?: SqlClient): Promise<void> {
    return this.upsertMany(orgId, [[itemId, vector]], tx);
  }

  async upsertMany(orgId: string, items: readonly (readonly [string, Float32Array])[], tx?: SqlClient): Promise<void> {
    for (const [, input] of items) if (input.length !== this.dimension) throw new Error(`expected a ${this.dimension}-d vector, got ${input.length}-d`);
    // Stored unit-length, so cosine similarity is a dot product for the in-memory scan.
    const stored = items.map(([itemId, input]) => [itemId, unitLength(input)] as const);
    await this.write(
      tx,
      () => {
        // vec0 has no UPSERT: delete + insert, in the write's one transaction, so readers see no gap.
        const del = this.db.query(`DELETE FROM ${this.table} WHERE item_id = ?`);
        const insert = this.db.query(`INSERT INTO ${this.table} (item_id, org_id, embedding) VALUES (?, ?, ?)`);
        for (const [itemId, vector] of stored) {
          del.run(itemId);
          insert.run(itemId, orgId, asBlob(vector));
        }
      },
      () => {
        const scan = this.scansByOrg.get(orgId);
        if (scan) for (const [itemId, vector] of stored) scan.set(itemId, vector);
      },
    );
  }

  async remove(itemIds: readonly string[], tx?: SqlClient): Promise<void> {
    if (itemIds.length === 0) return;
    await this.write(
      tx,
      () => {
        const del = this.db.query(`DELETE FROM ${this.table} WHERE item_id = ?`);
        for (const id of itemIds) del.run(id);
      },
      () => {
        for (const scan of this.scansByOrg.values()) for (const id of itemIds) scan.delete(id);
      },
    );
  }

  /**
   * Runs `statements` in `tx` (the connection it holds) or in a write of their own, and
   * `committed` on the in-memory scans once they are committed. A transaction that rolls back
   * drops the space's scans instead: one loaded meanwhile may hold the rolled-back rows, and the
   * next read loads them again from the table.
   */
  private async write(tx: SqlClient | undefined, statements: () => void, committed: () => void): Promise<void> {
    if (tx) {
      if (!(tx instanceof SqliteClient) || !tx.inTransaction) throw new Error("a SQLite vector space joins a transaction of its own database's SqliteClient");
      statements();
      tx.afterTransaction((done) => (done ? committed() : this.scansByOrg.clear()));
      return;
    }
    if (this.writes) await this.writes.write(statements);
    else this.db.transaction(statements)();
    committed();
  }

  async vectorsOf(itemIds: readonly string[]): Promise<Map<string, Float32Array>> {
    const get = this.db.query<{ embedding: Uint8Array }, [string]>(`SELECT embedding FROM ${this.table} WHERE item_id = ?`);
    return new Map(itemIds.flatMap((id) => {
      const row = get.get(id);
      return row ? [[id, toVector(row.embedding)] as const] : [];
    }));
  }

  /**
   * Cosine similarity of each of `itemIds` (of one organization) to a unit-length `vector`, from
   * the in-memory scan; ids without a vector are left out.
   */
  async similarities(orgId: string, vector: Float32Array, itemIds: string[]): Promise<Map<string, number>> {
    const scan = this.scanOf(orgId);
    const out = new Map<string, number>();
    for (const id of itemIds) {
      const similarity = scan.similarity(id, vector);
      if (similarity !== null) out.set(id, similarity);
    }
    return out;
  }

  /** The k nearest items of one organization by cosine similarity, most similar first. */
  async nearest(orgId: string, vector: Float32Array, k: number): Promise<Neighbour[]> {
    const limit = Math.max(1, Math.min(MAX_NEIGHBOURS, k));
    return (await this.scanOf(orgId).nearest(vector, limit)).map((r) => ({ itemId: r.id, similarity: r.similarity }));
  }

  /** The same query answered by sqlite-vec itself (kept for comparison in benchmarks and tests). */
  nearestInStore(orgId: string, vector: Float32Array, k: number): Neighbour[] {
    const limit = Math.max(1, Math.min(MAX_NEIGHBOURS, k));
    return this.db
      .query<{ item_id: string; distance: number }, [Uint8Array, number, string]>(
        `SELECT item_id, distance FROM ${this.table} WHERE embedding MATCH ? AND k = ? AND org_id = ? ORDER BY distance`,
      )
      .all(asBlob(vector), limit, orgId)
      .map((r) => ({ itemId: r.item_id, similarity: 1 - r.distance }));
  }
}
