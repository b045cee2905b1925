/**
 * "More like this" for images and videos: nearest neighbours of a file's embedding (an image's,
 * or a video's poster) among the live images and video keyframes of the same organization,
 * scored for ranking. A video is answered once, by its closest keyframe, with that frame's time.
 * relevance_score is the cosine similarity of the embeddings (clamped to 0-1) with a small bonus
 * for shared tags, so two equally close files are ordered by what users and detectors said.
 */
import type { Database } from "bun:sqlite";
import { ApiError } from "../errors.ts";
import { type FileRow, tagsOf } from "../files/file.ts";
import { MAX_NEIGHBOURS, type Neighbour, type VectorIndex, type VectorSpace } from "../vectors/vector-index.ts";
import { keyframeTimes, parseItemId } from "../video/keyframe-store.ts";
import { imageFactsOf } from "../images/image-facts.ts";

export interface SimilarImage {
  row: FileRow;
  /** The moment of a video that matched (its closest keyframe); null for an image, or a video's poster. */
  timeSeconds: number | null;
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
  const model = imageFactsOf(db, reference.id).embeddingModel;
  const space = model ? vectors.find("image", model) : null;
  const vector = space?.get(reference.id) ?? null;
  if (!space || !vector) {
    throw new ApiError("EMBEDDING_NOT_READY", `image ${reference.id} has no embedding yet (processing status ${reference.processing_status}); try again when its processing completes`);
  }
  // Soft-deleted files keep their vectors until purged; ask for enough neighbours to skip them.
  const deleted = db
    .query<{ n: number }, [string]>("SELECT count(*) AS n FROM files WHERE org_id = ? AND deleted_at IS NOT NULL AND media_type IN ('image', 'video')")
    .get(reference.org_id)!.n;
  // A video's keyframes are neighbours of their own: ask for more, and for all there may be if that was not enough.
  let k = Math.min(MAX_NEIGHBOURS, (limit + 1 + deleted) * 8);
  let ranked = await rankNeighbours(db, space, reference, vector, k);
  if (ranked.items.length < limit && !ranked.exhausted && k < MAX_NEIGHBOURS) {
    k = MAX_NEIGHBOURS;
    ranked = await rankNeighbours(db, space, reference, vector, k);
  }
  return ranked.items.sort((a, b) => b.relevance_score - a.relevance_score).slice(0, limit);
}

async function rankNeighbours(
  db: Database,
  space: VectorSpace,
  reference: FileRow,
  vector: Float32Array,
  k: number,
): Promise<{ items: SimilarImage[]; exhausted: boolean }> {
  const neighbours: Neighbour[] = await space.nearest(reference.org_id, vector, k);
  const items = neighbours.map((n) => ({ ...n, ...parseItemId(n.itemId) }));
  const fileIds = [...new Set(items.map((i) => i.fileId))];
  // One query for all neighbours' rows (live ones of this organization only).
  const rows = new Map(
    db
      .query<FileRow, [string, string]>("SELECT * FROM files WHERE id IN (SELECT value FROM json_each(?)) AND org_id = ? AND deleted_at IS NULL")
      .all(JSON.stringify(fileIds), reference.org_id)
      .map((row) => [row.id, row]),
  );
  const times = keyframeTimes({ db }, fileIds.filter((id) => rows.get(id)?.media_type === "video"));
  const referenceTags = tagsOf(reference);
  const seen = new Set<string>([reference.id]);
  const results: SimilarImage[] = [];
  // Neighbours come most similar first: a file's first one is its best.
  for (const n of items) {
    if (seen.has(n.fileId)) continue;
    const row = rows.get(n.fileId);
    if (!row) continue;
    seen.add(n.fileId);
    const similarity = Math.max(0, Math.min(1, n.similarity));
    results.push({
      row,
      timeSeconds: n.keyframeIndex === null ? null : (times.get(n.itemId) ?? null),
      vector_similarity: round(n.similarity),
      relevance_score: round((1 - TAG_WEIGHT) * similarity + TAG_WEIGHT * tagOverlap(referenceTags, tagsOf(row))),
    });
  }
  // Fewer neighbours than asked for: there are no more to find.
  return { items: results, exhausted: neighbours.length < k };
}
