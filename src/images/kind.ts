/** Images: photos, scans and drawings, decoded, described, embedded and checked by the image pipeline. */
import type { ImageDeps } from "./deps.ts";
import type { MediaKind } from "../kinds/media-kind.ts";
import { removeFaces } from "../people/people.ts";
import { runImagePipeline } from "./image-pipeline.ts";

export function imageKind(ctx: ImageDeps): MediaKind {
  return {
    type: "image",
    pipeline: {
      produces: { thumbnails: true, analysis: true },
      // One a core: decoding and the models are CPU-bound, and a large photo holds hundreds of MB.
      concurrency: 2,
      run: (job, file) => runImagePipeline(ctx, job, file),
    },
    // Face embeddings live in a vector space, which foreign keys cannot reach.
    purge: async (fileId) => removeFaces(ctx, fileId),
  };
}
