/** Videos: probed, given a poster and keyframes, and analysed frame by frame by the video pipeline. */
import type { VideoDeps } from "./deps.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { KindExports, MediaKind } from "../kinds/media-kind.ts";
import { VIDEO_DETAIL_FIELDS, VIDEO_FIELDS } from "../files/file-shapes.ts";
import { cameraDetailFields } from "../images/image-views.ts";
import { removeKeyframes } from "./keyframe-store.ts";
import { VIDEO_CONTENT } from "./video-content.ts";
import { analysisPending, videoFactsOf, videoFactsOfFiles } from "./video-facts.ts";
import { variantsPending } from "../images/image-facts.ts";
import { runVideoPipeline, videoPipelineOptions } from "./video-pipeline.ts";
import { videoDetailFields, videoSummaries } from "./video-views.ts";

/** Columns of POST /files/export: the probe's facts (one read for the exported videos). */
function videoExports(sql: SqlClient): KindExports {
  return {
    columns: [
      { key: "duration_seconds", display: "Duration (s)" },
      { key: "frame_rate", display: "Frame rate" },
      { key: "video_codec", display: "Video codec" },
      { key: "resolution", display: "Resolution" },
    ],
    async read(rows) {
      const probed = await videoFactsOfFiles(sql, rows.map((row) => row.id));
      return (row, key) => {
        const facts = probed.get(row.id)?.facts ?? null;
        if (key === "duration_seconds") return facts?.durationSeconds ?? null;
        if (key === "frame_rate") return facts?.frameRate ?? null;
        if (key === "video_codec") return facts?.codec ?? null;
        return row.width && row.height ? `${row.width}x${row.height}` : null;
      };
    },
  };
}

export function videoKind(ctx: VideoDeps): MediaKind<"video"> {
  const options = videoPipelineOptions(ctx.config);
  return {
    type: "video",
    content: VIDEO_CONTENT,
    pipeline: {
      produces: { thumbnails: true, analysis: true },
      concurrency: 2,
      run: (job, file) => runVideoPipeline(ctx, options, job, file),
    },
    view: {
      summaryFields: VIDEO_FIELDS,
      detailFields: VIDEO_DETAIL_FIELDS,
      summaries: videoSummaries,
      detail: async (row, urls) => ({ ...(await videoDetailFields(row, urls)), ...(await cameraDetailFields(urls.sql, row.id)) }),
    },
    queued: async (fileId, tx) => {
      await variantsPending(tx, fileId); // the poster's
      await analysisPending(tx, fileId);
    },
    conditionFacts: async (sql, fileId) => ({ duration_seconds: (await videoFactsOf(sql, fileId))?.durationSeconds ?? null }),
    exports: videoExports(ctx.sql),
    purge: (fileId) => removeKeyframes(ctx, fileId),
  };
}
