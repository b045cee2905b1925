/**
 * What the pipelines derived from a file and stored outside its row: variant, keyframe and
 * PDF page picture blobs, a link's icon and snapshot blobs, and image, keyframe and chunk embeddings in sqlite-vec tables
 * (which foreign keys cannot reach). Purging a file
 * calls this first; rows in the derived tables go with the file row by ON DELETE CASCADE.
 */
import type { AppContext } from "../context.ts";
import { removePageImages } from "../documents/page-images.ts";
import { removeKeyframes } from "../video/keyframe-store.ts";

export async function purgeDerivedData(ctx: AppContext, fileId: string): Promise<void> {
  const variants = ctx.db.query<{ blob_key: string }, [string]>("SELECT blob_key FROM image_variants WHERE file_id = ?").all(fileId);
  for (const v of variants) await ctx.blobs.delete(v.blob_key);
  const row = ctx.files.byId(fileId);
  for (const key of [row?.favicon_blob_key, row?.snapshot_blob_key]) if (key) await ctx.blobs.delete(key);
  for (const space of ctx.vectors.all("image")) space.remove([fileId]);
  await removeKeyframes(ctx, fileId);
  await removePageImages(ctx, fileId);
  const chunkIds = ctx.db.query<{ id: string }, [string]>("SELECT id FROM document_chunks WHERE file_id = ?").all(fileId).map((c) => c.id);
  if (chunkIds.length) for (const space of ctx.vectors.all("text")) space.remove(chunkIds);
}
