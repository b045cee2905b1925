/** Assembles the HTTP application: error handling, the guard, docs, operations and the /api/v2 routes. */
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { datasetRoutes } from "../datasets/routes.ts";
import { folderRoutes } from "../folders/routes.ts";
import { jobRoutes } from "../jobs/routes.ts";
import { projectRoutes } from "../projects/routes.ts";
import { telemetryRoutes } from "../telemetry/routes.ts";
import { errorHandler } from "./errors.ts";
import { API_PREFIX, guard } from "./guard.ts";
import { apiDocs, infrastructureRoutes } from "./infrastructure.ts";

export function createApp(ctx: AppContext) {
  const api = new Elysia({ prefix: API_PREFIX })
    .use(projectRoutes(ctx))
    .use(folderRoutes(ctx))
    .use(jobRoutes(ctx))
    .use(telemetryRoutes(ctx))
    .use(datasetRoutes());
  return new Elysia({ name: "mediabox" })
    .use(errorHandler(ctx.log))
    .use(guard(ctx))
    .use(apiDocs())
    .use(infrastructureRoutes(ctx))
    .use(api);
}

export type App = ReturnType<typeof createApp>;
