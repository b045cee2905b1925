/**
 * The vector spaces as readers on either database see them: asynchronous, as the data-access
 * port is. PostgreSQL's spaces (pgvector-index.ts) are this interface; SQLite's (vector-index.ts,
 * synchronous, called so by the image and text features still on the SQLite handle) are seen
 * through `sqliteVectorSpaces`. Searching, clustering faces and the "same person" search read
 * through it, so they run on both.
 */
import type { Neighbour, VectorIndex, VectorPurpose } from "./vector-index.ts";

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

export interface VectorSpaces {
  /** The space holding a model's vectors, or null when none was stored yet. */
  find(purpose: VectorPurpose, model: string): Promise<SearchableSpace | null>;
}

/** The SQLite spaces (sqlite-vec and their in-memory scans) behind the asynchronous interface. */
export function sqliteVectorSpaces(index: VectorIndex): VectorSpaces {
  return {
    async find(purpose, model) {
      const space = index.find(purpose, model);
      if (!space) return null;
      return {
        model: space.model,
        nearest: (orgId, vector, k) => space.nearest(orgId, vector, k),
        similarities: async (orgId, vector, itemIds) => space.similarities(orgId, vector, itemIds),
        vectorsOf: async (itemIds) => new Map(itemIds.flatMap((id) => {
          const vector = space.get(id);
          return vector ? [[id, vector] as const] : [];
        })),
      };
    },
  };
}
