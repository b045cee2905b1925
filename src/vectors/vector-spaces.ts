/**
 * The vector spaces, the one interface the features see: asynchronous, as the data-access port
 * is, with writes joining the caller's transaction when given one. SQLite's spaces
 * (sqlite-vector-spaces.ts: sqlite-vec as the store of record, searched through an in-memory
 * scan) and PostgreSQL's (pgvector-index.ts) both implement it, so the same feature code runs on
 * either database. One space per (purpose, model): vectors of two models are not comparable, and
 * a space's dimension is fixed.
 */
import type { SqlClient } from "../db/sql-client.ts";

export type VectorPurpose = "image" | "text" | "face";

export interface Neighbour {
  itemId: string;
  /** Cosine similarity, -1..1 (1 = same direction). */
  similarity: number;
}

/** vec0 refuses larger k, and both engines keep to it; callers page within it. */
export const MAX_NEIGHBOURS = 4096;

/** The table holding a (purpose, model)'s vectors, on either database. */
export function tableNameFor(purpose: VectorPurpose, model: string, dimension: number): string {
  const slug = model.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_|_$/g, "").slice(0, 40);
  const digest = new Bun.CryptoHasher("sha256").update(`${purpose}:${model}:${dimension}`).digest("hex").slice(0, 8);
  return `vec_${purpose}_${slug}_${digest}`;
}

export interface SearchableSpace {
  /** The model whose vectors the space holds. */
  readonly model: string;
  /** The k nearest items of one organization by cosine similarity, most similar first. */
  nearest(orgId: string, vector: Float32Array, k: number): Promise<Neighbour[]>;
  /** Cosine similarity of each of `itemIds` (of one organization) to a unit-length `vector`; ids without a vector are left out. */
  similarities(orgId: string, vector: Float32Array, itemIds: string[]): Promise<Map<string, number>>;
  /** The stored (unit-length) vectors of `itemIds`; ids without one are left out. */
  vectorsOf(itemIds: readonly string[]): Promise<Map<string, Float32Array>>;
}

/**
 * A space written through the port. `tx`, when given, is the transaction the write joins (the
 * rows it belongs with); without one the write commits on its own (on SQLite with the turn's
 * other writes). Inside a transaction, always pass its `tx`.
 */
export interface WritableSpace extends SearchableSpace {
  upsert(itemId: string, orgId: string, vector: Float32Array, tx?: SqlClient): Promise<void>;
  /** Several items of one organization, in one write. */
  upsertMany(orgId: string, items: readonly (readonly [itemId: string, vector: Float32Array])[], tx?: SqlClient): Promise<void>;
  remove(itemIds: readonly string[], tx?: SqlClient): Promise<void>;
}

export interface VectorSpaces {
  /** The space holding a model's vectors, or null when none was stored yet. */
  find(purpose: VectorPurpose, model: string): Promise<WritableSpace | null>;
  /** The space for a model, created on first use; a model's dimension is fixed. Open it before a transaction that writes to it. */
  open(purpose: VectorPurpose, model: string, dimension: number): Promise<WritableSpace>;
  /** Every space of a purpose (removing an item must reach the spaces of earlier models too). */
  all(purpose: VectorPurpose): Promise<WritableSpace[]>;
}

/** The vector scaled to unit length: both engines store them so, so a cosine is a dot product and their similarities agree. */
export function unitLength(input: Float32Array): Float32Array {
  const norm = Math.sqrt(input.reduce((sum, v) => sum + v * v, 0)) || 1;
  return input.map((v) => v / norm);
}
