/** The job routes' request and response schemas (TypeBox). */
import { t } from "elysia";
import { Enum, NullableTimestamp, pageQuery, Timestamp, Uuid } from "../http/shapes.ts";
import { JOB_STATUSES } from "./queue.ts";

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

export const JobParams = t.Object({ job_id: Uuid("job_id") });

export const ListedJobSchema = t.Composite([JobSchema, t.Object({ file_id: t.Union([t.String({ format: "uuid" }), t.Null()], { description: "The file the job works on, when it works on one" }) })], {
  title: "ListedJob",
});

export const JobsQuery = t.Object({
  ...pageQuery(100, 20),
  status: t.Optional(Enum(JOB_STATUSES, { error: `status: must be one of ${JOB_STATUSES.join(", ")}` })),
  type: t.Optional(t.String({ minLength: 1, maxLength: 64, error: "type: a queue name such as file.process" })),
});
