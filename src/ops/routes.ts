/**
 * Operational routes outside the versioned API: liveness and readiness probes, Prometheus
 * metrics (behind MEDIABOX_METRICS_TOKEN when set).
 */
import { Elysia } from "elysia";
import type { OpsDeps } from "./deps.ts";
import { schemaVersion, vectorExtensionVersion } from "../db/database.ts";
import { MIGRATIONS } from "../db/migrations/index.ts";
import { VERSION } from "../http/docs.ts";
import { scanThreadsReady } from "../vectors/scan-threads.ts";
import { ApiError, errorMessage } from "../errors.ts";
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
      ({ set }) => {
        const checks = readiness(ctx);
        const ready = Object.values(checks).every((c) => c.ok);
        set.status = ready ? 200 : 503;
        const models = {
          installed: installedModels(ctx.config.modelsDir),
          text_embedding: {
            configured: ctx.config.textEmbeddingModel,
            in_use: ctx.embedder.modelId,
            fallback_reason: textModelFallbackReason(ctx.embedder),
            pending_chunks: pendingEmbeddingChunks(ctx.db),
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

function readiness(ctx: OpsDeps): Record<string, { ok: boolean; detail: string }> {
  const probe = (fn: () => string) => {
    try {
      return { ok: true, detail: fn() };
    } catch (err) {
      return { ok: false, detail: errorMessage(err) };
    }
  };
  const latest = Math.max(...MIGRATIONS.map((m) => m.version));
  return {
    database: probe(() => {
      ctx.db.query("SELECT 1").get();
      return "reachable";
    }),
    schema: probe(() => {
      const version = schemaVersion(ctx.db);
      if (version !== latest) throw new Error(`schema at version ${version}, expected ${latest}`);
      return `version ${version}`;
    }),
    vector_search: probe(() => {
      const threads = scanThreadsReady();
      return `sqlite-vec ${vectorExtensionVersion(ctx.db)}; in-memory scan on ${threads ?? "(starting)"} thread(s)`;
    }),
    jobs: probe(() => {
      // An api process runs no jobs by design (serve --role api); the worker processes do.
      if (ctx.config.role === "api") return "run by the worker processes (role api)";
      if (!ctx.jobs.isRunning) throw new Error("job workers are not running");
      return "workers running";
    }),
  };
}

/** Constant-time check of `Authorization: Bearer <token>`. */
function bearerMatches(header: string | null, token: string): boolean {
  const given = Buffer.from(/^Bearer\s+(\S+)\s*$/i.exec(header ?? "")?.[1] ?? "");
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
