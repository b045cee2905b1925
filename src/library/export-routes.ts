/** HTTP binding of exports: the column registry (GET /files/export/columns) and POST /files/export. */
import { Elysia } from "elysia";
import type { LibraryDeps } from "./deps.ts";
import { permissions } from "../http/permissions.ts";
import { publicOrigin } from "../http/request-context.ts";
import { errorResponses } from "../http/shapes.ts";
import { exportColumnGroups, exportFiles } from "./exports.ts";
import { ColumnGroups, ExportAnswer, ExportBody } from "./model.ts";

export function exportRoutes(ctx: LibraryDeps) {
  const { kinds } = ctx;
  return new Elysia({ tags: ["Files"] })
    .use(permissions)
    .get("/files/export/columns", () => exportColumnGroups(kinds), {
      permission: "view",
      response: {
        200: ColumnGroups,
        ...errorResponses([]),
      },
      detail: { summary: "The exportable columns, grouped (basic, descriptions, image, document, video, link; camera is an extension)" },
    })
    .post("/files/export", ({ principal, body, request }) => exportFiles(ctx, principal.orgId, body, publicOrigin(ctx.config, request)), {
      permission: "view",
      body: ExportBody,
      response: {
        200: ExportAnswer,
        ...errorResponses([400, 404, 409, 502, 503]),
      },
      detail: {
        summary: "Export file metadata as CSV, XLSX or DOCX (download_url is a signed link valid 1 hour)",
        description: "Selection: file_ids, else folder_id (with include_subfolders), else every file. hosted_sheets writes the spreadsheet to connection_id's drive (named by title) and answers spreadsheet_url, with download_url null.",
      },
    });
}
