/** HTTP binding of upload intents (`/files/uploads…`): direct-to-store uploads by presigned URL. */
import { Elysia, t } from "elysia";
import type { IngestDeps } from "./deps.ts";
import { badRequest } from "../errors.ts";
import { permissions } from "../http/permissions.ts";
import { publicOrigin } from "../http/request-context.ts";
import { Enum, Nullable, NullableTimestamp, Timestamp, Uuid, errorResponses } from "../http/shapes.ts";
import { abortIntent, completeIntent, confirmPart, createIntent, getIntent, INTENT_LIMITS, retryPart, type CreateIntentBody } from "./intents.ts";
import { abortView, completionView, intentCreatedView, intentView, partConfirmedView, partRetryView } from "./intent-views.ts";
import { emptyOptionsAbsent, uploadOptionsJson } from "./options.ts";

/**
 * The media types an intent may be: a forecast from the client's hints at creation (the built-in
 * kinds'), and at completion what the bytes are (any registered kind's).
 */
const MediaType = t.String({ description: "image, document or video, or another registered kind's type" });
const IntentStatus = Enum(["PENDING", "UPLOADED", "COMPLETED", "FAILED"]);
const UploadMode = Enum(["single_shot", "multipart"], { error: "upload_mode: must be single_shot or multipart" });

const SingleShotCreated = t.Object(
  {
    upload_id: t.String({ format: "uuid" }),
    upload_mode: t.Literal("single_shot"),
    media_type: MediaType,
    method: t.Literal("PUT"),
    presigned_url: t.String(),
    headers: t.Record(t.String(), t.String(), { description: "Send exactly these headers with the PUT (they are signed)" }),
    object_key: t.String(),
    expires_at: Timestamp,
    max_size_bytes: t.Integer(),
    bucket_name: t.String(),
  },
  { title: "SingleShotUploadIntent" },
);

const MultipartCreated = t.Object(
  {
    upload_id: t.String({ format: "uuid" }),
    upload_mode: t.Literal("multipart"),
    media_type: MediaType,
    s3_upload_id: t.String(),
    object_key: t.String(),
    part_urls: t.Array(t.Object({ part_number: t.Integer(), url: t.String(), expires_at: Timestamp })),
    part_size_bytes: t.Integer(),
    total_parts: t.Integer(),
    expires_at: Timestamp,
    bucket_name: t.String(),
  },
  { title: "MultipartUploadIntent" },
);

const IntentResource = t.Object(
  {
    upload_id: t.String({ format: "uuid" }),
    status: IntentStatus,
    upload_mode: Enum(["single_shot", "multipart"]),
    media_type: MediaType,
    filename: t.String(),
    content_type: t.String(),
    size_bytes: t.Integer(),
    claimed_file_hash: t.String(),
    object_key: t.String(),
    bucket_name: t.String(),
    s3_upload_id: Nullable(t.String()),
    part_size_bytes: Nullable(t.Integer()),
    total_parts: Nullable(t.Integer()),
    parts_confirmed: Nullable(t.Integer()),
    confirmed_parts: t.Array(t.Object({ part_number: t.Integer(), etag: t.String(), size_bytes: t.Integer(), confirmed_at: Timestamp })),
    progress_percent: Nullable(t.Number()),
    confirmed_at: Nullable(Timestamp),
    idempotency_key: Nullable(t.String()),
    file_id: Nullable(t.String({ format: "uuid" })),
    deduplicated: t.Boolean(),
    error_message: Nullable(t.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
    expires_at: Timestamp,
    completed_at: NullableTimestamp,
  },
  { title: "UploadIntent" },
);

const CreateBody = t.Object({
  filename: t.String({ error: "filename: required string" }),
  content_type: t.String({ error: "content_type: required string" }),
  size_bytes: t.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, error: "size_bytes: must be a positive integer" }),
  claimed_file_hash: t.String({ pattern: "^[0-9a-fA-F]{64}$", error: "claimed_file_hash: must be a 64-character hex SHA-256" }),
  upload_mode: t.Optional(UploadMode),
  part_size_bytes: t.Optional(t.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, error: "part_size_bytes: must be a positive integer" })),
  idempotency_key: t.Optional(Nullable(t.String({ minLength: 1, maxLength: 128, error: "idempotency_key: must be 1-128 characters" }))),
  ...uploadOptionsJson,
});

const uploadParams = t.Object({ upload_id: Uuid("upload_id") });
const PartNumber = t.Integer({ minimum: 1, maximum: INTENT_LIMITS.maxParts, error: `part_number: must be an integer from 1 to ${INTENT_LIMITS.maxParts}` });


const INTENT_ERRORS = errorResponses([400, 404, 409, 410]);

