/**
 * HTTP binding of the document operations: text, chunks, digitization (document, page, status),
 * processing status (any media type), hybrid chunk search, and analyze (sync and async).
 */
import { Elysia, t } from "elysia";
import { FileParams } from "../files/file-shapes.ts";
import type { DocumentDeps } from "./deps.ts";
import { permissions } from "../http/permissions.ts";
import { principalOf, publicOrigin } from "../http/request-context.ts";
import { Enum, Nullable, NullableTimestamp, Timestamp, Uuid, UuidText, errorResponses } from "../http/shapes.ts";
import { ANALYZE_TIMEOUT_SECONDS, parseAnalyzeTimeout } from "../ingest/options.ts";
import { multipartBody } from "../ingest/model.ts";
import { streamingUpload } from "../ingest/streaming-upload.ts";
import { formOf } from "../ingest/multipart-form.ts";
import type { FileRow } from "../files/file.ts";
import { ApiError, badRequest } from "../errors.ts";
import { chunkView, digitization, digitizationPage, digitizationStatusView, documentChunks, processingStatus } from "./document-views.ts";
import { documentFactsOf } from "./document-facts.ts";
import { SEARCH_MODES, searchChunks, searchDepsOf } from "./search.ts";
import { AnalyzeResult, Chunk, Page, PageNumber, Status } from "./model.ts";
import { PAGE_IMAGE_CONTENT_TYPE, PAGE_IMAGE_WIDTHS, pageImage } from "./page-images.ts";
import { PAGE_IMAGE_DEFAULT_LONG_SIDE } from "./render-page.ts";
import { FileUrls, VIEW_URL_SECONDS } from "../files/file-urls.ts";

const ANALYZE_MAX_BYTES = 10 * 1024 ** 2;
const SEARCH_LIMIT = { min: 1, max: 100, fallback: 10 };

async function analyzeView(ctx: DocumentDeps, file: FileRow, status: "completed" | "processing" | "failed" | "skipped", startedMs: number) {
  const finished = status === "completed" || status === "skipped";
  const facts = await documentFactsOf(ctx.sql, file.id);
  return {
    document_id: file.id,
    status,
    filename: file.filename,
    size_bytes: file.size_bytes,
    processing_time_ms: Math.round((performance.now() - startedMs) * 10) / 10,
    document_type: file.document_type,
    text_extraction_status: facts.textExtractionStatus,
    page_count: facts.pageCount,
    chunk_count: facts.chunkCount,
    extracted_text: finished ? await ctx.files.extractedText(file.id) : null,
    job_id: status === "processing" || status === "failed" ? file.processing_job_id : null,
    poll_url: status === "processing" && file.processing_job_id ? `/api/v2/job/${file.processing_job_id}` : null,
    error_message: status === "failed" ? file.processing_error : null,
    skipped_existing_document_id: status === "skipped" ? file.id : null,
  };
}

