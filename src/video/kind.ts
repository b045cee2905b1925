/** Videos: probed, given a poster and keyframes, and analysed frame by frame by the video pipeline. */
import type { VideoDeps } from "./deps.ts";
import type { MediaKind } from "../kinds/media-kind.ts";
import { removeKeyframes } from "./keyframe-store.ts";
import { runVideoPipeline } from "./video-pipeline.ts";

export function videoKind(ctx: VideoDeps): MediaKind {
  return {
    type: "video",
    pipeline: {
      produces: { thumbnails: true, analysis: true },
      concurrency: 2,
      run: (job, file) => runVideoPipeline(ctx, job, file),
    },
    purge: (fileId) => removeKeyframes(ctx, fileId),
  };
}
