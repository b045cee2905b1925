/** An image as the File resource shows it (the kind's view): variants, descriptions, OCR lines, camera facts. */
import type { Database } from "bun:sqlite";
import { cameraFactsOf } from "../camera/camera-facts.ts";
import { complianceOf } from "../compliance/image-compliance.ts";
import { getExtraction, listExtractions } from "../extractions/extractions.ts";
import { tagsOf, type FileRow } from "../files/file.ts";
import type { FileUrls } from "../files/file-urls.ts";
import { imageFactsOf } from "./image-facts.ts";

export async function imageFields(row: FileRow, urls: FileUrls) {
  const original = await urls.original(row);
  // Until the pipeline has stored a variant its URL is null.
  const variants = await urls.variants(row);
  const facts = imageFactsOf(urls.db, row.id);
  return {
    dimensions: row.width !== null && row.height !== null ? { width: row.width, height: row.height } : null,
    format: row.format,
    thumbnail_url: variants.small_256 ?? null,
    medium_url: variants.medium_750 ?? null,
    full_url: variants.large_1024 ?? null,
    original_url: original,
    variant_status: facts.variantStatus,
    variant_count: facts.variantCount,
    blur_hash: facts.blurHash,
    description_status: row.description_status,
    description_error: row.description_error,
    description_generated_at: row.description_generated_at,
    compliance_status: complianceOf(urls.db, row.id)?.status ?? null,
    has_full_description: row.description_generated_at !== null,
    similar_available: facts.embeddingModel !== null,
  };
}

/** OCR lines (as reviewed), the models' descriptions and every stored extraction of an image (or a video's keyframes). */
export function imageDetailFields(db: Database, row: FileRow) {
  const extractions = listExtractions(db, row.id);
  const regions = extractions.find((e) => e.domain === "text_regions")?.corrected as { regions?: unknown[] } | undefined;
  const fullDescriptions = db
    .query<{ id: string; model: string; kind: string; text: string; created_at: string }, [string]>(
      "SELECT id, model, kind, text, created_at FROM file_descriptions WHERE file_id = ? ORDER BY created_at, kind",
    )
    .all(row.id);
  return { text_regions: regions?.regions ?? [], full_descriptions: fullDescriptions, extractions };
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

/** The answer of POST /images/analyze: what the image's analysis found so far. */
export function analyzeView(db: Database, row: FileRow, status: "completed" | "processing" | "failed" | "skipped", startedMs: number) {
  const regions = getExtraction(db, row.id, "text_regions")?.corrected as { regions?: unknown[] } | undefined;
  const finished = status !== "processing";
  return {
    image_id: row.id,
    status,
    job_id: row.processing_job_id,
    poll_url: row.processing_job_id ? `/api/v2/job/${row.processing_job_id}` : null,
    processing_time_ms: Math.round((performance.now() - startedMs) * 10) / 10,
    description: finished ? (row.user_description ?? row.upload_description) : null,
    description_status: row.description_status,
    description_error: row.description_error,
    tags: tagsOf(row),
    visible_text: row.visible_text,
    text_regions: (regions?.regions ?? []) as never[],
    content_category: row.content_category,
    dimensions: row.width !== null && row.height !== null ? { width: row.width, height: row.height } : null,
    error: row.processing_status === "failed" ? row.processing_error : null,
  };
}