export function documentRoutes(ctx: DocumentDeps) {
  // A link's readable article is stored as a one-page document (links/reading-view.ts): its text,
  // chunks and digitization are read through the same endpoints.
  const loadDocument = async (orgId: string, ref: string) => {
    const row = await ctx.files.find(orgId, ref);
    return row.media_type === "link" ? row : await ctx.files.findOfType(orgId, row.id, "document");
  };
  const reload = async (id: string) => (await ctx.files.byId(id))!;
  const upload = (request: Request, readFields: (fields: Record<string, string>) => void) => {
    const principal = principalOf(request);
    return ctx.uploadSlots.hold(principal, () => streamingUpload(ctx, principal, formOf(request), { mediaTypes: ["document"], maxBytes: ANALYZE_MAX_BYTES, readFields }));
  };
  const analyzeBody = multipartBody({ file: { type: "string", format: "binary", description: "PDF, DOCX, TXT or MD, at most 10 MB" } }, ["file"], {
    timeout: { type: "integer", minimum: 5, maximum: 120, default: 60 },
  });

  return new Elysia({ tags: ["Documents"] })
    .use(permissions)
    .get(
      "/files/:file_id/text",
      async ({ principal, params }) => {
        const file = await loadDocument(principal.orgId, params.file_id);
        const facts = await documentFactsOf(ctx.sql, file.id);
        return { document_id: file.id, filename: file.filename, text: await ctx.files.extractedText(file.id) ?? "", page_count: facts.pageCount, metadata: { language: facts.language } };
      },
      {
        permission: "view",
        params: FileParams,
        response: {
          200: t.Object({
            document_id: t.String({ format: "uuid" }),
            filename: t.String(),
            text: t.String(),
            page_count: Nullable(t.Integer()),
            metadata: t.Object({ language: Nullable(t.String({ description: "ISO 639-1, from function-word counts; null when unclear" })) }),
          }),
          ...errorResponses([400, 404, 409]),
        },
        detail: { summary: "A document's extracted text" },
      },
    )
    .get("/files/:file_id/chunks", async ({ principal, params, query }) => documentChunks(ctx, await loadDocument(principal.orgId, params.file_id), query.include_embeddings === true), {
      permission: "view",
      params: FileParams,
      query: t.Object({ include_embeddings: t.Optional(t.Boolean({ error: "include_embeddings: must be true or false" })) }),
      response: {
        200: t.Object({
          document_id: t.String({ format: "uuid" }),
          chunks: t.Array(Chunk),
          total_chunks: t.Integer(),
          status_counts: t.Optional(t.Object({ completed: t.Integer(), pending: t.Integer(), failed: t.Integer() })),
        }),
        ...errorResponses([400, 404, 409]),
      },
      detail: { summary: "A document's chunks (with embeddings and status_counts when include_embeddings=true)" },
    })
    .get("/files/:file_id/digitization", async ({ principal, params }) => digitization(ctx.sql, await loadDocument(principal.orgId, params.file_id)), {
      permission: "view",
      params: FileParams,
      response: {
        200: t.Object(
          { document_id: t.String({ format: "uuid" }), status: Status, total_pages: t.Integer(), completed_pages: t.Integer(), failed_pages: t.Integer(), pages: t.Array(Page) },
          { title: "Digitization" },
        ),
        ...errorResponses([400, 404, 409]),
      },
      detail: { summary: "A document's digitization: every page with its typed elements and boxes" },
    })
    .get(
      "/files/:file_id/digitization/pages/:page_number",
      async ({ principal, params }) => digitizationPage(ctx.sql, await loadDocument(principal.orgId, params.file_id), params.page_number),
      {
        permission: "view",
        params: t.Object({ file_id: t.String(), page_number: PageNumber }),
        response: { 200: Page, ...errorResponses([400, 404, 409]) },
        detail: { summary: "One page's digitization (1-indexed); 404 when that page has none" },
      },
    )
    .get(
      "/files/:file_id/digitization/pages/:page_number/image",
      async ({ principal, params, query, request, redirect, set }) => {
        const file = await loadDocument(principal.orgId, params.file_id);
        const image = await pageImage(ctx, file, params.page_number, query.width ?? null);
        const url = await new FileUrls(ctx, publicOrigin(ctx.config, request)).blob(image.blobKey, PAGE_IMAGE_CONTENT_TYPE);
        // The picture never changes; the signed URL lasts VIEW_URL_SECONDS, so a browser may keep the answer for part of that.
        set.headers["cache-control"] = `private, max-age=${Math.floor(VIEW_URL_SECONDS / 4)}`;
        // A page that authenticates with a header (the dashboard signed in with a key) cannot follow a redirect into an <img>: it asks for the URL.
        if (query.redirect === false) return { url, width: image.width, height: image.height, content_type: PAGE_IMAGE_CONTENT_TYPE, expires_in_seconds: VIEW_URL_SECONDS };
        // Elysia types a handler's answers as one shape; the redirect is the 302 declared below.
        return redirect(url, 302) as never;
      },
      {
        permission: "view",
        params: t.Object({ file_id: t.String(), page_number: PageNumber }),
        query: t.Object({
          width: t.Optional(
            t.Integer({
              minimum: PAGE_IMAGE_WIDTHS.min,
              maximum: PAGE_IMAGE_WIDTHS.max,
              error: `width: must be an integer from ${PAGE_IMAGE_WIDTHS.min} to ${PAGE_IMAGE_WIDTHS.max}`,
              description: `Width of the picture in pixels; default: the page's long side ${PAGE_IMAGE_DEFAULT_LONG_SIDE} px`,
            }),
          ),
          redirect: t.Optional(t.Boolean({ error: "redirect: must be true or false", description: "false: answer 200 with the signed URL and the picture's size instead of redirecting" })),
        }),
        response: {
          200: t.Object(
            {
              url: t.String({ description: "Signed URL of the WebP picture" }),
              width: t.Integer(),
              height: t.Integer(),
              content_type: t.String(),
              expires_in_seconds: t.Integer(),
            },
            { title: "PageImage" },
          ),
          302: t.Void(),
          ...errorResponses([400, 404, 409, 422]),
},
        detail: {
          summary: "Extension: redirect (302) to a signed URL of a PDF page drawn as WebP, valid for one hour",
          description:
            "The page as pdf.js draws it, on white, encoded as WebP: the digitization's element boxes (normalized to the page) line up with it. " +
            "Drawn by the document reader's child process under its memory and time limits the first time a page and width are asked for, then kept as a blob " +
            "(removed when the file is purged). 404 PAGE_NOT_FOUND past the last page (or below 1); 404 NO_PAGE_IMAGES for DOCX, TXT and MD (their pages are logical) and for a PDF not read yet; " +
            "422 PAGE_RENDER_FAILED when the page cannot be drawn within the reader's limits (the detail says which); 400 WRONG_MEDIA_TYPE for a file that is not a document.",
        },
      },
    )
    .get("/files/:file_id/digitization/status", async ({ principal, params }) => digitizationStatusView(ctx.sql, await loadDocument(principal.orgId, params.file_id)), {
      permission: "view",
      params: FileParams,
      response: {
        200: t.Object({ document_id: t.String({ format: "uuid" }), status: Status, total_pages: t.Integer(), page_statuses: t.Record(t.String(), t.String()) }),
        ...errorResponses([400, 404, 409]),
      },
      detail: { summary: "Digitization status per page" },
    })
    .get(
      "/files/:file_id/processing-status",
      async ({ principal, params }) => {
        const file = await ctx.files.find(principal.orgId, params.file_id);
        if (file.media_type === "link") throw new ApiError("WRONG_MEDIA_TYPE", `file ${file.id} is a link; processing-status is for images, documents and videos`);
        return processingStatus(ctx.sql, file);
      },
      {
        permission: "view",
        params: FileParams,
        response: {
          200: t.Object({
            document_id: t.String({ format: "uuid" }),
            filename: t.String(),
            media_type: t.String(),
            document_type: Nullable(t.String()),
            processing_status: t.String(),
            text_extraction_status: Nullable(t.String()),
            digitization_status: Nullable(t.String()),
            embedding_status: Nullable(t.String()),
            variant_status: Nullable(t.String()),
            description_status: Nullable(t.String()),
            page_count: Nullable(t.Integer()),
            chunk_count: t.Integer(),
            created_at: Timestamp,
            processing_started_at: NullableTimestamp,
            completed_at: NullableTimestamp,
            error_message: Nullable(t.String()),
            stages: t.Array(
              t.Object({
                stage: t.String(),
                status: t.String(),
                duration_ms: t.Number(),
                error: Nullable(t.String()),
                finished_at: Timestamp,
              }),
              { description: "Each pipeline stage as last run, in the order they finished: its outcome, time taken (ms) and error" },
            ),
          }),
          ...errorResponses([400, 404, 409]),
        },
        detail: { summary: "Processing status of an image, document or video" },
      },
    )
    .post(
      "/files/search",
      async ({ principal, body }) => {
        const started = performance.now();
        const query = body.query.trim();
        if (!query) throw badRequest("query: must contain at least one non-space character");
        const documentIds = body.document_ids ? [...new Set(body.document_ids.map((id) => id.toLowerCase()))] : null;
        const outcome = await searchChunks(searchDepsOf(ctx), {
          orgId: principal.orgId,
          query,
          limit: body.limit ?? SEARCH_LIMIT.fallback,
          offset: body.offset ?? 0,
          similarityThreshold: body.similarity_threshold ?? 0,
          documentIds,
          perDocument: body.per_document,
          mode: body.mode,
        });
        const results = outcome.hits.map((h) => ({
          ...chunkView(h.chunk, h.similarity_score),
          match: { keyword_score: h.keyword_score, keyword_rank: h.keyword_rank, vector_rank: h.vector_rank, vector_similarity: h.vector_similarity },
        }));
        return { query: body.query, results, total_count: outcome.total, search_time_ms: Math.round((performance.now() - started) * 100) / 100, retrieval: outcome.signals };
      },
      {
        permission: "view",
        body: t.Object({
          query: t.String({ minLength: 1, maxLength: 1000, error: "query: must be a string of 1-1000 characters" }),
          limit: t.Optional(t.Integer({ minimum: SEARCH_LIMIT.min, maximum: SEARCH_LIMIT.max, error: "limit: must be an integer from 1 to 100" })),
          similarity_threshold: t.Optional(t.Number({ minimum: 0, maximum: 1, error: "similarity_threshold: must be a number from 0 to 1" })),
          document_ids: t.Optional(t.Array(UuidText(), { maxItems: 1000, error: "document_ids: must be an array of at most 1000 UUIDs" })),
          offset: t.Optional(t.Integer({ minimum: 0, maximum: 3900, error: "offset: must be an integer from 0 to 3900", description: "Extension: results skipped before this page" })),
          mode: t.Optional(Enum([...SEARCH_MODES], { error: "mode: must be hybrid, keyword or vector", description: "Extension: which signals rank (default hybrid)" })),
          per_document: t.Optional(
            t.Integer({ minimum: 1, maximum: 100, error: "per_document: must be an integer from 1 to 100", description: "Extension: most chunks per document (default 1; without limit when document_ids is given)" }),
          ),
        }),
        response: {
          200: t.Object({
            query: t.String(),
            results: t.Array(Chunk),
            total_count: t.Integer(),
            search_time_ms: t.Number(),
            retrieval: t.Object(
              {
                keyword: t.Boolean(),
                vector: t.Boolean(),
                vector_model: Nullable(t.String()),
                vector_unavailable_reason: Nullable(t.String()),
                configured_model_unavailable_reason: Nullable(t.String({ description: "Why the configured text model is not answering (the built-in model stands in)" })),
                weights: t.Object({ keyword: t.Number(), vector: t.Number() }, { description: "Weights of the fused similarity_score" }),
                expansion: Nullable(
                  t.Object(
                    {
                      feedback_documents: t.Integer(),
                      terms: t.Array(t.Object({ term: t.String(), weight: t.Number(), original: t.Boolean() })),
                    },
                    { description: "Hybrid mode: the keyword query as expanded from the first ranking's best documents (pseudo-relevance feedback); each term's share of the query. null when not expanded" },
                  ),
                ),
              },
              { description: "The signals this search used and how they were fused" },
            ),
          }),
          ...errorResponses([400]),
        },
        detail: {
          summary: "Hybrid search over document chunks (keyword BM25 with stemming + vector cosine similarity, fused)",
          description:
            "similarity_score (0-1) = weights.keyword x BM25 / the query's best BM25 + weights.vector x cosine similarity (clamped at 0); match carries each signal's own score. " +
            "In hybrid mode the keyword query is first expanded with words of the best documents of a first ranking (retrieval.expansion lists the terms); keyword_score is then the BM25 of the expanded query. " +
            "similarity_threshold (0-1, default 0) applies to the cosine similarity (to the fused score when vectors are unavailable). One result per document unless per_document or document_ids says otherwise; " +
            "total_count counts every result of the ranking (up to 4096 candidates per signal); offset pages through them. limit 1-100, default 10.",
        },
      },
    )
    .post(
      "/files/analyze",
      async ({ request }) => {
        const started = performance.now();
        let timeout = ANALYZE_TIMEOUT_SECONDS.fallback;
        const stored = await upload(request, (fields) => (timeout = parseAnalyzeTimeout(fields)));
        const file = await reload(stored.fileId);
        if (stored.skipped) return analyzeView(ctx, file, "skipped", started);
        const job = file.processing_job_id ? await ctx.jobs.store.waitFor(file.processing_job_id, timeout * 1000, request.signal) : null;
        const now = await reload(file.id);
        const status = !job || job.status === "pending" || job.status === "processing" ? "processing" : (await documentFactsOf(ctx.sql, now.id)).textExtractionStatus === "completed" ? "completed" : "failed";
        return analyzeView(ctx, now, status, started);
      },
      {
        permission: "edit",
        parse: "none",
        response: { 200: AnalyzeResult, ...errorResponses([400, 404, 413, 415]) },
        detail: { summary: "Upload a document (PDF, DOCX, TXT, MD; 10 MB) and wait up to timeout seconds for its text", requestBody: analyzeBody as never },
      },
    )
    .post(
      "/files/analyze/async",
      async ({ request, set }) => {
        const stored = await upload(request, (fields) => parseAnalyzeTimeout(fields));
        const file = await reload(stored.fileId);
        set.status = 202;
        return { job_id: file.processing_job_id!, document_id: file.id, status: stored.skipped ? "skipped" : "pending", poll_url: `/api/v2/job/${file.processing_job_id}` };
      },
      {
        permission: "edit",
        parse: "none",
        response: {
          202: t.Object({ job_id: Uuid(), document_id: t.String({ format: "uuid" }), status: Enum(["pending", "skipped"]), poll_url: t.String() }),
          ...errorResponses([400, 404, 413, 415]),
        },
        detail: { summary: "Upload a document for analysis; poll GET /job/{job_id}", requestBody: analyzeBody as never },
      },
    );
}
