/** HTTP binding of the generic job resource: `GET /job/{job_id}` (spec), the organization's job list and cancellation (extensions). */
import { Elysia } from "elysia";
import { permissions } from "../http/permissions.ts";
import { Page, page, errorResponses } from "../http/shapes.ts";
import { JobParams, JobSchema, JobsQuery, ListedJobSchema } from "./model.ts";
import type { JobRunner } from "./runner.ts";

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
        query: JobsQuery,
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
      params: JobParams,
      response: { 200: JobSchema, ...errorResponses([400, 404]) },
      detail: { summary: "Get a background job's status, progress and results" },
    })
    .post("/job/:job_id/cancel", ({ principal, params }) => ctx.jobs.cancel(principal.orgId, params.job_id), {
      permission: "edit",
      params: JobParams,
      response: { 200: JobSchema, ...errorResponses([400, 404, 409]) },
      detail: {
        summary: "Cancel a job (extension)",
        description: "A pending job is cancelled at once; a running job stops at its next checkpoint. 409 once the job has finished.",
      },
    });
}
