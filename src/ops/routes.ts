/**
 * Operational routes outside the versioned API: liveness and readiness probes, Prometheus
 * metrics (behind MEDIABOX_METRICS_TOKEN when set).
 */
import { Elysia } from "elysia";
import type { OpsDeps } from "./deps.ts";
import { VERSION } from "../http/docs.ts";
import { scanThreadsReady } from "../vectors/scan-threads.ts";
import { ApiError } from "../errors.ts";
import { readinessChecks } from "./readiness.ts";
import { installedModels } from "../models/manifest.ts";
import { pendingEmbeddingChunks, textModelFallbackReason } from "../embeddings/text-models.ts";
import { timingSafeEqual } from "node:crypto";
import { eventLoopMonitor } from "../native/event-loop-monitor.ts";
import { Health, NotReady, Ready } from "./model.ts";

export function infrastructureRoutes(ctx: OpsDeps) {
  return new Elysia({ tags: ["Operations"] })
    .get(
      "/metrics",
      async ({ request, set }) => {
        const token = ctx.config.metricsToken;
        if (token !== null && !bearerMatches(request.headers.get("authorization"), token)) {
          throw new ApiError("UNAUTHENTICATED", "GET /metrics needs 'Authorization: Bearer <MEDIABOX_METRICS_TOKEN>'", { "www-authenticate": 'Bearer realm="mediabox-metrics"' });
        }
        const { body, contentType } = await ctx.metrics.scrape();
        set.headers["content-type"] = contentType;
        return body;
      },
      { detail: { summary: "Prometheus metrics (text exposition format)", security: [] } },
    )
    .get("/healthz", () => ({ status: "ok" as const, version: VERSION }), {
      response: Health,
      detail: { summary: "Liveness: the process answers", security: [] },
    })
    .get(
      "/readyz",
      async ({ set }) => {
        const checks = await readinessChecks({ sql: ctx.sql, role: ctx.config.role, jobsRunning: ctx.jobs.isRunning, scanThreads: scanThreadsReady });
        const ready = Object.values(checks).every((c) => c.ok);
        set.status = ready ? 200 : 503;
        const models = {
          installed: installedModels(ctx.config.modelsDir),
          text_embedding: {
            configured: ctx.config.textEmbeddingModel,
            in_use: ctx.embedder.modelId,
            fallback_reason: textModelFallbackReason(ctx.embedder),
            pending_chunks: await pendingEmbeddingChunks(ctx.sql),
          },
        };
        return { status: ready ? ("ready" as const) : ("not_ready" as const), checks, models, preparing: ctx.background.preparingNow(), event_loop: eventLoopMonitor().window() };
      },
      {
        response: {
          200: Ready,
          503: NotReady,
        },
        detail: { summary: "Readiness: database, schema, vector search and job workers are up; which models are installed and in use, what is preparing, and how late the event loop ran in the last minute", security: [] },
      },
    );
}

/** Constant-time check of `Authorization: Bearer <token>`. */
function bearerMatches(header: string | null, token: string): boolean {
  const given = Buffer.from(/^Bearer\s+(\S+)\s*$/i.exec(header ?? "")?.[1] ?? "");
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
