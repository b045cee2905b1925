/** HTTP binding of the trash (extension): GET /files/deleted and POST /files/{file_id}/restore. */
import { Elysia, t } from "elysia";
import type { LibraryDeps } from "./deps.ts";
import { fileShapes, FileParams } from "../files/file-shapes.ts";
import { FileUrls } from "../files/file-urls.ts";
import { permissions } from "../http/permissions.ts";
import { publicOrigin } from "../http/request-context.ts";
import { errorResponses, Page, page, pageQuery, Timestamp } from "../http/shapes.ts";
import { purgeAt, restoreFile, retentionCutoff } from "./file-edits.ts";
import { listDeletedFiles } from "../files/queries.ts";
import { fileSummaries } from "./file-views.ts";

export function trashRoutes(ctx: LibraryDeps) {
  const { clock, kinds } = ctx;
  const { DeletedFileSummary } = fileShapes(kinds.all());
  return new Elysia({ tags: ["Files"] })
    .use(permissions)
    // The router prefers a static segment to /files/:file_id, and "deleted" is no file
    // reference (not hexadecimal), so nothing is shadowed either way.
    .get(
      "/files/deleted",
      async ({ principal, query, request }) => {
        const { rows, total } = await listDeletedFiles(ctx.sql, principal.orgId, retentionCutoff(clock.now()), query.limit, query.offset);
        const urls = new FileUrls(ctx, publicOrigin(ctx.config, request));
        const items = (await fileSummaries(kinds, rows, urls)).map((summary, i) => ({ ...summary, deleted_at: rows[i]!.deleted_at!, purge_at: purgeAt(rows[i]!.deleted_at!) }));
        return page(items, total, query.limit, query.offset);
      },
      {
        permission: "view",
        query: t.Object(pageQuery(100, 20)),
        response: { 200: Page(DeletedFileSummary), ...errorResponses([400]) },
        detail: {
          summary: "List the trash: soft-deleted files that can still be restored (extension)",
          description:
            "The organization's soft-deleted files not yet past the 30-day retention, newest deletion first, each a file summary plus deleted_at and purge_at (when it is removed for good). POST /files/{file_id}/restore brings one back. Query: limit (1-100, default 20), offset.",
        },
      },
    )
    .post("/files/:file_id/restore", ({ principal, params }) => restoreFile(ctx, principal.orgId, params.file_id), {
      permission: "delete",
      params: FileParams,
      response: { 200: t.Object({ id: t.String(), restored_at: Timestamp, message: t.String() }), ...errorResponses([400, 404, 409]) },
      detail: { summary: "Restore a soft-deleted file within 30 days (extension)" },
    });
}
