/** The upload routes' request and response schemas (TypeBox): uploads, batches, sessions, the unified status. */
import { t } from "elysia";
import { DOCUMENT_TYPES, type MediaType } from "../files/file.ts";
import { Enum, Nullable, NullableTimestamp, Timestamp, Uuid } from "../http/shapes.ts";
import { UploadFormFields } from "./options.ts";
import { SESSION_STATUSES } from "./sessions.ts";

export const DocumentType = Nullable(Enum(DOCUMENT_TYPES));

/** The upload responses for the registered kinds whose files are uploaded (`mediaTypes`). */
export const uploadShapes = (mediaTypes: readonly MediaType[]) => {
  const MediaTypeEnum = Enum(mediaTypes);
  const UploadResponse = t.Object(
    {
      image_id: t.String({ format: "uuid" }),
      upload_method: t.Literal("STREAMING"),
      status: Enum(["completed", "processing", "skipped"]),
      processing_time_ms: t.Number(),
      upload_completed: t.Boolean(),
      thumbnail_generation_started: t.Boolean(),
      analysis_started: t.Boolean(),
      skipped: t.Boolean(),
      skipped_existing_image_id: Nullable(t.String({ format: "uuid" })),
      storage_target: t.String(),
      media_type: MediaTypeEnum,
      document_type: DocumentType,
      text_extraction_status: Nullable(t.String()),
    },
    { title: "UploadResponse" },
  );

  const ItemResult = t.Object({
    image_id: Nullable(t.String({ format: "uuid" })),
    filename: t.String(),
    status: Enum(["completed", "failed", "skipped"]),
    processing_time_ms: Nullable(t.Number()),
    skipped: t.Boolean(),
    skipped_existing_image_id: Nullable(t.String({ format: "uuid" })),
    error: Nullable(t.String()),
    storage_target: t.String(),
    media_type: MediaTypeEnum,
    document_type: DocumentType,
    text_extraction_status: Nullable(t.String()),
  });

  const BatchResponse = t.Object(
    {
      session_id: t.String({ format: "uuid" }),
      total_files: t.Integer(),
      accepted_files: t.Integer(),
      rejected_files: t.Integer(),
      status: Enum(["completed", "partial", "processing", "rejected"]),
      immediate_results: Nullable(t.Array(ItemResult)),
      status_url: t.String(),
      websocket_channel: t.String(),
      rejections: Nullable(
        t.Array(t.Object({ file_index: t.Integer(), filename: t.String(), code: t.String(), reason: t.String() })),
      ),
    },
    { title: "BatchUploadResponse" },
  );
  return { UploadResponse, BatchResponse };
};

/** What a session and its summary in a list both say first. */
const sessionCounts = {
  session_id: t.String({ format: "uuid" }),
  status: Enum(SESSION_STATUSES),
  upload_method: Enum(["streaming", "presigned"]),
  total_files: t.Integer(),
  completed_files: t.Integer(),
  failed_files: t.Integer(),
  skipped_files: t.Integer(),
};

export const SessionSchema = t.Object(
  {
    ...sessionCounts,
    pending_files: t.Integer(),
    progress_percentage: t.Number(),
    created_at: Timestamp,
    started_at: NullableTimestamp,
    completed_at: NullableTimestamp,
    estimated_completion_time: NullableTimestamp,
    recent_completions: t.Array(
      t.Object({
        filename: t.String(),
        image_id: Nullable(t.String()),
        status: t.String(),
        description: Nullable(t.String()),
        processing_time_ms: Nullable(t.Number()),
      }),
    ),
    recent_errors: t.Array(t.Object({ filename: t.String(), error: t.String(), failed_at: NullableTimestamp })),
    results_url: t.String(),
    websocket_channel: t.String(),
  },
  { title: "UploadSession" },
);

export const SessionSummaryItem = t.Object({
  ...sessionCounts,
  progress_percentage: t.Number(),
  created_at: Timestamp,
  completed_at: NullableTimestamp,
});

export const UnifiedStatus = t.Object(
  {
    image_id: t.String({ format: "uuid" }),
    batch_id: Nullable(t.String()),
    unified_status: Enum(["uploading", "confirming", "queued", "processing", "completed", "failed", "partially_completed"]),
    component_statuses: t.Object({
      variant_status: Nullable(t.String()),
      description_status: Nullable(t.String()),
      upload_status: t.String(),
      processing_status: t.String({ description: "queued, processing, stored (bytes kept, no analysis pipeline ran), completed or failed" }),
    }),
    processing_ids: t.Array(t.String()),
    error_message: Nullable(t.String()),
    last_error_at: NullableTimestamp,
    created_at: Timestamp,
    last_updated_at: Timestamp,
    completed_at: NullableTimestamp,
    retry_count: t.Integer(),
    processing_duration_seconds: Nullable(t.Number()),
    is_stuck: t.Boolean(),
    is_terminal: t.Boolean(),
    progress: t.Optional(
      Nullable(
        t.Object(
          {
            stage: t.String({ description: "The stage running (extraction, chunks, keyframes, ocr...)" }),
            stage_number: t.Integer({ description: "1-based place among the pipeline's stages" }),
            stage_count: t.Integer(),
            percent: t.Integer({ description: "The whole run, 0-100" }),
            unit: Nullable(t.String({ description: "What the stage counts: page (a document's pages read), frame (a video's keyframes)" })),
            done: Nullable(t.Integer()),
            total: Nullable(t.Integer()),
          },
          { description: "Extension, on GET /files/uploads-status/{image_id} only: what the processing is doing right now; null when no run is at work on it. Where several processes share the database it comes from the worker running the file, at most about half a second old (a worker that stopped reporting for a minute is taken as gone)" },
        ),
      ),
    ),
  },
  { title: "UnifiedUploadStatus" },
);

/**
 * OpenAPI request body of the multipart upload endpoints (Elysia cannot derive it from parse:
 * "none"). The text fields are the schema the upload checks them with (checkForm).
 */
export const multipartBody = (files: Record<string, unknown>, required: string[], extra: Record<string, unknown> = {}) => ({
  required: true,
  content: {
    "multipart/form-data": { schema: { type: "object", required, properties: { ...files, ...UploadFormFields.properties, ...extra } } },
  },
});

export const sessionParams = t.Object({ session_id: Uuid("session_id") });
export const SHA256 = t.String({ pattern: "^[0-9a-fA-F]{64}$", error: "hashes: every hash must be 64 hexadecimal characters (SHA-256)" });
