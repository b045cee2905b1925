/**
 * "More like this" for images and videos: nearest neighbours of a file's embedding (an image's,
 * or a video's poster) among the live images and video keyframes of the same organization,
 * scored for ranking. A video is answered once, by its closest keyframe, with that frame's time.
 * relevance_score is the cosine similarity of the embeddings (clamped to 0-1) with a small bonus
 * for shared tags, so two equally close files are ordered by what users and detectors said.
 */
import { ApiError } from "../errors.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { type FileRow, tagsOf } from "../files/file.ts";
import { MAX_NEIGHBOURS, type Neighbour, type SearchableSpace, type VectorSpaces } from "../vectors/vector-spaces.ts";
import { keyframeTimes, parseItemId } from "../video/keyframe-store.ts";
import { embeddingModelOf } from "../images/image-facts.ts";

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

/** What the search reads, on either database: the files, their image facts and keyframes (through the port) and the image space. */
export interface SimilarDeps {
  sql: SqlClient;
  spaces: VectorSpaces;
}

export async function similarImages(deps: SimilarDeps, reference: FileRow, limit: number): Promise<SimilarImage[]> {
  const { sql } = deps;
  const model = await embeddingModelOf(sql, reference.id);
  const space = model ? await deps.spaces.find("image", model) : null;
  const vector = (await space?.vectorsOf([reference.id]))?.get(reference.id) ?? null;
  if (!space || !vector) {
    throw new ApiError("EMBEDDING_NOT_READY", `image ${reference.id} has no embedding yet (processing status ${reference.processing_status}); try again when its processing completes`);
  }
  // Soft-deleted files keep their vectors until purged; ask for enough neighbours to skip them.
  const deleted = (await sql.one<{ n: number }>(
    "SELECT count(*) AS n FROM files WHERE org_id = ? AND deleted_at IS NOT NULL AND media_type IN ('image', 'video')",
    [reference.org_id],
  ))!.n;
  // A video's keyframes are neighbours of their own: ask for more, and for all there may be if that was not enough.
  let k = Math.min(MAX_NEIGHBOURS, (limit + 1 + deleted) * 8);
  let ranked = await rankNeighbours(sql, space, reference, vector, k);
  if (ranked.items.length < limit && !ranked.exhausted && k < MAX_NEIGHBOURS) {
    k = MAX_NEIGHBOURS;
    ranked = await rankNeighbours(sql, space, reference, vector, k);
  }
  return ranked.items.sort((a, b) => b.relevance_score - a.relevance_score).slice(0, limit);
}

async function rankNeighbours(
  sql: SqlClient,
  space: SearchableSpace,
  reference: FileRow,
  vector: Float32Array,
  k: number,
): Promise<{ items: SimilarImage[]; exhausted: boolean }> {
  const neighbours: Neighbour[] = await space.nearest(reference.org_id, vector, k);
  const items = neighbours.map((n) => ({ ...n, ...parseItemId(n.itemId) }));
  const fileIds = [...new Set(items.map((i) => i.fileId))];
  // One query for all neighbours' rows (live ones of this organization only).
  const rows = new Map(
    (await sql.all<FileRow>(`SELECT * FROM files WHERE id IN (${sql.dialect.jsonValues}) AND org_id = ? AND deleted_at IS NULL`, [JSON.stringify(fileIds), reference.org_id]))
      .map((row) => [row.id, row]),
  );
  const times = await keyframeTimes(sql, fileIds.filter((id) => rows.get(id)?.media_type === "video"));
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
