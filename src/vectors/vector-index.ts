/**
 * Vector spaces in sqlite-vec: one vec0 table per (purpose, model), because a vec0 column has a
 * fixed dimension and vectors of two models are not comparable. Items are partitioned by
 * organization so a nearest-neighbour query never sees another tenant's vectors. The registry
 * table `vector_spaces` records which table holds which model. sqlite-vec is the store of record;
 * nearest-neighbour queries scan an in-memory copy per organization (memory-scan.ts), which is
 * several times faster than vec0's own brute-force scan.
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";
import { MemoryScan } from "./memory-scan.ts";

export type VectorPurpose = "image" | "text" | "face";

export interface Neighbour {
  itemId: string;
  /** Cosine similarity, -1..1 (1 = same direction). */
  similarity: number;
}

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

/** vec0 refuses larger k; callers page within it. */
export const MAX_NEIGHBOURS = 4096;

export function tableNameFor(purpose: VectorPurpose, model: string, dimension: number): string {
  const slug = model.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_|_$/g, "").slice(0, 40);
  const digest = new Bun.CryptoHasher("sha256").update(`${purpose}:${model}:${dimension}`).digest("hex").slice(0, 8);
  return `vec_${purpose}_${slug}_${digest}`;
}

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
export class VectorIndex {
  private readonly scans = new Map<string, Map<string, MemoryScan>>();

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  /** Opens the space for a model, creating its table on first use. */
  open(purpose: VectorPurpose, model: string, dimension: number): VectorSpace {
    const { db, clock } = this;
    const name = `${purpose}:${model}`;
    const existing = this.find(purpose, model);
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

  /** The space holding a model's vectors, or null when none was stored yet. */
  find(purpose: VectorPurpose, model: string): VectorSpace | null {
    const row = this.db.query<SpaceRow, [string]>("SELECT * FROM vector_spaces WHERE name = ?").get(`${purpose}:${model}`);
    return row ? this.spaceOf(row) : null;
  }

  /** Every space of a purpose (purging an item must reach the tables of earlier models too). */
  all(purpose: VectorPurpose): VectorSpace[] {
    return this.db
      .query<SpaceRow, [string]>("SELECT * FROM vector_spaces WHERE purpose = ?")
      .all(purpose)
      .map((row) => this.spaceOf(row));
  }

  private spaceOf(row: SpaceRow): VectorSpace {
    let byOrg = this.scans.get(row.table_name);
    if (!byOrg) this.scans.set(row.table_name, (byOrg = new Map()));
    return new VectorSpace(this.db, row.name, row.model, row.dimension, row.table_name, byOrg);
  }
}

/** One model's vectors: the vec0 table and its in-memory scans by organization. */
export class VectorSpace {
  constructor(
    private readonly db: Database,
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

  upsert(itemId: string, orgId: string, input: Float32Array): void {
    if (input.length !== this.dimension) throw new Error(`expected a ${this.dimension}-d vector, got ${input.length}-d`);
    // Stored unit-length, so cosine similarity is a dot product for the in-memory scan.
    const norm = Math.sqrt(input.reduce((sum, v) => sum + v * v, 0)) || 1;
    const vector = input.map((v) => v / norm);
    // vec0 has no UPSERT; delete + insert in one transaction keeps readers from seeing a gap (the
    // caller's, when it has one, rather than a savepoint a vector).
    const write = () => {
      this.db.query(`DELETE FROM ${this.table} WHERE item_id = ?`).run(itemId);
      this.db.query(`INSERT INTO ${this.table} (item_id, org_id, embedding) VALUES (?, ?, ?)`).run(itemId, orgId, asBlob(vector));
    };
    if (this.db.inTransaction) write();
    else this.db.transaction(write)();
    this.scansByOrg.get(orgId)?.set(itemId, vector);
  }

  remove(itemIds: string[]): void {
    const del = this.db.query(`DELETE FROM ${this.table} WHERE item_id = ?`);
    for (const id of itemIds) del.run(id);
    for (const scan of this.scansByOrg.values()) for (const id of itemIds) scan.delete(id);
  }

  get(itemId: string): Float32Array | null {
    const row = this.db.query<{ embedding: Uint8Array }, [string]>(`SELECT embedding FROM ${this.table} WHERE item_id = ?`).get(itemId);
    return row ? toVector(row.embedding) : null;
  }

  /**
   * Cosine similarity of each of `itemIds` (of one organization) to a unit-length `vector`, from
   * the in-memory scan; ids without a vector are left out.
   */
  similarities(orgId: string, vector: Float32Array, itemIds: string[]): Map<string, number> {
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
