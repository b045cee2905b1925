/** HTTP binding of the generic job resource: `GET /job/{job_id}` (spec), the organization's job list and cancellation (extensions). */
import { Elysia, t } from "elysia";
import { permissions } from "../http/permissions.ts";
import { NullableTimestamp, Timestamp, Uuid, Enum, Page, page, pageQuery, errorResponses } from "../http/shapes.ts";
import { JOB_STATUSES } from "./queue.ts";
import type { JobRunner } from "./runner.ts";

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

const ListedJobSchema = t.Composite([JobSchema, t.Object({ file_id: t.Union([t.String({ format: "uuid" }), t.Null()], { description: "The file the job works on, when it works on one" }) })], {
  title: "ListedJob",
});

export function jobRoutes(ctx: { jobs: JobRunner }) {
  return new Elysia({ tags: ["Jobs"] })
    .use(permissions)
    .get(
      "/jobs",
      async ({ principal, query }) => {
        const { rows, total } = await ctx.jobs.store.listForOrg(principal.orgId, { status: query.status, queue: query.type }, query.limit, query.offset);
        return page(rows, total, query.limit, query.offset);
      },
      {
        permission: "view",
        query: t.Object({
          ...pageQuery(100, 20),
          status: t.Optional(Enum(JOB_STATUSES, { error: `status: must be one of ${JOB_STATUSES.join(", ")}` })),
          type: t.Optional(t.String({ minLength: 1, maxLength: 64, error: "type: a queue name such as file.process" })),
        }),
        response: { 200: Page(ListedJobSchema), ...errorResponses([400]) },
        detail: {
          summary: "List the organization's background jobs (extension)",
          description:
            "Newest first; finished jobs are kept 14 days. Query: status (pending, processing, completed, failed, cancelled), type (the queue, e.g. file.process, document.embed, cloud.import), limit (1-100, default 20), offset. Each job as GET /job/{job_id} shows it plus file_id when it works on one file.",
        },
      },
    )
    .get("/job/:job_id", ({ principal, params }) => ctx.jobs.store.viewForOrg(principal.orgId, params.job_id), {
      permission: "view",
      params: jobParams,
      response: { 200: JobSchema, ...errorResponses([400, 404]) },
      detail: { summary: "Get a background job's status, progress and results" },
    })
    .post("/job/:job_id/cancel", ({ principal, params }) => ctx.jobs.cancel(principal.orgId, params.job_id), {
      permission: "edit",
      params: jobParams,
      response: { 200: JobSchema, ...errorResponses([400, 404, 409]) },
      detail: {
        summary: "Cancel a job (extension)",
        description: "A pending job is cancelled at once; a running job stops at its next checkpoint. 409 once the job has finished.",
      },
    });
}
