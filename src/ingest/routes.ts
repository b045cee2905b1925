/**
 * HTTP binding of ingest: streaming and batch uploads, quota and duplicate checks, upload
 * sessions, per-file upload status, and the WebSocket endpoint for `batch.<id>` channels.
 */
import { Elysia, t } from "elysia";
import type { IngestDeps } from "./deps.ts";
import { permissions } from "../http/permissions.ts";
import { principalOf } from "../http/request-context.ts";
import { Nullable, Page, page, pageQuery, queryInt, Timestamp, Uuid, Enum, errorResponses } from "../http/shapes.ts";
import type { ProgressBoard } from "../processing/progress-board.ts";
import { TIER_LIMITS } from "../tenancy/tiers.ts";
import { usageThisMonth } from "../usage/usage.ts";
import { createBatch } from "./batch.ts";
import { batchResponse, sessionCompletedEvent } from "./batch-views.ts";
import {
  cancelSession,
  DEFAULT_STUCK_MINUTES,
  MINUTES_PER_YEAR,
  fileUploadStatus,
  getSessionRow,
  listSessions,
  SESSION_STATUSES,
  sessionResults,
  sessionState,
  sessionSummary,
  stuckFiles,
  websocketChannel,
} from "./sessions.ts";
import { sessionListItem, sessionResultsView, sessionSummaryView, sessionView, stuckFilesView, unifiedStatusView } from "./session-views.ts";
import { streamingUpload, type StoredUpload } from "./streaming-upload.ts";
import { formOf } from "./multipart-form.ts";
import { multipartBody, SessionSchema, SessionSummaryItem, sessionParams, SHA256, UnifiedStatus, uploadShapes } from "./model.ts";

/** The file's live progress as the API shows it (snake case), or null. */
function liveProgressView(board: ProgressBoard, fileId: string) {
  const p = board.current(fileId);
  return p ? { stage: p.stage, stage_number: p.stageNumber, stage_count: p.stageCount, percent: p.percent, unit: p.unit, done: p.done, total: p.total } : null;
}

/** POST /files/upload's body (spec "Upload file"). */
function uploadResponse(stored: StoredUpload) {
  const isDocument = stored.type.mediaType === "document";
  return {
    image_id: stored.fileId,
    upload_method: "STREAMING" as const,
    status: stored.status,
    processing_time_ms: Math.round(stored.elapsedMs * 10) / 10,
    upload_completed: true,
    thumbnail_generation_started: stored.thumbnailsStarted,
    analysis_started: stored.analysisStarted,
    skipped: stored.skipped,
    skipped_existing_image_id: stored.skippedExistingId,
    storage_target: stored.storageTarget,
    media_type: stored.type.mediaType,
    document_type: stored.type.documentType,
    text_extraction_status: isDocument ? (stored.skipped ? null : ("pending" as const)) : null,
  };
}

