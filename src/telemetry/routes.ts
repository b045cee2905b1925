/** HTTP binding of `POST /files/log-upload-event` (no authentication; spec "Telemetry"). */
import { Elysia } from "elysia";
import type { TelemetryDeps } from "./deps.ts";
import { requestInfo } from "../http/request-context.ts";
import { errorResponses } from "../http/shapes.ts";
import { logUploadEvent } from "./upload-events.ts";
import { UploadEventBody, UploadEventLogged } from "./model.ts";

export function telemetryRoutes(ctx: TelemetryDeps) {
  return new Elysia({ tags: ["Telemetry"] }).post(
    "/files/log-upload-event",
    async ({ body, request, set }) => {
      const { principal, ip } = requestInfo(request);
      const logged = await logUploadEvent(ctx.sql, ctx.clock, body, { orgId: principal?.orgId ?? null, ip });
      ctx.log.info("upload event", { event_type: body.event_type, batch_id: body.batch_id, org_id: principal?.orgId, ip });
      set.status = 200;
      return logged;
    },
    {
      body: UploadEventBody,
      response: { 200: UploadEventLogged, ...errorResponses([400, 429], { public: true }) },
      detail: {
        summary: "Log a client-side upload event",
        description: "No authentication. With a valid API key the event is attached to its organization.",
        security: [],
      },
    },
  );
}
