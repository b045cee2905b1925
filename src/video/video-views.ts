/** A video as the File resource shows it (the kind's view): the probe's facts, the poster's variants, the keyframes. */
import type { FileRow } from "../files/file.ts";
import type { FileUrls } from "../files/file-urls.ts";
import { imageDetailFields } from "../images/image-views.ts";
import { keyframesOf } from "./keyframe-store.ts";
import { videoFactsOfFiles } from "./video-facts.ts";
import { imageFactsOfFiles } from "../images/image-facts.ts";

/** The spec's video fields, then the poster's variants and what the probe found beyond them (extensions): each table read once for a page of videos. */
export async function videoSummaries(rows: FileRow[], urls: FileUrls) {
  const ids = rows.map((row) => row.id);
  const [posters, probed, images] = await Promise.all([urls.variantsOfFiles(rows), videoFactsOfFiles(urls.sql, ids), imageFactsOfFiles(urls.sql, ids)]);
  return Promise.all(
    rows.map(async (row) => {
      const poster = posters.get(row.id)!;
      const { facts, analysis } = probed.get(row.id)!;
      const image = images.get(row.id)!;
      return {
        duration_seconds: facts?.durationSeconds ?? null,
        frame_rate: facts?.frameRate ?? null,
        video_codec: facts?.codec ?? null,
        resolution: row.width !== null && row.height !== null ? `${row.width}x${row.height}` : null,
        analysis_status: analysis.status,
        analysis_error: analysis.error,
        thumbnail_url: poster.small_256 ?? null,
        medium_url: poster.medium_750 ?? null,
        full_url: poster.large_1024 ?? null,
        blur_hash: image.blurHash,
        video_url: await urls.original(row),
        container: facts?.container ?? null,
        has_audio: facts?.hasAudio ?? null,
        bit_rate: facts?.bitRate ?? null,
        description_status: row.description_status,
        description_error: row.description_error,
        similar_available: image.embeddingModel !== null,
      };
    }),
  );
}

/** Each keyframe with its time, a signed URL and the text read in it; the OCR regions carry their times. */
export async function videoDetailFields(row: FileRow, urls: FileUrls) {
  const keyframes = [];
  for (const frame of await keyframesOf(urls.sql, row.id)) {
    keyframes.push({
      index: frame.index,
      time_seconds: frame.timeSeconds,
      width: frame.width,
      height: frame.height,
      is_poster: frame.isPoster,
      url: await urls.blob(frame.blobKey, "image/jpeg"),
      visible_text: frame.visibleText,
      objects: frame.objects,
      faces: frame.faces,
    });
  }
  return { keyframes, ...(await imageDetailFields(urls.sql, row)) };
}
