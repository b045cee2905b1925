/**
 * "More like this" for images: nearest neighbours of an image's embedding among the live images
 * of the same organization, scored for ranking. relevance_score is the cosine similarity of the
 * embeddings (clamped to 0-1) with a small bonus for shared tags, so two equally close images
 * are ordered by what users and detectors said about them.
 */
import type { Database } from "bun:sqlite";
import { ApiError } from "../errors.ts";
import { type FileRow, tagsOf } from "../files/file.ts";
import { MAX_NEIGHBOURS, type VectorIndex } from "../vectors/vector-index.ts";

export interface SimilarImage {
  row: FileRow;
  relevance_score: number;
  vector_similarity: number;
}

const TAG_WEIGHT = 0.1;
const round = (n: number) => Math.round(n * 10_000) / 10_000;

function tagOverlap(a: string[], b: string[]): number {
  const left = new Set(a.map((t) => t.toLowerCase()));
  const right = new Set(b.map((t) => t.toLowerCase()));
  const union = new Set([...left, ...right]).size;
  if (union === 0) return 0;
  return [...left].filter((t) => right.has(t)).length / union;
}

export async function similarImages(db: Database, vectors: VectorIndex, reference: FileRow, limit: number): Promise<SimilarImage[]> {
  const model = reference.image_embedding_model;
  const space = model ? vectors.find("image", model) : null;
  const vector = space?.get(reference.id) ?? null;
  if (!space || !vector) {
    throw new ApiError("EMBEDDING_NOT_READY", `image ${reference.id} has no embedding yet (processing status ${reference.processing_status}); try again when its processing completes`);
  }
  // Soft-deleted files keep their vectors until purged; ask for enough neighbours to skip them.
  const deleted = db
    .query<{ n: number }, [string]>("SELECT count(*) AS n FROM files WHERE org_id = ? AND deleted_at IS NOT NULL AND media_type = 'image'")
    .get(reference.org_id)!.n;
  const neighbours = await space.nearest(reference.org_id, vector, Math.min(MAX_NEIGHBOURS, limit + 1 + deleted));
  // One query for all neighbours' rows (live ones of this organization only).
  const rows = new Map(
    db
      .query<FileRow, [string, string]>("SELECT * FROM files WHERE id IN (SELECT value FROM json_each(?)) AND org_id = ? AND deleted_at IS NULL")
      .all(JSON.stringify(neighbours.map((n) => n.itemId)), reference.org_id)
      .map((row) => [row.id, row]),
  );
  const referenceTags = tagsOf(reference);
  const results: SimilarImage[] = [];
  for (const n of neighbours) {
    if (n.itemId === reference.id) continue;
    const row = rows.get(n.itemId);
    if (!row) continue;
    const similarity = Math.max(0, Math.min(1, n.similarity));
    results.push({
      row,
      vector_similarity: round(n.similarity),
      relevance_score: round((1 - TAG_WEIGHT) * similarity + TAG_WEIGHT * tagOverlap(referenceTags, tagsOf(row))),
    });
  }
  return results.sort((a, b) => b.relevance_score - a.relevance_score).slice(0, limit);
}
