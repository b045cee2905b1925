/**
 * Vector spaces in sqlite-vec: one vec0 table per (purpose, model), because a vec0 column has a
 * fixed dimension and vectors of two models are not comparable. Items are partitioned by
 * organization so a nearest-neighbour query never sees another tenant's vectors. The registry
 * table `vector_spaces` records which table holds which model.
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";

export type VectorPurpose = "image" | "text";

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

/** vec0 refuses larger k; callers page within it. */
export const MAX_NEIGHBOURS = 4096;

function tableNameFor(purpose: VectorPurpose, model: string, dimension: number): string {
  const slug = model.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_|_$/g, "").slice(0, 40);
  const digest = new Bun.CryptoHasher("sha256").update(`${purpose}:${model}:${dimension}`).digest("hex").slice(0, 8);
  return `vec_${purpose}_${slug}_${digest}`;
}

function asBlob(vector: Float32Array): Uint8Array {
  return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
}

export class VectorSpace {
  private constructor(
    private readonly db: Database,
    readonly name: string,
    readonly model: string,
    readonly dimension: number,
    private readonly table: string,
  ) {}

  /** Opens the space for a model, creating its table on first use. */
  static open(db: Database, clock: Clock, purpose: VectorPurpose, model: string, dimension: number): VectorSpace {
    const name = `${purpose}:${model}`;
    const existing = db.query<SpaceRow, [string]>("SELECT * FROM vector_spaces WHERE name = ?").get(name);
    if (existing) {
      if (existing.dimension !== dimension) {
        throw new Error(`vector space ${name} holds ${existing.dimension}-d vectors but the model now gives ${dimension}-d; re-index after changing models`);
      }
      return new VectorSpace(db, name, model, dimension, existing.table_name);
    }
    const table = tableNameFor(purpose, model, dimension);
    db.transaction(() => {
      db.run(
        `CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING vec0(
           item_id TEXT PRIMARY KEY, org_id TEXT PARTITION KEY, embedding float[${dimension}] distance_metric=cosine)`,
      );
      db.query("INSERT OR IGNORE INTO vector_spaces (name, purpose, model, dimension, table_name, created_at) VALUES (?, ?, ?, ?, ?, ?)").run(
        name, purpose, model, dimension, table, isoAt(clock.now()),
      );
    }).immediate();
    return new VectorSpace(db, name, model, dimension, table);
  }

  /** The space holding a model's vectors, or null when none was stored yet. */
  static find(db: Database, purpose: VectorPurpose, model: string): VectorSpace | null {
    const row = db.query<SpaceRow, [string]>("SELECT * FROM vector_spaces WHERE name = ?").get(`${purpose}:${model}`);
    return row ? new VectorSpace(db, row.name, row.model, row.dimension, row.table_name) : null;
  }

  /** Every space of a purpose (purging an item must reach the tables of earlier models too). */
  static all(db: Database, purpose: VectorPurpose): VectorSpace[] {
    return db
      .query<SpaceRow, [string]>("SELECT * FROM vector_spaces WHERE purpose = ?")
      .all(purpose)
      .map((row) => new VectorSpace(db, row.name, row.model, row.dimension, row.table_name));
  }

  upsert(itemId: string, orgId: string, vector: Float32Array): void {
    if (vector.length !== this.dimension) throw new Error(`expected a ${this.dimension}-d vector, got ${vector.length}-d`);
    // vec0 has no UPSERT; delete + insert in one transaction keeps readers from seeing a gap.
    this.db.transaction(() => {
      this.db.query(`DELETE FROM ${this.table} WHERE item_id = ?`).run(itemId);
      this.db.query(`INSERT INTO ${this.table} (item_id, org_id, embedding) VALUES (?, ?, ?)`).run(itemId, orgId, asBlob(vector));
    })();
  }

  remove(itemIds: string[]): void {
    const del = this.db.query(`DELETE FROM ${this.table} WHERE item_id = ?`);
    for (const id of itemIds) del.run(id);
  }

  get(itemId: string): Float32Array | null {
    const row = this.db.query<{ embedding: Uint8Array }, [string]>(`SELECT embedding FROM ${this.table} WHERE item_id = ?`).get(itemId);
    if (!row) return null;
    return new Float32Array(row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.byteLength));
  }

  /** The k nearest items of one organization, most similar first. */
  nearest(orgId: string, vector: Float32Array, k: number): Neighbour[] {
    const limit = Math.max(1, Math.min(MAX_NEIGHBOURS, k));
    return this.db
      .query<{ item_id: string; distance: number }, [Uint8Array, number, string]>(
        `SELECT item_id, distance FROM ${this.table} WHERE embedding MATCH ? AND k = ? AND org_id = ? ORDER BY distance`,
      )
      .all(asBlob(vector), limit, orgId)
      .map((r) => ({ itemId: r.item_id, similarity: 1 - r.distance }));
  }
}
