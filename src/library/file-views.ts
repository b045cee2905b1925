/**
 * The File resource as the API shows it: the common fields plus the fields of the file's media
 * type only (spec: "media-specific fields appear only on the matching variant"). Fields that
 * processing has not filled yet are null, never missing. Summaries (listing) leave out the
 * heavy detail-only fields: extracted_text, text_regions and full_descriptions.
 */
import type { Database } from "bun:sqlite";
import type { FileRepository } from "../files/file-repository.ts";
import type { BlobStore } from "../storage/blob-store.ts";
import { listExtractions } from "../extractions/extractions.ts";
import type { VariantType } from "../images/variants.ts";
import { isInlineSafe } from "../storage/serving-policy.ts";
import { type FileRow, tagsOf } from "../files/file.ts";
import { keyframesOf } from "../video/keyframe-store.ts";
import { linkImages } from "../links/page-images.ts";
import { cameraFactsOf } from "../camera/camera-facts.ts";

/** Image links are valid for an hour (the spec's variant redirect lifetime). */
export const VIEW_URL_SECONDS = 3600;

/** What signing a file's URLs reads (every kind's routes sign them). */
export interface FileUrlDeps {
  db: Database;
  blobs: BlobStore;
  files: FileRepository;
}

/** Signs blob URLs for one request (local-store URLs point at the origin the client used). */
export class FileUrls {
  constructor(
    private readonly ctx: FileUrlDeps,
    private readonly origin: string,
  ) {}

  get db(): Database {
    return this.ctx.db;
  }

  /** A document's whole text for its detail view (kept apart from the row, see FileRepository.extractedText). */
  extractedText(fileId: string): string | null {
    return this.ctx.files.extractedText(fileId);
  }

  /** A link's stored icon, or null before a crawl stored one. */
  async favicon(row: FileRow, expiresInSeconds = VIEW_URL_SECONDS): Promise<string | null> {
    if (!row.favicon_blob_key) return null;
    return this.ctx.blobs.presignGet(row.favicon_blob_key, { expiresInSeconds, contentType: row.favicon_content_type ?? "image/x-icon" }, this.origin);
  }

  /** Signed URLs of an image's stored variants, by variant type. */
  async variants(row: FileRow, expiresInSeconds = VIEW_URL_SECONDS): Promise<Partial<Record<VariantType, string>>> {
    const rows = this.ctx.db
      .query<{ variant_type: VariantType; blob_key: string; content_type: string }, [string]>(
        "SELECT variant_type, blob_key, content_type FROM image_variants WHERE file_id = ?",
      )
      .all(row.id);
    const urls: Partial<Record<VariantType, string>> = {};
    for (const v of rows) {
      urls[v.variant_type] = await this.ctx.blobs.presignGet(v.blob_key, { expiresInSeconds, contentType: v.content_type }, this.origin);
    }
    return urls;
  }

  /** Any other stored object the file owns (a video's keyframes), shown inline. */
  blob(key: string, contentType: string, expiresInSeconds = VIEW_URL_SECONDS): Promise<string> {
    return this.ctx.blobs.presignGet(key, { expiresInSeconds, contentType }, this.origin);
  }

  /**
   * The stored original. A type that may not be shown inline (an SVG: it is a document) is
   * always an attachment (serving-policy.ts), so it carries its file name even as a view URL.
   */
  async original(row: FileRow, expiresInSeconds = VIEW_URL_SECONDS, download = false): Promise<string | null> {
    if (!row.blob_key) return null;
    const named = download || !isInlineSafe(row.content_type);
    return this.ctx.blobs.presignGet(
      row.blob_key,
      { expiresInSeconds, contentType: row.content_type, ...(named ? { downloadName: row.filename } : {}) },
      this.origin,
    );
  }
}

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

function common(row: FileRow) {
  return {
    id: row.id,
    media_type: row.media_type,
    title: row.title,
    filename: row.filename,
    tags: tagsOf(row),
    size_bytes: row.size_bytes,
    content_type: row.content_type,
    created_at: row.created_at,
    updated_at: row.updated_at,
    content_created_at: row.content_created_at,
    user_description: row.user_description,
    upload_description: row.upload_description,
    visible_text: row.visible_text,
    source_url: row.source_url,
    content_category: row.content_category,
    project_id: row.project_id,
    folder_id: row.folder_id,
    processing_status: row.processing_status,
    processing_error: row.processing_error,
  };
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

/**
 * A link as crawled: favicon_url is a signed URL of the stored copy (it works without the
 * site), extracted_images the image files made from the page, with their variant URLs.
 */
async function linkFields(row: FileRow, urls: FileUrls) {
  const images = await Promise.all(
    linkImages(urls.db, row.id).map(async ({ file, sourceUrl }) => {
      const variants = await urls.variants(file);
      return { id: file.id, source_url: sourceUrl, thumbnail_url: variants.small_256 ?? null, medium_url: variants.medium_750 ?? null, variant_status: file.variant_status };
    }),
  );
  return {
    domain: row.domain,
    og_metadata: row.og_metadata ? (JSON.parse(row.og_metadata) as Record<string, unknown>) : null,
    favicon_url: await urls.favicon(row),
    crawl_status: row.crawl_status,
    crawl_error: row.crawl_error,
    crawled_at: row.crawled_at,
    snapshot_available: row.snapshot_blob_key !== null,
    extracted_images: images,
    extracted_images_count: images.length,
    // The page's first image (its og:image when it has one) stands for the link in a grid.
    thumbnail_url: images.find((i) => i.thumbnail_url)?.thumbnail_url ?? null,
  };
}

export async function fileSummary(row: FileRow, urls: FileUrls) {
  switch (row.media_type) {
    case "image":
      return { ...common(row), ...(await imageFields(row, urls)) };
    case "document":
      return { ...common(row), ...(await documentFields(row, urls)) };
    case "video":
      return { ...common(row), ...(await videoFields(row, urls)) };
    case "link":
      return { ...common(row), ...(await linkFields(row, urls)) };
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
      return { ...common(row), ...(await imageFields(row, urls)), ...imageDetailFields(urls.db, row), ...cameraDetailFields(urls.db, row.id) };
    case "document":
      return { ...common(row), ...(await documentFields(row, urls)), extracted_text: urls.extractedText(row.id) };
    case "video":
      return { ...common(row), ...(await videoFields(row, urls)), ...(await videoDetailFields(row, urls)), ...cameraDetailFields(urls.db, row.id) };
    case "link":
      return { ...common(row), ...(await linkFields(row, urls)) };
  }
}
