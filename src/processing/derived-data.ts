/**
 * What the pipelines derived from a file and stored outside its row: variant blobs, image and
 * chunk embeddings in the vector spaces (which foreign keys cannot reach), and what the file's
 * kind keeps of its own (keyframes, page pictures, a link's icon and snapshot). Purging a file
 * calls this first; rows in the derived tables go with the file row by ON DELETE CASCADE.
 */
import type { SqlClient } from "../db/sql-client.ts";
import type { FileRepository } from "../files/file-repository.ts";
import type { MediaKinds } from "../kinds/media-kind.ts";
import type { BlobStore } from "../storage/blob-store.ts";
import type { VectorSpaces } from "../vectors/vector-spaces.ts";

export interface PurgeDeps {
  sql: SqlClient;
  blobs: BlobStore;
  files: FileRepository;
  spaces: VectorSpaces;
  kinds: MediaKinds;
}

export async function purgeDerivedData(ctx: PurgeDeps, fileId: string): Promise<void> {
  const variants = await ctx.sql.all<{ blob_key: string }>("SELECT blob_key FROM image_variants WHERE file_id = ?", [fileId]);
  for (const v of variants) await ctx.blobs.delete(v.blob_key);
  const row = await ctx.files.byId(fileId);
  for (const space of await ctx.spaces.all("image")) await space.remove([fileId]);
  // A row already gone leaves no kind to ask: every kind removes what it may have kept.
  const kinds = row ? [ctx.kinds.for(row.media_type)] : ctx.kinds.all();
  for (const kind of kinds) await kind?.purge?.(fileId);
  const chunkIds = (await ctx.sql.all<{ id: string }>("SELECT id FROM document_chunks WHERE file_id = ?", [fileId])).map((c) => c.id);
  if (chunkIds.length) for (const space of await ctx.spaces.all("text")) await space.remove(chunkIds);
}
