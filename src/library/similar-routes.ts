/**
 * GET /files/{file_id}/similar: images and videos most like an image or a video (similar.ts).
 * It spans both kinds (a video is matched by its keyframes), so it lives with the library
 * rather than with either kind; it is documented with the image operations.
 */
import { Elysia, t } from "elysia";
import { FileParams } from "../files/file-shapes.ts";
import { permissions } from "../http/permissions.ts";
import { publicOrigin } from "../http/request-context.ts";
import { Nullable, queryInt, Timestamp, errorResponses } from "../http/shapes.ts";
import type { LibraryDeps } from "./deps.ts";
import { FileUrls } from "../files/file-urls.ts";
import { similarImages } from "./similar.ts";


export function similarRoutes(ctx: LibraryDeps) {
  return new Elysia({ tags: ["Images"] })
    .use(permissions)
    .get(
      "/files/:file_id/similar",
      async ({ principal, params, query, request }) => {
        const row = await ctx.files.findOfType(principal.orgId, params.file_id, ["image", "video"]);
        const urls = new FileUrls(ctx, publicOrigin(ctx.config, request));
        const items = [];
        for (const match of await similarImages(ctx, row, query.limit)) {
          const variants = await urls.variants(match.row);
          items.push({
            image_id: match.row.id,
            title: match.row.title,
            description: match.row.user_description ?? match.row.upload_description,
            relevance_score: match.relevance_score,
            vector_similarity: match.vector_similarity,
            media_type: match.row.media_type as "image" | "video",
            time_seconds: match.timeSeconds,
            thumbnail_url: variants.small_256 ?? null,
            medium_url: variants.medium_750 ?? null,
            full_url: variants.large_1024 ?? null,
            folder_id: match.row.folder_id,
            created_at: match.row.created_at,
          });
        }
        return { reference_image_id: row.id, items, total_count: items.length };
      },
      {
        permission: "view",
        params: FileParams,
        query: t.Object({ limit: queryInt("limit", 1, 50, 20) }),
        response: {
          200: t.Object({
            reference_image_id: t.String({ format: "uuid" }),
            items: t.Array(
              t.Object({
                image_id: t.String({ format: "uuid" }),
                title: Nullable(t.String()),
                description: Nullable(t.String()),
                relevance_score: t.Number({ description: "0-1: 0.9 x cosine similarity (clamped to 0-1) + 0.1 x tag overlap (Jaccard)" }),
                vector_similarity: t.Number({ description: "Cosine similarity of the image embeddings" }),
                media_type: t.Union([t.Literal("image"), t.Literal("video")], { description: "Extension: videos are found by their keyframes" }),
                time_seconds: t.Union([t.Number(), t.Null()], { description: "Extension: for a video, the time of its closest keyframe (null when its poster matched)" }),
                thumbnail_url: Nullable(t.String()),
                medium_url: Nullable(t.String()),
                full_url: Nullable(t.String()),
                folder_id: Nullable(t.String({ format: "uuid" })),
                created_at: Timestamp,
              }),
            ),
            total_count: t.Integer(),
          }),
          ...errorResponses([400, 404, 409]),
        },
        detail: { summary: "Images and videos of the organization most similar to this image or video (409 EMBEDDING_NOT_READY before its embedding exists); a video is matched by its keyframes, with the moment" },
      },
    );
}
