/** Videos: probed, given a poster and keyframes, and analysed frame by frame by the video pipeline. */
import type { VideoDeps } from "./deps.ts";
import type { MediaKind } from "../kinds/media-kind.ts";
import { VIDEO_DETAIL_FIELDS, VIDEO_FIELDS } from "../files/file-shapes.ts";
import { cameraDetailFields } from "../images/image-views.ts";
import { removeKeyframes } from "./keyframe-store.ts";
import { VIDEO_CONTENT } from "./video-content.ts";
import { runVideoPipeline } from "./video-pipeline.ts";
import { videoDetailFields, videoFields } from "./video-views.ts";

export function videoKind(ctx: VideoDeps): MediaKind<"video"> {
  return {
    type: "video",
    content: VIDEO_CONTENT,
    pipeline: {
      produces: { thumbnails: true, analysis: true },
      concurrency: 2,
      run: (job, file) => runVideoPipeline(ctx, job, file),
    },
    view: {
      summaryFields: VIDEO_FIELDS,
      detailFields: VIDEO_DETAIL_FIELDS,
      summary: videoFields,
      detail: async (row, urls) => ({ ...(await videoDetailFields(row, urls)), ...cameraDetailFields(urls.db, row.id) }),
    },
    purge: (fileId) => removeKeyframes(ctx, fileId),
  };
}