export function intentRoutes(ctx: IngestDeps) {
  return new Elysia({ tags: ["Uploads"] })
    .use(permissions)
    .post(
      "/files/uploads",
      async ({ principal, body, request, set }) => {
        const { replayed, intent } = await createIntent(ctx, principal, body as CreateIntentBody, publicOrigin(ctx.config, request));
        set.status = replayed ? 200 : 201;
        return intentCreatedView(intent);
      },
      {
        permission: "edit",
        transform({ body }) {
          emptyOptionsAbsent(body);
        },
        body: CreateBody,
        response: { 200: t.Union([SingleShotCreated, MultipartCreated]), 201: t.Union([SingleShotCreated, MultipartCreated]), ...INTENT_ERRORS, ...errorResponses([413, 415], { public: true }) },
        detail: {
          summary: "Create an upload intent (bytes go straight to the object store)",
          description:
            "single_shot up to 5 GB (one PUT with the returned headers), multipart up to 5 TB (parts of 5 MB-5 GB, at most 10,000). Without upload_mode, files above 100 MB go multipart. 201 for a new intent; 200 with fresh URLs when idempotency_key names an existing one (409 IDEMPOTENCY_KEY_REUSED if the file differs).",
        },
      },
    )
    .get("/files/uploads/:upload_id", async ({ principal, params }) => intentView(await getIntent(ctx, principal.orgId, params.upload_id)), {
      permission: "view",
      params: uploadParams,
      response: { 200: IntentResource, ...INTENT_ERRORS },
      detail: { summary: "Get an upload intent (status PENDING, UPLOADED, COMPLETED or FAILED)" },
    })
    .post(
      "/files/uploads/:upload_id/parts/confirm",
      async ({ principal, params, body }) =>
        partConfirmedView(await confirmPart(ctx, principal.orgId, params.upload_id, { partNumber: body.part_number, etag: body.etag, sizeBytes: body.size_bytes })),
      {
        permission: "edit",
        params: uploadParams,
        body: t.Object({
          part_number: PartNumber,
          etag: t.String({ error: "etag: required string (the part PUT's ETag header)" }),
          size_bytes: t.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, error: "size_bytes: must be an integer of at least 0" }),
        }),
        response: {
          200: t.Object({ upload_id: t.String(), part_number: t.Integer(), parts_confirmed: t.Integer(), total_parts: t.Integer(), progress_percent: t.Number() }),
          ...INTENT_ERRORS,
        },
        detail: { summary: "Confirm a part after its PUT (checked against the object store when it can list parts)" },
      },
    )
    .post(
      "/files/uploads/:upload_id/parts/retry",
      async ({ principal, params, body, request }) => partRetryView(await retryPart(ctx, principal.orgId, params.upload_id, body.part_number, publicOrigin(ctx.config, request))),
      {
        permission: "edit",
        params: uploadParams,
        body: t.Object({ part_number: PartNumber }),
        response: { 200: t.Object({ upload_id: t.String(), part_number: t.Integer(), url: t.String(), expires_at: Timestamp }), ...INTENT_ERRORS },
        detail: { summary: "A fresh presigned URL for a part (drops that part's earlier confirmation)" },
      },
    )
    .post(
      "/files/uploads/:upload_id/complete",
      async ({ principal, params, body }) => {
        if (body && Object.keys(body).length > 0) {
          throw badRequest("body: must be empty ({}); completion uses the claimed hash and the confirmed parts stored with the upload");
        }
        return completionView(await completeIntent(ctx, principal, params.upload_id));
      },
      {
      permission: "edit",
      params: uploadParams,
      body: t.Optional(t.Record(t.String(), t.Unknown())),
      response: {
        200: t.Object(
          {
            upload_id: t.String({ format: "uuid" }),
            file_id: t.String({ format: "uuid" }),
            media_type: MediaType,
            filename: t.String(),
            object_key: t.String(),
            size_bytes: t.Integer(),
            deduplicated: t.Boolean(),
            status: Enum(["processing", "completed"]),
          },
          { title: "UploadCompletion" },
        ),
        ...INTENT_ERRORS,
        ...errorResponses([415, 422], { public: true }),
      },
      detail: {
        summary: "Complete an upload: assemble, verify SHA-256, detect the type, create the file",
        description:
          "409 UPLOAD_HASH_MISMATCH when the stored bytes differ from claimed_file_hash or size_bytes (the upload is discarded); 422 UPLOAD_PARTS_MISSING listing unconfirmed parts; 415 when the content is not a supported type; 410 UPLOAD_EXPIRED. Completing again returns the same result.",
      },
      },
    )
    .delete(
      "/files/uploads/:upload_id",
      async ({ principal, params, query }) => abortView(await abortIntent(ctx, principal.orgId, params.upload_id, query.reason ?? null)),
      {
        // An edit, not a deletion: it cancels an upload in progress, whose bytes never became a
        // file; whoever may start an upload may stop it. Deleting stored files needs DELETE.
        permission: "edit",
        params: uploadParams,
        query: t.Object({ reason: t.Optional(t.String({ maxLength: 255, error: "reason: at most 255 characters" })) }),
        response: { 200: t.Object({ upload_id: t.String(), aborted: t.Boolean(), reason: Nullable(t.String()) }), ...INTENT_ERRORS },
        detail: { summary: "Abort an upload intent (aborted is false when it had already finished)" },
      },
    );
}
