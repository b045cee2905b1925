/**
 * Image embeddings for "similar images": storing an image's vector in its model's space, and
 * keeping the library in one space when the model changes. Vectors of different models are not
 * comparable, so after MEDIABOX_IMAGE_EMBEDDING_MODEL changes (or a model that was missing
 * appears), the start-up check queues an `image.embed` job for every image whose vector is from
 * another model or absent; each job embeds the stored large_1024 variant again.
 */
import type { ImageDeps } from "./deps.ts";
import type { QueueDefinition } from "../jobs/runner.ts";
import type { FileRow } from "../files/file.ts";
import { fileJob } from "../processing/file-job.ts";
import { readObject } from "../storage/blob-store.ts";
import { imageEmbedded, imagesToEmbed } from "./image-facts.ts";
import type { ImageEmbedding, VisionInput } from "./vision.ts";

/** The variant re-embedding reads (the pipeline embeds the pixels it was encoded from: the same image, decoded once). */
export const EMBEDDED_VARIANT = "large_1024";

/** Embeds `image` with the configured model and stores the vector; returns the embedding. */
export async function storeImageEmbedding(ctx: Pick<ImageDeps, "sql" | "images" | "spaces">, file: Pick<FileRow, "id" | "org_id">, image: VisionInput): Promise<ImageEmbedding> {
  const embedding = await ctx.images.vision.embed(image);
  const space = await ctx.spaces.open("image", embedding.model, embedding.vector.length);
  // The vector and the model it is recorded under commit together.
  await ctx.sql.transaction(async (tx) => {
    await space.upsert(file.id, file.org_id, embedding.vector, tx);
    await imageEmbedded(tx, file.id, embedding.model);
  });
  return embedding;
}

export function imageEmbedQueue(ctx: ImageDeps): QueueDefinition<"image.embed"> {
  return fileJob(ctx, {
    name: "image.embed",
    concurrency: 1,
    // Re-embedding after a model change: the library's new uploads go first.
    background: true,
    async handle(file) {
      const variant = await ctx.sql.one<{ blob_key: string }>("SELECT blob_key FROM image_variants WHERE file_id = ? AND variant_type = ?", [file.id, EMBEDDED_VARIANT]);
      const image = variant ? await readObject(ctx.blobs, variant.blob_key) : null;
      if (!image) return [{ file_id: file.id, skipped: `no ${EMBEDDED_VARIANT} variant` }];
      const embedding = await storeImageEmbedding(ctx, file, image);
      return [{ file_id: file.id, model: embedding.model }];
    },
  });
}

/**
 * At start: queues re-embedding of every live image whose vector is not from the configured
 * model. Does nothing when none is stale, or when the model cannot load (its stage reports why
 * on new uploads; the next start checks again).
 */
export async function resumeImageEmbeddings(ctx: ImageDeps): Promise<number> {
  const model = ctx.images.vision.modelName;
  const stale = await imagesToEmbed(ctx.sql, model);
  if (!stale.length) return 0;
  await ctx.images.vision.embeddingDimension(); // throws when the model cannot load
  await ctx.sql.transaction(async (tx) => {
    for (const file of stale) {
      await ctx.jobs.submit({ queue: "image.embed", orgId: file.org_id, payload: { fileId: file.id }, dedupeKey: `image-embed:${file.id}`, maxAttempts: 3 }, tx);
    }
  });
  // The background view reads progress synchronously: it shows the last count and asks for a new
  // one (through the port, at most every 2 s) while someone looks; no timer outlives the server.
  let left = stale.length;
  let counting = false;
  let countedAt = 0;
  const recount = () => {
    if (counting || Date.now() - countedAt < 2_000) return;
    counting = true;
    ctx.sql
      .one<{ n: number }>("SELECT count(*) AS n FROM jobs WHERE queue = 'image.embed' AND status IN ('pending', 'processing')")
      .then((row) => void (left = row?.n ?? 0), () => {})
      .finally(() => {
        counting = false;
        countedAt = Date.now();
      });
  };
  ctx.background.preparingPolled("image re-embedding", model, () => {
    recount();
    return left ? { done: Math.max(0, stale.length - left), total: Math.max(stale.length, left) } : null;
  });
  return stale.length;
}
