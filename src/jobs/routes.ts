/** HTTP binding of the generic job resource: `GET /job/{job_id}` (spec) and cancellation (extension). */
import { Elysia, t } from "elysia";
import type { AppContext } from "../context.ts";
import { permissions } from "../http/guard.ts";
import { AUTH_ERRORS, ErrorBody, NullableTimestamp, Timestamp, Uuid, Enum } from "../http/shapes.ts";
import { getJobForOrg, JOB_STATUSES } from "./queue.ts";

export const JobSchema = t.Object(
  {
    job_id: t.String({ format: "uuid" }),
    type: t.String({ description: "The queue that runs the job" }),
    status: Enum(JOB_STATUSES),
    progress: t.Number({ minimum: 0, maximum: 100, description: "Percent complete" }),
    results: t.Array(t.Unknown()),
    error: t.Union([t.String(), t.Null()]),
    attempts: t.Integer(),
    max_attempts: t.Integer(),
    created_at: Timestamp,
    started_at: NullableTimestamp,
    finished_at: NullableTimestamp,
    updated_at: Timestamp,
  },
  { title: "Job" },
);

const jobParams = t.Object({ job_id: Uuid("job_id") });

export function jobRoutes(ctx: AppContext) {
  return new Elysia({ tags: ["Jobs"] })
    .use(permissions)
    .get("/job/:job_id", ({ principal, params }) => getJobForOrg(ctx.db, principal.orgId, params.job_id), {
      permission: "view",
      params: jobParams,
      response: { 200: JobSchema, 400: ErrorBody, 404: ErrorBody, ...AUTH_ERRORS },
      detail: { summary: "Get a background job's status, progress and results" },
    })
    .post("/job/:job_id/cancel", ({ principal, params }) => ctx.jobs.cancel(principal.orgId, params.job_id), {
      permission: "edit",
      params: jobParams,
      response: { 200: JobSchema, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, ...AUTH_ERRORS },
      detail: {
        summary: "Cancel a job (extension)",
        description: "A pending job is cancelled at once; a running job stops at its next checkpoint. 409 once the job has finished.",
      },
    });
}
