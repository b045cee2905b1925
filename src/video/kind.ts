/** Videos: probed, given a poster and keyframes, and analysed frame by frame by the video pipeline. */
import type { VideoDeps } from "./deps.ts";
import type { Database } from "bun:sqlite";
import type { ExportColumn, MediaKind } from "../kinds/media-kind.ts";
import { VIDEO_DETAIL_FIELDS, VIDEO_FIELDS } from "../files/file-shapes.ts";
import { cameraDetailFields } from "../images/image-views.ts";
import { removeKeyframes } from "./keyframe-store.ts";
import { VIDEO_CONTENT } from "./video-content.ts";
import { analysisPending, videoFactsOf } from "./video-facts.ts";
import { variantsPending } from "../images/image-facts.ts";
import { runVideoPipeline, videoPipelineOptions } from "./video-pipeline.ts";
import { videoDetailFields, videoFields } from "./video-views.ts";

/** Columns of POST /files/export: the probe's facts (a primary-key read per cell). */
function videoExportColumns(db: Database): ExportColumn[] {
  const facts = (id: string) => videoFactsOf(db, id);
  return [
    { key: "duration_seconds", display: "Duration (s)", value: (row) => facts(row.id)?.durationSeconds ?? null },
    { key: "frame_rate", display: "Frame rate", value: (row) => facts(row.id)?.frameRate ?? null },
    { key: "video_codec", display: "Video codec", value: (row) => facts(row.id)?.codec ?? null },
    { key: "resolution", display: "Resolution", value: (row) => (row.width && row.height ? `${row.width}x${row.height}` : null) },
  ];
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
      summary: videoFields,
      detail: async (row, urls) => ({ ...(await videoDetailFields(row, urls)), ...cameraDetailFields(urls.db, row.id) }),
    },
    queued: (fileId) => {
      variantsPending(ctx.db, fileId); // the poster's
      analysisPending(ctx.db, fileId);
    },
    conditionFacts: (fileId) => ({ duration_seconds: videoFactsOf(ctx.db, fileId)?.durationSeconds ?? null }),
    exportColumns: videoExportColumns(ctx.db),
    purge: (fileId) => removeKeyframes(ctx, fileId),
  };
}
