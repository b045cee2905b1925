/**
 * HTTP binding of the image-only operations: variant redirects, re-rendering variants, similar
 * images, extraction reviews, and the one-call analyze endpoints (sync and async).
 */
import { Elysia, t } from "elysia";
import type { ImageDeps } from "./deps.ts";
import { ApiError } from "../errors.ts";
import { reviewExtraction } from "../extractions/extractions.ts";
import { parseReviewDomain, ReviewBody, reviewCorrections } from "../extractions/review.ts";
import { permissions } from "../http/permissions.ts";
import { knownFieldsOnly } from "../http/validation.ts";
import { principalOf, publicOrigin } from "../http/request-context.ts";
import { Enum, Nullable, Timestamp, errorResponses } from "../http/shapes.ts";
import { ANALYZE_TIMEOUT_SECONDS, parseAnalyzeTimeout } from "../ingest/options.ts";
import { multipartBody } from "../ingest/model.ts";
import { streamingUpload } from "../ingest/streaming-upload.ts";
import { formOf } from "../ingest/multipart-form.ts";
import { getJobRow, waitForJob } from "../jobs/queue.ts";
import { tagsOf, type FileRow } from "../files/file.ts";
import { FileUrls, VIEW_URL_SECONDS } from "../files/file-urls.ts";
import { TextRegion, FileParams } from "../files/file-shapes.ts";
import { getExtraction } from "../extractions/extractions.ts";
import { VARIANT_TYPES } from "../files/variants.ts";

const VARIANT_CHOICES = ["original", ...VARIANT_TYPES] as const;

const AnalyzeResult = t.Object(
  {
    image_id: t.String({ format: "uuid" }),
    status: Enum(["completed", "processing", "failed", "skipped"], {
      description: "completed: processed (see description_status); processing: still running after the timeout; failed: the image could not be processed; skipped: duplicate of image_id",
    }),
    job_id: Nullable(t.String({ format: "uuid" })),
    poll_url: Nullable(t.String()),
    processing_time_ms: t.Number(),
    description: Nullable(t.String()),
    description_status: Nullable(t.String()),
    description_error: Nullable(t.String()),
    tags: t.Array(t.String()),
    visible_text: Nullable(t.String()),
    text_regions: t.Array(TextRegion),
    content_category: t.String(),
    dimensions: Nullable(t.Object({ width: t.Integer(), height: t.Integer() })),
    error: Nullable(t.String()),
  },
  { title: "ImageAnalyzeResult" },
);

