/** POST /files/{file_id}/reprocess's response schema (TypeBox). */
import { t } from "elysia";
import { Nullable } from "../http/shapes.ts";

export const ReprocessQueued = t.Object({
  file_id: t.String({ format: "uuid" }),
  media_type: t.String(),
  job_ids: t.Array(t.String({ format: "uuid" }), { description: "The job(s) enqueued; poll GET /job/{job_id} or GET /files/uploads-status/{file_id}" }),
  processing_status: t.String({ description: "queued" }),
  crawl_status: Nullable(t.String({ description: "Links: pending; null for other files" })),
  message: t.String(),
});