export function ingestRoutes(ctx: IngestDeps) {
  const { clock } = ctx;
  const { UploadResponse, BatchResponse } = uploadShapes(ctx.kinds.uploaded().map((content) => content.type));
  return new Elysia({ tags: ["Uploads"] })
    .use(permissions)
    .post(
      "/files/upload",
      ({ principal, request, set }) =>
        ctx.uploadSlots.hold(principal, async () => {
          const stored = await streamingUpload(ctx, principal, formOf(request));
          set.status = 201;
          return uploadResponse(stored);
        }),
      {
        permission: "edit",
        parse: "none",
        response: { 201: UploadResponse, ...errorResponses([400, 404, 413, 415]) },
        detail: {
          summary: "Upload one file (streamed; up to 100 MB, documents 50 MB)",
          description: "The type is detected from the content; 415 UNSUPPORTED_FILE_TYPE for executables, scripts, archives, active HTML/SVG and unknown content.",
          requestBody: multipartBody({ file: { type: "string", format: "binary" } }, ["file"]) as never,
        },
      },
    )
    .post(
      "/files/upload/batch",
      ({ principal, request, set }) =>
        ctx.uploadSlots.hold(principal, async () => {
          const batch = await createBatch(ctx, principal, formOf(request));
          set.status = 201;
          return batchResponse(batch);
        }),
      {
        permission: "edit",
        parse: "none",
        response: { 201: BatchResponse, ...errorResponses([400, 404, 413]) },
        detail: {
          summary: "Upload a batch of files as one session",
          description:
            "Five accepted files or fewer are stored before the response (immediate_results); larger batches are stored in the background: poll status_url or subscribe to websocket_channel on GET /api/v2/ws.",
          requestBody: multipartBody({ files: { type: "array", items: { type: "string", format: "binary" } } }, ["files"]) as never,
        },
      },
    )
    .get(
      "/files/quota-check",
      async ({ principal, query }) => {
        const limits = TIER_LIMITS[principal.tier];
        const usage = await usageThisMonth(ctx.sql, principal.orgId, "ai_descriptions", clock.now());
        const limit = limits.aiDescriptionsPerMonth;
        const available = limit === null ? -1 : Math.max(0, limit - usage);
        const canProceed = limit === null || query.file_count <= available;
        return {
          can_proceed: canProceed,
          requested: query.file_count,
          available,
          monthly_limit: limit ?? -1,
          current_usage: usage,
          prepaid_credits: 0,
          max_batch_size: limits.batchFiles ?? -1,
          max_concurrent_uploads: limits.concurrentUploads ?? -1,
          message: canProceed
            ? limit === null
              ? "unlimited AI descriptions on this tier"
              : `${available} of ${limit} AI descriptions left this month`
            : `requested ${query.file_count} files but only ${available} of the ${limit} monthly AI descriptions are left (short by ${query.file_count - available})`,
        };
      },
      {
        permission: "view",
        query: t.Object({ file_count: t.Integer({ minimum: 0, maximum: 1_000_000, error: "file_count must be an integer from 0 to 1000000" }) }),
        response: {
          200: t.Object({
            can_proceed: t.Boolean(),
            requested: t.Integer(),
            available: t.Integer({ description: "-1 means unlimited" }),
            monthly_limit: t.Integer({ description: "-1 means unlimited" }),
            current_usage: t.Integer(),
            prepaid_credits: t.Integer(),
            max_batch_size: t.Integer(),
            max_concurrent_uploads: t.Integer(),
            message: t.String(),
          }),
          ...errorResponses([400]),
        },
        detail: { summary: "Check the monthly AI-description quota before uploading file_count files" },
      },
    )
    .post(
      "/files/check-duplicates",
      async ({ principal, body }) => {
        const wanted = [...new Set(body.hashes.map((h) => h.toLowerCase()))];
        // The oldest live file of each content (the one skip_duplicates keeps).
        const rows: { sha256: string; id: string; filename: string }[] = [];
        for (const row of await ctx.sql.all<{ sha256: string; id: string; filename: string }>(
          `SELECT sha256, id, filename FROM files WHERE org_id = ? AND deleted_at IS NULL AND sha256 IN (${ctx.sql.dialect.jsonValues}) ORDER BY sha256, created_at, id`,
          [principal.orgId, JSON.stringify(wanted)],
        )) {
          if (rows.at(-1)?.sha256 !== row.sha256) rows.push(row);
        }
        const found = new Map(rows.map((r) => [r.sha256, r]));
        return {
          duplicates: wanted.filter((h) => found.has(h)),
          unique: wanted.filter((h) => !found.has(h)),
          matches: rows.map((r) => ({ hash: r.sha256, file_id: r.id, filename: r.filename })),
        };
      },
      {
        permission: "view",
        body: t.Object({ hashes: t.Array(SHA256, { minItems: 1, maxItems: 250, error: "hashes: 1-250 SHA-256 hex strings" }) }),
        response: {
          200: t.Object({
            duplicates: t.Array(t.String()),
            unique: t.Array(t.String()),
            matches: t.Array(t.Object({ hash: t.String(), file_id: t.String({ format: "uuid" }), filename: t.String() }), {
              description: "Extension: the existing file for each duplicate",
            }),
          }),
          ...errorResponses([400]),
        },
        detail: { summary: "Which content hashes already exist in the organization" },
      },
    )
    .get(
      "/files/sessions",
      async ({ principal, query }) => {
        const { items, total } = await listSessions(ctx.sql, principal.orgId, { status: query.status, uploadMethod: query.upload_method }, query.limit, query.offset);
        return page(items.map(sessionListItem), total, query.limit, query.offset);
      },
      {
        permission: "view",
        query: t.Object({
          status: t.Optional(Enum(SESSION_STATUSES, { error: `status must be one of ${SESSION_STATUSES.join(", ")}` })),
          upload_method: t.Optional(Enum(["streaming", "presigned"], { error: "upload_method must be streaming or presigned" })),
          ...pageQuery(100, 20),
        }),
        response: { 200: Page(SessionSummaryItem), ...errorResponses([400]) },
        detail: { summary: "List upload sessions, newest first" },
      },
    )
    .get(
      "/files/sessions/stuck",
      async ({ principal, query }) => stuckFilesView(await stuckFiles(ctx.sql, clock, principal.orgId, query.stuck_minutes, query.limit)),
      {
        permission: "view",
        query: t.Object({
          stuck_minutes: queryInt("stuck_minutes", 1, MINUTES_PER_YEAR, DEFAULT_STUCK_MINUTES),
          limit: queryInt("limit", 1, 500, 100),
        }),
        response: { 200: t.Object({ stuck_count: t.Integer(), images: t.Array(UnifiedStatus) }), ...errorResponses([400]) },
        detail: { summary: "Files whose processing has not moved for stuck_minutes" },
      },
    )
    .get("/files/sessions/:session_id/status", async ({ principal, params }) => sessionView(await sessionState(ctx.sql, await getSessionRow(ctx.sql, principal.orgId, params.session_id))), {
      permission: "view",
      params: sessionParams,
      response: { 200: SessionSchema, ...errorResponses([400, 404]) },
      detail: { summary: "An upload session with live counts" },
    })
    .get(
      "/files/sessions/:session_id/results",
      async ({ principal, params, query }) => sessionResultsView(await sessionResults(ctx.sql, principal.orgId, params.session_id, query.include_failed ?? true, query.limit, query.offset)),
      {
        permission: "view",
        params: sessionParams,
        query: t.Object({ include_failed: t.Optional(t.Boolean({ error: "include_failed must be true or false" })), ...pageQuery(500, 100) }),
        response: {
          200: t.Object({
            session_id: t.String({ format: "uuid" }),
            results: t.Array(
              t.Object({
                image_id: Nullable(t.String()),
                filename: t.String(),
                status: t.String(),
                description: Nullable(t.String()),
                visible_text: Nullable(t.String()),
                tags: t.Array(t.String()),
                processing_time_ms: Nullable(t.Number()),
                error_message: Nullable(t.String()),
                thumbnail_url: Nullable(t.String()),
                created_at: Timestamp,
              }),
            ),
            total_count: t.Integer(),
            offset: t.Integer(),
            limit: t.Integer(),
            has_more: t.Boolean(),
            summary: t.Object({ total_files: t.Integer(), completed: t.Integer(), failed: t.Integer(), skipped: t.Integer() }),
          }),
          ...errorResponses([400, 404]),
        },
        detail: { summary: "Per-file results of a session" },
      },
    )
    .get("/files/sessions/:session_id/summary", async ({ principal, params }) => sessionSummaryView(await sessionSummary(ctx.sql, clock, principal.orgId, params.session_id)), {
      permission: "view",
      params: sessionParams,
      response: {
        200: t.Object({
          batch_id: t.String({ format: "uuid" }),
          overall_status: t.String(),
          completion_percentage: t.Number(),
          counts: t.Record(t.String(), t.Integer()),
          description_counts: t.Record(t.String(), t.Integer()),
          error_summary: t.Object({ count: t.Integer(), messages: t.Array(t.String()) }),
          created_at: Timestamp,
          last_activity_at: Timestamp,
        }),
        ...errorResponses([400, 404]),
      },
      detail: { summary: "Aggregated status of a session's files" },
    })
    .post(
      "/files/sessions/:session_id/cancel",
      async ({ principal, params }) => {
        const row = await cancelSession(ctx.sql, clock, principal.orgId, params.session_id);
        ctx.events.publish(websocketChannel(row.id), "session_completed", sessionCompletedEvent(row));
        return sessionView(await sessionState(ctx.sql, row));
      },
      {
        permission: "edit",
        params: sessionParams,
        response: { 200: SessionSchema, ...errorResponses([400, 404]) },
        detail: { summary: "Cancel a session (400 once it is completed, cancelled or expired)" },
      },
    )
    .get("/files/uploads-status/:image_id", async ({ principal, params }) => ({ ...unifiedStatusView(await fileUploadStatus(ctx.sql, clock, principal.orgId, params.image_id)), progress: liveProgressView(ctx.progress, params.image_id) }), {
      permission: "view",
      params: t.Object({ image_id: Uuid("image_id") }),
      response: { 200: UnifiedStatus, ...errorResponses([400, 404]) },
      detail: { summary: "Unified upload and processing status of one file" },
    })
    .ws("/ws", {
      detail: { summary: "Real-time channels (WebSocket)" },
      open(ws) {
        ws.send(JSON.stringify({ type: "welcome", detail: 'send {"action":"subscribe","channel":"batch.<session_id>"}' }));
      },
      async message(ws, raw) {
        const principal = principalOf(ws.data.request);
        const msg = (typeof raw === "string" ? safeJson(raw) : raw) as { action?: string; channel?: string } | null;
        const channel = msg?.channel ?? "";
        const match = /^batch\.([0-9a-f-]{36})$/.exec(channel);
        if (!msg || (msg.action !== "subscribe" && msg.action !== "unsubscribe") || !match) {
          ws.send(JSON.stringify({ type: "error", detail: 'expected {"action":"subscribe"|"unsubscribe","channel":"batch.<session_id>"}' }));
          return;
        }
        if (msg.action === "unsubscribe") {
          ws.unsubscribe(channel);
          ws.send(JSON.stringify({ type: "unsubscribed", channel }));
          return;
        }
        let row;
        try {
          row = await getSessionRow(ctx.sql, principal.orgId, match[1]!);
        } catch {
          ws.send(JSON.stringify({ type: "error", channel, detail: `upload session ${match[1]} not found` }));
          return;
        }
        if (ws.readyState !== WebSocket.OPEN) return;
        // Subscribed before the state is read, so a client that subscribes late misses nothing (an
        // event of this moment may come just before the state that already counts it).
        ws.subscribe(channel);
        ws.send(JSON.stringify({ type: "subscribed", channel, session: sessionView(await sessionState(ctx.sql, row)) }));
      },
    });
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return null;
  }
}
