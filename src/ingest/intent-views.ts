/**
 * What the upload-intent endpoints show: the spec's snake_case bodies of `/files/uploads…`,
 * mapped from the camelCase results of intents.ts.
 */
import type { CompletionResult, IntentCreation, IntentState, PartConfirmation, PartUrl } from "./intents.ts";

const partUrlView = (p: PartUrl) => ({ part_number: p.partNumber, url: p.url, expires_at: p.expiresAt });

/** POST /files/uploads: the single PUT, or the part URLs. */
export function intentCreatedView(intent: IntentCreation) {
  if (intent.mode === "single_shot") {
    return {
      upload_id: intent.id,
      upload_mode: intent.mode,
      media_type: intent.mediaType,
      method: "PUT" as const,
      presigned_url: intent.url,
      headers: intent.headers,
      object_key: intent.objectKey,
      expires_at: intent.expiresAt,
      max_size_bytes: intent.maxSizeBytes,
      bucket_name: intent.bucket,
    };
  }
  return {
    upload_id: intent.id,
    upload_mode: intent.mode,
    media_type: intent.mediaType,
    s3_upload_id: intent.storeUploadId,
    object_key: intent.objectKey,
    part_urls: intent.partUrls.map(partUrlView),
    part_size_bytes: intent.partSizeBytes,
    total_parts: intent.totalParts,
    expires_at: intent.expiresAt,
    bucket_name: intent.bucket,
  };
}

/** GET /files/uploads/{id}. */
export function intentView(intent: IntentState) {
  return {
    upload_id: intent.id,
    status: intent.status,
    upload_mode: intent.mode,
    media_type: intent.mediaType,
    filename: intent.filename,
    content_type: intent.contentType,
    size_bytes: intent.sizeBytes,
    claimed_file_hash: intent.claimedSha256,
    object_key: intent.objectKey,
    bucket_name: intent.bucket,
    s3_upload_id: intent.storeUploadId,
    part_size_bytes: intent.partSizeBytes,
    total_parts: intent.totalParts,
    parts_confirmed: intent.partsConfirmed,
    confirmed_parts: intent.confirmedParts.map((p) => ({ part_number: p.partNumber, etag: p.etag, size_bytes: p.sizeBytes, confirmed_at: p.confirmedAt })),
    progress_percent: intent.progressPercent,
    confirmed_at: intent.confirmedAt,
    idempotency_key: intent.idempotencyKey,
    file_id: intent.fileId,
    deduplicated: intent.deduplicated,
    error_message: intent.errorMessage,
    created_at: intent.createdAt,
    updated_at: intent.updatedAt,
    expires_at: intent.expiresAt,
    completed_at: intent.completedAt,
  };
}

export function partConfirmedView(c: PartConfirmation) {
  return { upload_id: c.id, part_number: c.partNumber, parts_confirmed: c.partsConfirmed, total_parts: c.totalParts, progress_percent: c.progressPercent };
}

export function partRetryView(retry: PartUrl & { id: string }) {
  return { upload_id: retry.id, ...partUrlView(retry) };
}

export function completionView(c: CompletionResult) {
  return {
    upload_id: c.id,
    file_id: c.fileId,
    media_type: c.mediaType,
    filename: c.filename,
    object_key: c.objectKey,
    size_bytes: c.sizeBytes,
    deduplicated: c.deduplicated,
    // A deduplicated upload is the existing file, whose processing has run; a new one's is queued.
    status: c.deduplicated ? ("completed" as const) : ("processing" as const),
  };
}

export function abortView(a: { id: string; aborted: boolean; reason: string | null }) {
  return { upload_id: a.id, aborted: a.aborted, reason: a.reason };
}
