/** HTTP binding of reprocessing (Mediabox extension; documented in the README API overview): POST /files/{file_id}/reprocess. */
import { Elysia } from "elysia";
import { FileParams } from "../files/file-shapes.ts";
import { permissions } from "../http/permissions.ts";
import { errorResponses } from "../http/shapes.ts";
import { reprocessFile, type ReprocessDeps } from "./reprocess.ts";
import { ReprocessQueued } from "./model.ts";

export function processingRoutes(ctx: ReprocessDeps) {
  return new Elysia({ tags: ["Files"] })
    .use(permissions)
    .post(
      "/files/:file_id/reprocess",
      async ({ principal, params, set }) => {
        const { file, jobIds, message, crawlStatus } = await reprocessFile(ctx, principal.orgId, params.file_id);
        set.status = 202;
        return {
          file_id: file.id,
          media_type: file.media_type,
          job_ids: jobIds,
          processing_status: file.processing_status,
          crawl_status: crawlStatus,
          message,
        };
      },
      {
        permission: "edit",
        params: FileParams,
        response: {
          202: ReprocessQueued,
          ...errorResponses([400, 404, 409]),
        },
        detail: {
          summary: "Run a file's processing again (extension)",
          description:
            "For a file whose processing failed (or any finished file): clears processing_error and the failed states (variant_status of images and videos, text_extraction_status of documents, analysis_status of videos), sets processing_status back to queued and enqueues a new file.process job, as an upload does; the pipeline then runs every stage again. AI descriptions that already completed or failed are not asked for again (no credits are spent). A link is crawled again (as POST /files/{file_id}/recrawl). 202 with the job id(s). 409 FILE_PROCESSING while its processing job is queued or running or a document's chunks are being embedded (CRAWL_IN_PROGRESS for a link being crawled); 409 FILE_NOT_STORED for a file whose bytes never arrived (a failed cloud import); 404 FILE_NOT_FOUND for another organization's or a deleted file. Permission: edit.",
        },
      },
    );
}
