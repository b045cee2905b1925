/**
 * Operational routes outside the versioned API: liveness, readiness, and the interactive API
 * docs (Swagger UI served from the binary itself, so /docs works with no network).
 */
import { openapi } from "@elysiajs/openapi";
import { Elysia, t } from "elysia";
import swaggerBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import type { AppContext } from "../context.ts";
import { schemaVersion, vectorExtensionVersion } from "../db/database.ts";
import { MIGRATIONS } from "../db/migrations/index.ts";
import { API_PREFIX } from "./guard.ts";

export const VERSION = "0.1.0";

const DOCS_ASSETS: Record<string, { path: string; type: string }> = {
  "swagger-ui-bundle.js": { path: swaggerBundle, type: "text/javascript; charset=utf-8" },
  "swagger-ui.css": { path: swaggerCss, type: "text/css; charset=utf-8" },
};

export function apiDocs() {
  return openapi({
    path: "/docs",
    specPath: `${API_PREFIX}/openapi.json`,
    provider: "swagger-ui",
    swagger: { cdn: "/docs/assets/swagger-ui-bundle.js", theme: "/docs/assets/swagger-ui.css", autoDarkMode: false },
    exclude: { paths: ["/docs/assets/:file", "/docs", `${API_PREFIX}/openapi.json`] },
    documentation: {
      info: {
        title: "Mediabox API",
        version: VERSION,
        description: "Self-hosted media analysis appliance. Every API path is under /api/v2; authenticate with `Authorization: Bearer <API key>`.",
      },
      components: { securitySchemes: { apiKey: { type: "http", scheme: "bearer", description: "Mediabox API key (mbx_…)" } } },
      security: [{ apiKey: [] }],
    },
  });
}

const Check = t.Object({ ok: t.Boolean(), detail: t.String() });

export function infrastructureRoutes(ctx: AppContext) {
  return new Elysia({ tags: ["Operations"] })
    .get("/healthz", () => ({ status: "ok" as const, version: VERSION }), {
      response: t.Object({ status: t.Literal("ok"), version: t.String() }),
      detail: { summary: "Liveness: the process answers", security: [] },
    })
    .get(
      "/readyz",
      ({ set }) => {
        const checks = readiness(ctx);
        const ready = Object.values(checks).every((c) => c.ok);
        set.status = ready ? 200 : 503;
        return { status: ready ? ("ready" as const) : ("not_ready" as const), checks };
      },
      {
        response: {
          200: t.Object({ status: t.Literal("ready"), checks: t.Record(t.String(), Check) }),
          503: t.Object({ status: t.Literal("not_ready"), checks: t.Record(t.String(), Check) }),
        },
        detail: { summary: "Readiness: database, schema, vector search and job workers are up", security: [] },
      },
    )
    .get("/docs/assets/:file", ({ params, set }) => {
      const asset = DOCS_ASSETS[params.file];
      if (!asset) {
        set.status = 404;
        return { detail: `no docs asset named ${params.file}`, code: "NOT_FOUND" };
      }
      return new Response(Bun.file(asset.path), {
        headers: { "content-type": asset.type, "cache-control": "public, max-age=86400" },
      });
    });
}

function readiness(ctx: AppContext): Record<string, { ok: boolean; detail: string }> {
  const probe = (fn: () => string) => {
    try {
      return { ok: true, detail: fn() };
    } catch (err) {
      return { ok: false, detail: err instanceof Error ? err.message : String(err) };
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
    vector_search: probe(() => `sqlite-vec ${vectorExtensionVersion(ctx.db)}`),
    jobs: probe(() => {
      if (!ctx.jobs.isRunning) throw new Error("job workers are not running");
      return "workers running";
    }),
  };
}