function analyzeView(ctx: ImageDeps, row: FileRow, status: "completed" | "processing" | "failed" | "skipped", startedMs: number) {
  const regions = getExtraction(ctx.db, row.id, "text_regions")?.corrected as { regions?: unknown[] } | undefined;
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

export function imageRoutes(ctx: ImageDeps) {
  const { db, clock } = ctx;
  const loadImage = (orgId: string, ref: string) => ctx.files.findOfType(orgId, ref, "image");
  /** Videos have images too: their poster's variants. */
  const loadPictured = (orgId: string, ref: string) => ctx.files.findOfType(orgId, ref, ["image", "video"]);
  const reload = (id: string) => ctx.files.byId(id)!;

  const upload = (request: Request, readFields: (fields: Record<string, string>) => void) => {
    const principal = principalOf(request);
    return ctx.uploadSlots.hold(principal, () => streamingUpload(ctx, principal, formOf(request), { mediaTypes: ["image"], readFields }));
  };

  return new Elysia({ tags: ["Images"] })
    .use(permissions)
    .use(knownFieldsOnly)
    .get(
      "/files/:file_id/variant/:variant_type",
      async ({ principal, params, request, redirect }) => {
        const row = loadPictured(principal.orgId, params.file_id);
        const urls = new FileUrls(ctx, publicOrigin(ctx.config, request));
        if (params.variant_type === "original") return redirect((await urls.original(row, VIEW_URL_SECONDS))!, 302);
        const url = (await urls.variants(row))[params.variant_type];
        if (!url) throw new ApiError("VARIANT_NOT_READY", `variant ${params.variant_type} of image ${row.id} does not exist yet (variant_status: ${row.variant_status})`);
        return redirect(url, 302);
      },
      {
        permission: "view",
        params: t.Object({
          file_id: t.String(),
          variant_type: Enum(VARIANT_CHOICES, { error: `variant_type: must be one of ${VARIANT_CHOICES.join(", ")}` }),
        }),
        response: { 302: t.Void(), ...errorResponses([400, 404, 409]) },
        detail: { summary: "Redirect (302) to a signed URL of an image variant, valid for one hour" },
      },
    )
    .post(
      "/files/:file_id/trigger-variants",
      ({ principal, params }) => {
        const row = loadImage(principal.orgId, params.file_id);
        const running = row.processing_job_id ? getJobRow(db, row.processing_job_id) : null;
        // The upload's own processing job renders variants first; while it runs, that is the task.
        if (running && (running.status === "pending" || running.status === "processing") && row.variant_status !== "completed" && row.variant_status !== "failed") {
          return { success: true, message: "variant generation is already running", task_id: running.id, current_status: row.variant_status ?? "pending", image_id: row.id, skipped_duplicate: true };
        }
        const job = ctx.jobs.enqueue({ queue: "image.variants", orgId: row.org_id, payload: { fileId: row.id }, dedupeKey: `variants:${row.id}`, maxAttempts: 3 });
        return job.deduplicated
          ? { success: true, message: "variant generation is already queued or running", task_id: job.id, current_status: row.variant_status ?? "pending", image_id: row.id, skipped_duplicate: true }
          : { success: true, message: "variant generation queued", task_id: job.id, current_status: "queued", image_id: row.id };
      },
      {
        permission: "edit",
        params: FileParams,
        response: {
          200: t.Object({
            success: t.Boolean(),
            message: t.String(),
            task_id: t.String({ format: "uuid", description: "Job id; poll GET /job/{task_id}" }),
            current_status: t.String(),
            image_id: t.String({ format: "uuid" }),
            skipped_duplicate: t.Optional(t.Boolean()),
          }),
          ...errorResponses([400, 404, 409]),
        },
        detail: { summary: "Re-render an image's variants (skipped_duplicate when already running)" },
      },
    )
    .patch(
      "/files/:file_id/extractions/:domain_name/review",
      ({ principal, params, body }) => {
        const row = loadImage(principal.orgId, params.file_id);
        const domain = parseReviewDomain(params.domain_name);
        const corrections = reviewCorrections(body);
        const result = reviewExtraction(db, clock, row.id, domain, corrections);
        return { image_id: row.id, domain_name: domain, corrections: result.corrections, updated_at: result.updated_at };
      },
      {
        permission: "edit",
        params: t.Object({ file_id: t.String(), domain_name: t.String() }),
        knownFieldsOnly: ReviewBody,
        body: ReviewBody,
        response: {
          200: t.Object({
            image_id: t.String({ format: "uuid" }),
            domain_name: t.String(),
            corrections: t.Object({ item_reviews: t.Record(t.String(), t.String()), field_edits: t.Record(t.String(), t.Unknown()) }),
            updated_at: Timestamp,
          }),
          ...errorResponses([400, 404, 409]),
        },
        detail: { summary: "Review an extraction: confirm/reject items and edit fields; layered over the original, merged additively" },
      },
    )
    .post(
      "/images/analyze",
      async ({ request }) => {
        const started = performance.now();
        let timeout = ANALYZE_TIMEOUT_SECONDS.fallback;
        const stored = await upload(request, (fields) => (timeout = parseAnalyzeTimeout(fields)));
        const row = reload(stored.fileId);
        if (stored.skipped) return analyzeView(ctx, row, "skipped", started);
        const job = row.processing_job_id ? await waitForJob(db, row.processing_job_id, timeout * 1000, request.signal) : null;
        const now = reload(row.id);
        const status = !job || job.status === "pending" || job.status === "processing" ? "processing" : job.status === "completed" ? "completed" : "failed";
        return analyzeView(ctx, now, status, started);
      },
      {
        permission: "edit",
        parse: "none",
        response: { 200: AnalyzeResult, ...errorResponses([400, 404, 413, 415]) },
        detail: {
          summary: "Upload an image and wait (up to timeout seconds, 5-120, default 60) for its description, tags and visible text",
          requestBody: multipartBody({ file: { type: "string", format: "binary" } }, ["file"], { timeout: { type: "integer", minimum: 5, maximum: 120, default: 60 } }) as never,
        },
      },
    )
    .post(
      "/images/analyze/async",
      async ({ request, set }) => {
        const stored = await upload(request, () => {});
        const row = reload(stored.fileId);
        set.status = 202;
        return {
          job_id: row.processing_job_id!,
          image_id: row.id,
          status: stored.skipped ? "skipped" : "pending",
          poll_url: `/api/v2/job/${row.processing_job_id}`,
        };
      },
      {
        permission: "edit",
        parse: "none",
        response: {
          202: t.Object({
            job_id: t.String({ format: "uuid" }),
            image_id: t.String({ format: "uuid" }),
            status: Enum(["pending", "skipped"], { description: "skipped: duplicate; job_id is the existing image's processing job" }),
            poll_url: t.String(),
          }),
          ...errorResponses([400, 404, 413, 415]),
        },
        detail: {
          summary: "Upload an image for analysis; poll GET /job/{job_id} (results[0] has description, tags, visible_text)",
          requestBody: multipartBody({ file: { type: "string", format: "binary" } }, ["file"]) as never,
        },
      },
    );
}
