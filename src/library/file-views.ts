/**
 * The File resource as the API shows it: the common fields plus the fields of the file's media
 * type only (spec: "media-specific fields appear only on the matching variant"). Fields that
 * processing has not filled yet are null, never missing. Summaries (listing) leave out the
 * heavy detail-only fields: extracted_text, text_regions and full_descriptions.
 */
import type { Database } from "bun:sqlite";
import { listExtractions } from "../extractions/extractions.ts";
import { FileUrls } from "../files/file-urls.ts";
import { type FileRow, tagsOf } from "../files/file.ts";
import { commonFields } from "../files/file-view.ts";
import { keyframesOf } from "../video/keyframe-store.ts";
import { linkFields } from "../links/link-views.ts";
import { openSuggestions } from "../files/tag-suggestions.ts";
import { cameraFactsOf } from "../camera/camera-facts.ts";

/** OCR lines (as reviewed), the models' descriptions and every stored extraction of an image. */
function imageDetailFields(db: Database, row: FileRow) {
  const extractions = listExtractions(db, row.id);
  const regions = extractions.find((e) => e.domain === "text_regions")?.corrected as { regions?: unknown[] } | undefined;
  const fullDescriptions = db
    .query<{ id: string; model: string; kind: string; text: string; created_at: string }, [string]>(
      "SELECT id, model, kind, text, created_at FROM file_descriptions WHERE file_id = ? ORDER BY created_at, kind",
    )
    .all(row.id);
  return { text_regions: regions?.regions ?? [], full_descriptions: fullDescriptions, extractions };
}

async function imageFields(row: FileRow, urls: FileUrls) {
  const original = await urls.original(row);
  // Until the pipeline has stored a variant its URL is null.
  const variants = await urls.variants(row);
  return {
    dimensions: row.width !== null && row.height !== null ? { width: row.width, height: row.height } : null,
    format: row.format,
    thumbnail_url: variants.small_256 ?? null,
    medium_url: variants.medium_750 ?? null,
    full_url: variants.large_1024 ?? null,
    original_url: original,
    variant_status: row.variant_status,
    variant_count: row.variant_count,
    blur_hash: row.blur_hash,
    description_status: row.description_status,
    description_error: row.description_error,
    description_generated_at: row.description_generated_at,
    compliance_status: row.compliance_status,
    has_full_description: row.description_generated_at !== null,
    similar_available: row.image_embedding_model !== null,
  };
}

async function documentFields(row: FileRow, urls: FileUrls) {
  return {
    document_type: row.document_type,
    page_count: row.page_count,
    chunk_count: row.chunk_count,
    text_extraction_status: row.text_extraction_status,
    document_url: await urls.original(row),
  };
}

/** The spec's video fields, then the poster's variants and what the probe found beyond them (extensions). */
async function videoFields(row: FileRow, urls: FileUrls) {
  const poster = await urls.variants(row);
  return {
    duration_seconds: row.duration_seconds,
    frame_rate: row.frame_rate,
    video_codec: row.video_codec,
    resolution: row.width !== null && row.height !== null ? `${row.width}x${row.height}` : null,
    analysis_status: row.analysis_status,
    analysis_error: row.analysis_error,
    thumbnail_url: poster.small_256 ?? null,
    medium_url: poster.medium_750 ?? null,
    full_url: poster.large_1024 ?? null,
    blur_hash: row.blur_hash,
    video_url: await urls.original(row),
    container: row.video_container,
    has_audio: row.has_audio === null ? null : row.has_audio === 1,
    bit_rate: row.bit_rate,
    description_status: row.description_status,
    description_error: row.description_error,
    similar_available: row.image_embedding_model !== null,
  };
}

/** Each keyframe with its time, a signed URL and the text read in it; the OCR regions carry their times. */
async function videoDetailFields(row: FileRow, urls: FileUrls) {
  const keyframes = [];
  for (const frame of keyframesOf(urls, row.id)) {
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
  return { keyframes, ...imageDetailFields(urls.db, row) };
}

/** What the camera recorded and where (extensions), each null when the file says nothing of it. */
export function cameraDetailFields(db: Database, fileId: string) {
  const facts = cameraFactsOf(db, fileId);
  const camera = facts && {
    make: facts.make,
    model: facts.model,
    lens: facts.lens,
    focal_length_mm: facts.focalLengthMm,
    focal_length_35mm: facts.focalLength35mm,
    f_number: facts.fNumber,
    exposure_time_seconds: facts.exposureSeconds,
    iso: facts.iso,
    orientation: facts.orientation,
    taken_at: facts.takenAt,
    taken_at_offset: facts.takenAtOffset,
    taken_at_source: facts.takenAtSource,
  };
  const location =
    facts && facts.latitude !== null && facts.longitude !== null
      ? { latitude: facts.latitude, longitude: facts.longitude, altitude_m: facts.altitudeM, country_code: facts.countryCode, country: facts.country, region: facts.region, city: facts.city }
      : null;
  return { camera, location };
}

export async function fileSummary(row: FileRow, urls: FileUrls) {
  switch (row.media_type) {
    case "image":
      return { ...commonFields(row), ...(await imageFields(row, urls)) };
    case "document":
      return { ...commonFields(row), ...(await documentFields(row, urls)) };
    case "video":
      return { ...commonFields(row), ...(await videoFields(row, urls)) };
    case "link":
      return { ...commonFields(row), ...(await linkFields(row, urls)) };
  }
}

/**
 * A summary whose visible_text is cut to `chars` characters, with `visible_text_truncated`
 * saying whether anything was left out (GET /files?visible_text_chars=, an extension): a page of
 * 100 documents otherwise carries up to 200,000 characters of text each.
 */
export function withVisibleTextCut<T extends { visible_text: string | null }>(summary: T, chars: number): T & { visible_text_truncated: boolean } {
  const text = summary.visible_text;
  if (text === null || text.length <= chars) return { ...summary, visible_text_truncated: false };
  // Never half of a surrogate pair.
  const end = chars > 0 && /[\uD800-\uDBFF]/.test(text[chars - 1]!) ? chars - 1 : chars;
  return { ...summary, visible_text: text.slice(0, end), visible_text_truncated: true };
}

export async function fileDetail(row: FileRow, urls: FileUrls) {
  switch (row.media_type) {
    case "image":
      return { ...commonFields(row), ...(await imageFields(row, urls)), ...imageDetailFields(urls.db, row), ...cameraDetailFields(urls.db, row.id) };
    case "document":
      return { ...commonFields(row), ...(await documentFields(row, urls)), extracted_text: urls.extractedText(row.id), suggested_tags: openSuggestions(urls.db, row.id, tagsOf(row)) };
    case "video":
      return { ...commonFields(row), ...(await videoFields(row, urls)), ...(await videoDetailFields(row, urls)), ...cameraDetailFields(urls.db, row.id) };
    case "link":
      return { ...commonFields(row), ...(await linkFields(row, urls)) };
  }
}
