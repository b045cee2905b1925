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
import { errorResponses } from "../http/shapes.ts";
import { ANALYZE_TIMEOUT_SECONDS, parseAnalyzeTimeout } from "../ingest/options.ts";
import { multipartBody } from "../ingest/model.ts";
import { streamingUpload } from "../ingest/streaming-upload.ts";
import { formOf } from "../ingest/multipart-form.ts";
import { FileUrls, VIEW_URL_SECONDS } from "../files/file-urls.ts";
import { FileParams } from "../files/file-shapes.ts";
import { analyzeView } from "./image-views.ts";
import { imageFactsOf } from "./image-facts.ts";
import { AnalyzeAccepted, AnalyzeResult, ReviewParams, ReviewResult, VariantParams, VariantsTriggered } from "./model.ts";

export function imageRoutes(ctx: ImageDeps) {
  const { clock } = ctx;
  const loadImage = (orgId: string, ref: string) => ctx.files.findOfType(orgId, ref, "image");
  /** Videos have images too: their poster's variants. */
  const loadPictured = (orgId: string, ref: string) => ctx.files.findOfType(orgId, ref, ["image", "video"]);
  const reload = async (id: string) => (await ctx.files.byId(id))!;

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
        const row = await loadPictured(principal.orgId, params.file_id);
        const urls = new FileUrls(ctx, publicOrigin(ctx.config, request));
        if (params.variant_type === "original") return redirect((await urls.original(row, VIEW_URL_SECONDS))!, 302);
        const url = (await urls.variants(row))[params.variant_type];
        if (!url) throw new ApiError("VARIANT_NOT_READY", `variant ${params.variant_type} of image ${row.id} does not exist yet (variant_status: ${(await imageFactsOf(ctx.sql, row.id)).variantStatus})`);
        return redirect(url, 302);
      },
      {
        permission: "view",
        params: VariantParams,
        response: { 302: t.Void(), ...errorResponses([400, 404, 409]) },
        detail: { summary: "Redirect (302) to a signed URL of an image variant, valid for one hour" },
      },
    )
    .post(
      "/files/:file_id/trigger-variants",
      async ({ principal, params }) => {
        const row = await loadImage(principal.orgId, params.file_id);
        const running = row.processing_job_id ? await ctx.jobs.store.get(row.processing_job_id) : null;
        const { variantStatus } = await imageFactsOf(ctx.sql, row.id);
        // The upload's own processing job renders variants first; while it runs, that is the task.
        if (running && (running.status === "pending" || running.status === "processing") && variantStatus !== "completed" && variantStatus !== "failed") {
          return { success: true, message: "variant generation is already running", task_id: running.id, current_status: variantStatus ?? "pending", image_id: row.id, skipped_duplicate: true };
        }
        const job = await ctx.jobs.submit({ queue: "image.variants", orgId: row.org_id, payload: { fileId: row.id }, dedupeKey: `variants:${row.id}`, maxAttempts: 3 });
        return job.deduplicated
          ? { success: true, message: "variant generation is already queued or running", task_id: job.id, current_status: variantStatus ?? "pending", image_id: row.id, skipped_duplicate: true }
          : { success: true, message: "variant generation queued", task_id: job.id, current_status: "queued", image_id: row.id };
      },
      {
        permission: "edit",
        params: FileParams,
        response: {
          200: VariantsTriggered,
          ...errorResponses([400, 404, 409]),
        },
        detail: { summary: "Re-render an image's variants (skipped_duplicate when already running)" },
      },
    )
    .patch(
      "/files/:file_id/extractions/:domain_name/review",
      async ({ principal, params, body }) => {
        const row = await loadImage(principal.orgId, params.file_id);
        const domain = parseReviewDomain(params.domain_name);
        const corrections = reviewCorrections(body);
        const result = await reviewExtraction(ctx.sql, clock, row.id, domain, corrections);
        return { image_id: row.id, domain_name: domain, corrections: result.corrections, updated_at: result.updated_at };
      },
      {
        permission: "edit",
        params: ReviewParams,
        knownFieldsOnly: ReviewBody,
        body: ReviewBody,
        response: {
          200: ReviewResult,
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
        const row = await reload(stored.fileId);
        if (stored.skipped) return analyzeView(ctx.sql, row, "skipped", started);
        const job = row.processing_job_id ? await ctx.jobs.store.waitFor(row.processing_job_id, timeout * 1000, request.signal) : null;
        const now = await reload(row.id);
        const status = !job || job.status === "pending" || job.status === "processing" ? "processing" : job.status === "completed" ? "completed" : "failed";
        return analyzeView(ctx.sql, now, status, started);
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
        const row = await reload(stored.fileId);
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
          202: AnalyzeAccepted,
          ...errorResponses([400, 404, 413, 415]),
        },
        detail: {
          summary: "Upload an image for analysis; poll GET /job/{job_id} (results[0] has description, tags, visible_text)",
          requestBody: multipartBody({ file: { type: "string", format: "binary" } }, ["file"]) as never,
        },
      },
    );
}
