/**
 * The composition root: assembles the HTTP application (error handling, the guard, docs, operations
 * and every feature's /api/v2 routes). Nothing below src/ imports this module.
 */
import { Elysia, type AnyElysia } from "elysia";
import type { AppContext } from "./context.ts";
import { datasetRoutes } from "./datasets/routes.ts";
import { folderRoutes } from "./folders/routes.ts";
import { intentRoutes } from "./ingest/intent-routes.ts";
import { ingestRoutes } from "./ingest/routes.ts";
import { jobRoutes } from "./jobs/routes.ts";
import { libraryRoutes } from "./library/routes.ts";
import { imageRoutes } from "./images/routes.ts";
import { documentRoutes } from "./documents/routes.ts";
import { linkRoutes } from "./links/routes.ts";
import { processingRoutes } from "./processing/routes.ts";
import { projectRoutes } from "./projects/routes.ts";
import { customSchemaRoutes } from "./custom-schemas/routes.ts";
import { localS3Routes } from "./storage/local-s3-endpoint.ts";
import { telemetryRoutes } from "./telemetry/routes.ts";
import { cloudRoutes } from "./cloud/routes.ts";
import { accountRoutes } from "./accounts/routes.ts";
import { supportRoutes } from "./support/routes.ts";
import { paymentRoutes } from "./payments/routes.ts";
import { ruleRoutes } from "./rules/routes.ts";
import { webhookRoutes } from "./webhooks/routes.ts";
import { watchRoutes } from "./watch/routes.ts";
import { errorHandler } from "./http/errors.ts";
import { requestMetrics } from "./ops/request-metrics.ts";
import { headLimit } from "./http/head-limit.ts";
import { API_PREFIX } from "./http/api-prefix.ts";
import { guard } from "./edge/guard.ts";
import { docsRoutes } from "./http/docs.ts";
import { securityHeaders } from "./http/security-headers.ts";
import { infrastructureRoutes } from "./ops/routes.ts";
import { dashboardRoutes } from "./dashboard/routes.ts";

export function createApp(ctx: AppContext) {
  const api = new Elysia({ prefix: API_PREFIX })
    .use(projectRoutes(ctx))
    .use(folderRoutes(ctx))
    .use(ingestRoutes(ctx))
    .use(intentRoutes(ctx))
    .use(libraryRoutes(ctx))
    .use(imageRoutes(ctx))
    .use(documentRoutes(ctx))
    .use(linkRoutes(ctx))
    .use(processingRoutes(ctx))
    .use(jobRoutes(ctx))
    .use(customSchemaRoutes(ctx))
    .use(telemetryRoutes(ctx))
    .use(cloudRoutes(ctx))
    .use(datasetRoutes())
    .use(accountRoutes(ctx))
    .use(supportRoutes(ctx))
    .use(paymentRoutes(ctx))
    .use(ruleRoutes(ctx))
    .use(webhookRoutes(ctx))
    .use(watchRoutes(ctx));
  // "typebox" normalization rejects values of the wrong type; the default one coerces them
  // (a string sent for an object field would arrive as {"0": "s", ...}).
  const app: AnyElysia = new Elysia({ name: "mediabox", normalize: "typebox" })
    .use(securityHeaders())
    .use(requestMetrics(ctx.metrics))
    .use(errorHandler(ctx.log))
    .use(headLimit(ctx.log))
    .use(guard(ctx))
    .use(docsRoutes(() => app))
    .use(infrastructureRoutes(ctx))
    .use(dashboardRoutes())
    .use(api);
  // Only a store whose presigned URLs point back at the appliance needs the endpoint they address.
  const endpoint = ctx.blobs.localEndpoint();
  if (endpoint) app.use(localS3Routes(endpoint, ctx.clock, ctx.config.publicUrl, ctx.log));
  return app;
}

export type App = ReturnType<typeof createApp>;
