/** Images: photos, scans and drawings, decoded, described, embedded and checked by the image pipeline. */
import type { ImageDeps } from "./deps.ts";
import type { MediaKind } from "../kinds/media-kind.ts";
import { IMAGE_DETAIL_FIELDS, IMAGE_FIELDS } from "../files/file-shapes.ts";
import { removeFaces } from "../people/people.ts";
import { IMAGE_CONTENT } from "./image-content.ts";
import { variantsPending } from "./image-facts.ts";
import { runImagePipeline, imagePipelineOptions } from "./image-pipeline.ts";
import { cameraDetailFields, imageDetailFields, imageSummaries } from "./image-views.ts";

export function imageKind(ctx: ImageDeps): MediaKind<"image"> {
  const options = imagePipelineOptions(ctx.config);
  return {
    type: "image",
    content: IMAGE_CONTENT,
    pipeline: {
      produces: { thumbnails: true, analysis: true },
      // One a core: decoding and the models are CPU-bound, and a large photo holds hundreds of MB.
      concurrency: 2,
      run: (job, file) => runImagePipeline(ctx, options, job, file),
    },
    view: {
      summaryFields: IMAGE_FIELDS,
      detailFields: IMAGE_DETAIL_FIELDS,
      summaries: imageSummaries,
      detail: async (row, urls) => ({ ...(await imageDetailFields(urls.sql, row)), ...(await cameraDetailFields(urls.sql, row.id)) }),
    },
    queued: (fileId, tx) => variantsPending(tx, fileId),
    // Face embeddings live in a vector space, which foreign keys cannot reach.
    purge: async (fileId) => removeFaces(ctx, fileId),
  };
}
