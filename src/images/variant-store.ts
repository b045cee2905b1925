/**
 * The `image_variants` table and its blobs: the resized WebP copies of an image, or of a video's
 * poster frame. Written here alone; served through FileUrls, purged with the file.
 */
import { isoAt } from "../clock.ts";
import type { ImageDeps } from "./deps.ts";
import { variantBlobKey } from "../files/blob-keys.ts";
import type { FileRow } from "../files/file.ts";
import { VARIANT_CONTENT_TYPE, type RenderedVariant } from "./variants.ts";

/** Stores each variant's blob, then points the file's variant rows at them (replacing older ones). */
export async function storeVariants(ctx: Pick<ImageDeps, "sql" | "blobs" | "clock">, file: Pick<FileRow, "id" | "org_id">, variants: RenderedVariant[]): Promise<void> {
  for (const variant of variants) {
    const key = variantBlobKey(file.org_id, file.id, variant.type);
    await ctx.blobs.put(key, variant.data, VARIANT_CONTENT_TYPE);
    await ctx.sql.run(
      `INSERT INTO image_variants (file_id, variant_type, blob_key, width, height, size_bytes, content_type, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (file_id, variant_type) DO UPDATE SET blob_key = excluded.blob_key, width = excluded.width,
          height = excluded.height, size_bytes = excluded.size_bytes, created_at = excluded.created_at`,
      [file.id, variant.type, key, variant.width, variant.height, variant.data.length, VARIANT_CONTENT_TYPE, isoAt(ctx.clock.now())],
    );
  }
}
