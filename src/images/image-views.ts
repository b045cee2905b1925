/** An image as the File resource shows it (the kind's view): variants, descriptions, OCR lines, camera facts. */
import { cameraFactsOf } from "../camera/camera-facts.ts";
import { complianceOfFiles, type ImageCompliance } from "../compliance/image-compliance.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { getExtraction, listExtractions } from "../extractions/extractions.ts";
import { tagsOf, type FileRow } from "../files/file.ts";
import type { FileUrls } from "../files/file-urls.ts";
import type { VariantType } from "../files/variants.ts";
import { imageFactsOfFiles, type StoredImageFacts } from "./image-facts.ts";

/** The image fields of a page of images: the variants, the image facts and the compliance checks read once for the page. */
export async function imageSummaries(rows: FileRow[], urls: FileUrls) {
  const ids = rows.map((row) => row.id);
  const [variants, facts, compliance] = await Promise.all([urls.variantsOfFiles(rows), imageFactsOfFiles(urls.sql, ids), complianceOfFiles(urls.sql, ids)]);
  return Promise.all(rows.map(async (row) => imageFields(row, await urls.original(row), variants.get(row.id)!, facts.get(row.id)!, compliance.get(row.id) ?? null)));
}

function imageFields(row: FileRow, original: string | null, variants: Partial<Record<VariantType, string>>, facts: StoredImageFacts, compliance: ImageCompliance | null) {
  return {
    dimensions: row.width !== null && row.height !== null ? { width: row.width, height: row.height } : null,
    format: row.format,
    // Until the pipeline has stored a variant its URL is null.
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
    compliance_status: compliance?.status ?? null,
    has_full_description: row.description_generated_at !== null,
    similar_available: facts.embeddingModel !== null,
  };
}

/** OCR lines (as reviewed), the models' descriptions and every stored extraction of an image (or a video's keyframes). */
export async function imageDetailFields(sql: SqlClient, row: FileRow) {
  const extractions = await listExtractions(sql, row.id);
  const regions = extractions.find((e) => e.domain === "text_regions")?.corrected as { regions?: unknown[] } | undefined;
  const fullDescriptions = await sql.all<{ id: string; model: string; kind: string; text: string; created_at: string }>(
    "SELECT id, model, kind, text, created_at FROM file_descriptions WHERE file_id = ? ORDER BY created_at, kind",
    [row.id],
  );
  return { text_regions: regions?.regions ?? [], full_descriptions: fullDescriptions, extractions };
}

/** What the camera recorded and where (extensions), each null when the file says nothing of it. */
export async function cameraDetailFields(sql: SqlClient, fileId: string) {
  const facts = await cameraFactsOf(sql, fileId);
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
export async function analyzeView(sql: SqlClient, row: FileRow, status: "completed" | "processing" | "failed" | "skipped", startedMs: number) {
  const regions = (await getExtraction(sql, row.id, "text_regions"))?.corrected as { regions?: unknown[] } | undefined;
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
