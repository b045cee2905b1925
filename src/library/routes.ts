/** HTTP binding of the File resource: listing, detail, edits, deletion (one or a batch, moves) and download; the trash and exports have routes of their own. */
import { Elysia, t } from "elysia";
import type { LibraryDeps } from "./deps.ts";
import { isoAt } from "../clock.ts";
import { ApiError, badRequest } from "../errors.ts";
import { listExtractions } from "../extractions/extractions.ts";
import { fileShapes, FileParams } from "../files/file-shapes.ts";
import { FileUrls } from "../files/file-urls.ts";
import { tagsOf } from "../files/file.ts";
import { dismissSuggestion } from "../files/tag-suggestions.ts";
import { permissions } from "../http/permissions.ts";
import { publicOrigin } from "../http/request-context.ts";
import { querySyntax } from "../http/validation.ts";
import { Enum, errorResponses, Page, page, Timestamp } from "../http/shapes.ts";
import { imageMarkdown } from "../images/formatted-document.ts";
import { batchDeleteFiles, batchMoveFiles, deleteFile, updateFile } from "./file-edits.ts";
import { listFiles } from "../files/queries.ts";
import { fileDetail, fileSummaries, withVisibleTextCut } from "./file-views.ts";
import { BatchDeleteAnswer, BatchDeleteBody, BatchMoveAnswer, BatchMoveBody, FileEditAnswer, FileEditBody, LIST_REPEATABLE, listFilesQuery, listQuery } from "./model.ts";

/** Download links live five minutes (spec). */
const DOWNLOAD_URL_SECONDS = 300;

