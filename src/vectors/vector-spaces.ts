/**
 * The vector spaces as readers on either database see them: asynchronous, as the data-access
 * port is. PostgreSQL's spaces (pgvector-index.ts) are this interface; SQLite's (vector-index.ts,
 * synchronous, called so by the image and text features still on the SQLite handle) are seen
 * through `sqliteVectorSpaces`. Searching, clustering faces and the "same person" search read
 * through it, so they run on both.
 */
import type { SqlClient } from "../db/sql-client.ts";
import type { Neighbour, VectorIndex, VectorPurpose, VectorSpace } from "./vector-index.ts";

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

/** A space written through the port: `tx`, when given, is the transaction the write joins (the rows it belongs with). */
export interface WritableSpace extends SearchableSpace {
  upsert(itemId: string, orgId: string, vector: Float32Array, tx?: SqlClient): Promise<void>;
  remove(itemIds: string[], tx?: SqlClient): Promise<void>;
}

export interface VectorSpaces {
  /** The space holding a model's vectors, or null when none was stored yet. */
  find(purpose: VectorPurpose, model: string): Promise<WritableSpace | null>;
  /** The space for a model, created on first use; a model's dimension is fixed. */
  open(purpose: VectorPurpose, model: string, dimension: number): Promise<WritableSpace>;
  /** Every space of a purpose (removing an item must reach the spaces of earlier models too). */
  all(purpose: VectorPurpose): Promise<WritableSpace[]>;
}

/**
 * A SQLite space behind the asynchronous interface. Writes go through the space's own handle,
 * the connection a port transaction on SQLite holds, so they join it without being handed `tx`.
 */
function sqliteSpace(space: VectorSpace): WritableSpace {
  return {
    model: space.model,
    nearest: (orgId, vector, k) => space.nearest(orgId, vector, k),
    similarities: async (orgId, vector, itemIds) => space.similarities(orgId, vector, itemIds),
    vectorsOf: async (itemIds) => new Map(itemIds.flatMap((id) => {
      const vector = space.get(id);
      return vector ? [[id, vector] as const] : [];
    })),
    upsert: async (itemId, orgId, vector) => space.upsert(itemId, orgId, vector),
    remove: async (itemIds) => space.remove(itemIds),
  };
}

/** The SQLite spaces (sqlite-vec and their in-memory scans) behind the asynchronous interface. */
export function sqliteVectorSpaces(index: VectorIndex): VectorSpaces {
  return {
    async find(purpose, model) {
      const space = index.find(purpose, model);
      return space ? sqliteSpace(space) : null;
    },
    open: async (purpose, model, dimension) => sqliteSpace(index.open(purpose, model, dimension)),
    all: async (purpose) => index.all(purpose).map(sqliteSpace),
  };
}