export function libraryRoutes(ctx: LibraryDeps) {
  const { clock, kinds } = ctx;
  const { FileSummary, FileDetail } = fileShapes(kinds.all());
  const ListQuery = listQuery(kinds.types());
  return new Elysia({ tags: ["Files"] })
    .use(permissions)
    .get(
      "/files",
      async ({ principal, query, request }) => {
        const q = listFilesQuery(query);
        const { rows, total } = await listFiles(ctx.sql, principal.orgId, q);
        const urls = new FileUrls(ctx, publicOrigin(ctx.config, request));
        const items = await fileSummaries(kinds, rows, urls);
        const chars = query.visible_text_chars;
        return page(chars === undefined ? items : items.map((item) => withVisibleTextCut(item, chars)), total, q.limit, q.offset);
      },
      {
        permission: "view",
        transform: querySyntax(LIST_REPEATABLE),
        query: ListQuery,
        response: { 200: Page(FileSummary), ...errorResponses([400]) },
        detail: {
          summary: "List and search files",
          description:
            "Query: search, search_mode (all|metadata|visible_text), tags (repeatable; all must match, case-insensitive), media_types (repeatable), ids (repeatable), folder_id, project_id, has_description, compliance_status, processing_status (extension: queued|processing|stored|completed|failed; the Activity page lists failed files with it), date_from, date_to (on created_at), taken_from, taken_to (extension: on content_created_at), camera (extension: part of make and model), has_location (extension), bbox (extension: west,south,east,north degrees), sort_by (created_at|content_created_at|title|size_bytes; default created_at, or relevance when searching), sort_order (asc|desc, default desc), visible_text_chars (extension: each item's visible_text cut to that many characters, with visible_text_truncated), limit (1-100, default 20), offset. Repeatable parameters may also be sent as name[]= or comma-separated.",
        },
      },
    )


    .post("/files/batch-move", ({ principal, body }) => batchMoveFiles(ctx, principal.orgId, body.file_ids, body), {
      permission: "edit",
      body: BatchMoveBody,
      response: {
        200: BatchMoveAnswer,
        ...errorResponses([400, 404]),
      },
      detail: {
        summary: "Move up to 100 files into a folder or to a project's top level (extension)",
        description:
          "folder_id puts the files into that folder (and its project; a project_id that disagrees is 400); project_id alone puts them at the project's top level; folder_id null alone takes them out of their folders within their own projects. 404 when the folder or project is not in the organization; files not found are reported in failed.",
      },
    })
    .post("/files/batch-delete", ({ principal, body }) => batchDeleteFiles(ctx, principal.orgId, body.file_ids), {
      permission: "delete",
      body: BatchDeleteBody,
      response: {
        200: BatchDeleteAnswer,
        ...errorResponses([400]),
      },
      detail: { summary: "Soft-delete up to 100 files; each is reported on its own (already deleted ones are skipped)" },
    })
    .get(
      "/files/:file_id",
      async ({ principal, params, query, request }) => {
        const row = await ctx.files.find(principal.orgId, params.file_id);
        const detail = await fileDetail(kinds, row, new FileUrls(ctx, publicOrigin(ctx.config, request)));
        if (query.format === "markdown") {
          if (row.media_type !== "image") throw new ApiError("WRONG_MEDIA_TYPE", "format=markdown is available for images only");
          const image = {
            ...row, tags: tagsOf(row), extractions: await listExtractions(ctx.sql, row.id),
            dimensions: row.width !== null && row.height !== null ? { width: row.width, height: row.height } : null,
          };
          return { ...detail, formatted_document: imageMarkdown(image, isoAt(clock.now())) };
        }
        return detail;
      },
      {
        permission: "view",
        params: FileParams,
        query: t.Object({ format: t.Optional(Enum(["markdown"], { error: "format: only markdown is supported" })) }),
        response: { 200: FileDetail, ...errorResponses([400, 404, 409]) },
        detail: { summary: "Get a file by UUID or 8-character id prefix (409 FILE_ID_AMBIGUOUS when a prefix matches several)" },
      },
    )
    .patch("/files/:file_id", ({ principal, params, body }) => updateFile(ctx, principal.orgId, params.file_id, body), {
      permission: "edit",
      params: FileParams,
      body: FileEditBody,
      response: {
        200: FileEditAnswer,
        ...errorResponses([400, 404, 409]),
      },
      detail: { summary: "Edit title, tags or user_description (null hands the description back to the AI's)" },
    })
    .delete(
      "/files/:file_id/suggested-tags/:tag",
      async ({ principal, params, set }) => {
        const row = await ctx.files.find(principal.orgId, params.file_id);
        if (!(await dismissSuggestion(ctx.sql, row.id, params.tag))) throw new ApiError("NOT_FOUND", `file ${row.id} has no open tag suggestion "${params.tag}"`);
        set.status = 204;
        return undefined;
      },
      {
        permission: "edit",
        params: t.Object({ file_id: FileParams.properties.file_id, tag: t.String({ minLength: 1, maxLength: 100 }) }),
        response: { 204: t.Void(), ...errorResponses([400, 404, 409]) },
        detail: {
          summary: "Dismiss a tag suggestion (extension)",
          description: "A document's keyphrases are offered as suggested_tags, never written into its tags: PATCH the tags to accept one, or dismiss it here (it stays dismissed when the document is read again).",
        },
      },
    )
    .delete("/files/:file_id", ({ principal, params }) => deleteFile(ctx, principal.orgId, params.file_id), {
      permission: "delete",
      params: FileParams,
      response: { 200: t.Object({ id: t.String(), deleted_at: Timestamp, message: t.String() }), ...errorResponses([400, 404, 409]) },
      detail: { summary: "Soft-delete a file (restorable for 30 days; 409 FILE_BUSY while a document's text extraction runs)" },
    })

    .get(
      "/files/:file_id/download",
      async ({ principal, params, request, set }) => {
        const row = await ctx.files.find(principal.orgId, params.file_id);
        const url = await new FileUrls(ctx, publicOrigin(ctx.config, request)).original(row, DOWNLOAD_URL_SECONDS, true);
        if (!url) throw badRequest(`file ${row.id} has no stored bytes to download`);
        set.status = 302;
        set.headers.location = url;
        set.headers["cache-control"] = "no-store";
        return "";
      },
      {
        permission: "view",
        params: FileParams,
        response: { 302: t.String({ description: "Empty; see the Location header" }), ...errorResponses([400, 404, 409]) },
        detail: { summary: "302 to a signed download URL valid 300 s, served with the original filename (RFC 6266)" },
      },
    );
}
