/** HTTP binding of the file library: listing, detail, edits, deletion, restore and download. */
import { Elysia, t } from "elysia";
import type { LibraryDeps } from "./deps.ts";
import { isoAt } from "../clock.ts";
import type { Static, TObject } from "@sinclair/typebox";
import { ApiError, badRequest } from "../errors.ts";
import { permissions } from "../http/permissions.ts";
import { publicOrigin } from "../http/request-context.ts";
import { querySyntax } from "../http/validation.ts";
import { Enum, Nullable, OneOf, Page, page, pageQuery, Timestamp, Uuid, UuidText, errorResponses } from "../http/shapes.ts";
import { fileShapes } from "../files/file-shapes.ts";
import { EXPORT_FORMATS, exportColumnGroups, exportFiles } from "./exports.ts";
import { batchDeleteFiles, batchMoveFiles, deleteFile, MAX_USER_DESCRIPTION, purgeAt, restoreFile, retentionCutoff, updateFile } from "./file-edits.ts";
import { listDeletedFiles, listFiles, parseBoundingBox, type FileFilters, PROCESSING_STATUSES, SEARCH_MODES, SORT_FIELDS, type ListFilesQuery } from "./file-listing.ts";
import { fileDetail, fileSummary, withVisibleTextCut } from "./file-views.ts";
import { dismissSuggestion } from "../files/tag-suggestions.ts";
import { FileUrls } from "../files/file-urls.ts";
import { imageMarkdown } from "../images/formatted-document.ts";
import { type MediaType, tagsOf } from "../files/file.ts";
import { listExtractions } from "../extractions/extractions.ts";

/** Download links live five minutes (spec). */
const DOWNLOAD_URL_SECONDS = 300;

const FileParams = t.Object({ file_id: t.String({ description: "A file UUID or its first 8 hexadecimal characters" }) });


/** Repeatable parameters of GET /files (repeated, `name[]=` or comma-separated; see querySyntax). */
const LIST_REPEATABLE = ["tags", "media_types", "ids"] as const;
/** Those of the filters alone (the timeline and the map). */
export const FILTER_REPEATABLE = ["media_types", "ids"] as const;

/**
 * The filters of GET /files that are conditions on the file itself; the timeline and the map take
 * them too. `mediaTypes`: the registered kinds' types.
 */
export const filterParams = (mediaTypes: readonly MediaType[]) => ({
  media_types: t.Optional(t.Array(OneOf(mediaTypes), { description: "Repeatable" })),
  ids: t.Optional(t.Array(UuidText(), { description: "Repeatable" })),
  folder_id: t.Optional(UuidText()),
  project_id: t.Optional(UuidText()),
  has_description: t.Optional(Enum(["true", "false", "1", "0"], { error: "must be true or false" })),
  compliance_status: t.Optional(t.String()),
  processing_status: t.Optional(OneOf(PROCESSING_STATUSES)),
  date_from: t.Optional(t.String({ description: "ISO 8601, inclusive, on created_at" })),
  date_to: t.Optional(t.String({ description: "ISO 8601, inclusive, on created_at" })),
  taken_from: t.Optional(t.String({ description: "Extension: ISO 8601, inclusive, on content_created_at (when it was taken)" })),
  taken_to: t.Optional(t.String({ description: "Extension: ISO 8601, inclusive, on content_created_at" })),
  camera: t.Optional(t.String({ minLength: 1, maxLength: 200, error: "camera: 1-200 characters", description: "Extension: part of the camera's make and model, case-insensitive (\"iPhone\", \"Canon EOS\")" })),
  has_location: t.Optional(Enum(["true", "false", "1", "0"], { error: "has_location: must be true or false" })),
  bbox: t.Optional(t.String({ description: "Extension: west,south,east,north in degrees; files taken within it (west > east crosses the antimeridian)" })),
});
type FilterQuery = Static<TObject<ReturnType<typeof filterParams>>>;

const flag = (value: string | undefined): boolean | null => (value === undefined ? null : value === "true" || value === "1");

/** The checked filter parameters as the listing takes them (ids in lower case); a bad bbox or date is a 400. */
export function fileFiltersOf(query: FilterQuery): FileFilters {
  return {
    mediaTypes: query.media_types ?? [],
    ids: (query.ids ?? []).map((id) => id.toLowerCase()),
    folderId: query.folder_id?.toLowerCase() ?? null,
    projectId: query.project_id?.toLowerCase() ?? null,
    hasDescription: flag(query.has_description),
    complianceStatus: query.compliance_status?.trim() || null,
    processingStatus: query.processing_status ?? null,
    dateFrom: query.date_from ?? null,
    dateTo: query.date_to ?? null,
    takenFrom: query.taken_from ?? null,
    takenTo: query.taken_to ?? null,
    camera: query.camera?.trim() || null,
    hasLocation: flag(query.has_location),
    bbox: query.bbox === undefined ? null : parseBoundingBox(query.bbox),
  };
}

const listQuery = (mediaTypes: readonly MediaType[]) => t.Object({
  search: t.Optional(t.String({ maxLength: 1000, error: "search: at most 1000 characters", description: "Every word must match; the last also as a prefix" })),
  search_mode: t.Optional(OneOf(SEARCH_MODES)),
  tags: t.Optional(t.Array(t.String(), { maxItems: 40, error: "tags: at most 40 tags per query", description: "All must match, case-insensitive (repeatable)" })),
  ...filterParams(mediaTypes),
  sort_by: t.Optional(OneOf(SORT_FIELDS)),
  sort_order: t.Optional(t.String({ pattern: "^(?:[aA][sS][cC]|[dD][eE][sS][cC])$", error: "must be one of asc, desc", description: "asc or desc (default desc)" })),
  visible_text_chars: t.Optional(
    t.Integer({
      minimum: 0,
      maximum: 200_000,
      error: "visible_text_chars must be an integer from 0 to 200000",
      description: "Extension: cut each item's visible_text to this many characters (a document's is up to 200,000) and say so in visible_text_truncated",
    }),
  ),
  ...pageQuery(100, 20),
});

/** The checked query as the listing takes it (blank search is no search). */
function listFilesQuery(query: Static<ReturnType<typeof listQuery>>): ListFilesQuery {
  return {
    ...fileFiltersOf(query),
    search: query.search?.trim() ? query.search : null,
    searchMode: query.search_mode ?? "all",
    tags: query.tags ?? [],
    sortBy: query.sort_by ?? null,
    sortOrder: query.sort_order?.toLowerCase() === "asc" ? "asc" : "desc",
    limit: query.limit,
    offset: query.offset,
  };
}

export function libraryRoutes(ctx: LibraryDeps) {
  const { db, clock, kinds } = ctx;
  const { FileSummary, DeletedFileSummary, FileDetail } = fileShapes(kinds.all());
  const ListQuery = listQuery(kinds.types());
  return new Elysia({ tags: ["Files"] })
    .use(permissions)
    .get(
      "/files",
      async ({ principal, query, request }) => {
        const q = listFilesQuery(query);
        const { rows, total } = listFiles(db, principal.orgId, q);
        const urls = new FileUrls(ctx, publicOrigin(ctx.config, request));
        const items = await Promise.all(rows.map((row) => fileSummary(kinds, row, urls)));
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
    // Registered before /files/:file_id; the router prefers a static segment anyway, and
    // "deleted" is no file reference (not hexadecimal), so nothing is shadowed either way.
    .get(
      "/files/deleted",
      async ({ principal, query, request }) => {
        const { rows, total } = listDeletedFiles(db, principal.orgId, retentionCutoff(clock.now()), query.limit, query.offset);
        const urls = new FileUrls(ctx, publicOrigin(ctx.config, request));
        const items = await Promise.all(rows.map(async (row) => ({ ...(await fileSummary(kinds, row, urls)), deleted_at: row.deleted_at!, purge_at: purgeAt(row.deleted_at!) })));
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
    .get("/files/export/columns", () => exportColumnGroups(kinds), {
      permission: "view",
      response: {
        200: t.Object({ groups: t.Record(t.String(), t.Array(t.Object({ field_key: t.String(), display_name: t.String(), group: t.String() }))) }),
        ...errorResponses([]),
      },
      detail: { summary: "The exportable columns, grouped (basic, descriptions, image, document, video, link; camera is an extension)" },
    })
    .post("/files/export", ({ principal, body, request }) => exportFiles(ctx, principal.orgId, body, publicOrigin(ctx.config, request)), {
      permission: "view",
      body: t.Object({
        format: Enum(EXPORT_FORMATS, { error: "format: must be csv, xlsx, docx or hosted_sheets" }),
        columns: t.Array(
          t.Object({ field_key: t.String({ error: "columns: field_key is required" }), display_name: t.Optional(Nullable(t.String({ maxLength: 255 }))) }),
          { minItems: 1, error: "columns: at least one {field_key, display_name?}" },
        ),
        file_ids: t.Optional(t.Array(Uuid("file_ids"), { maxItems: 10_000, error: "file_ids: up to 10,000 file UUIDs" })),
        folder_id: t.Optional(Nullable(Uuid("folder_id"))),
        include_subfolders: t.Optional(t.Boolean({ error: "include_subfolders: must be a boolean" })),
        flatten_tags: t.Optional(t.Boolean({ error: "flatten_tags: must be a boolean" })),
        sheet_name: t.Optional(Nullable(t.String())),
        title: t.Optional(Nullable(t.String())),
        connection_id: t.Optional(Nullable(t.String())),
      }),
      response: {
        200: t.Object({ download_url: Nullable(t.String()), spreadsheet_url: Nullable(t.String()), record_count: t.Integer(), format: t.String() }),
        ...errorResponses([400, 404, 409, 502, 503]),
      },
      detail: {
        summary: "Export file metadata as CSV, XLSX or DOCX (download_url is a signed link valid 1 hour)",
        description: "Selection: file_ids, else folder_id (with include_subfolders), else every file. hosted_sheets writes the spreadsheet to connection_id's drive (named by title) and answers spreadsheet_url, with download_url null.",
      },
    })
    .post("/files/batch-move", ({ principal, body }) => batchMoveFiles(ctx, principal.orgId, body.file_ids, body), {
      permission: "edit",
      body: t.Object({
        file_ids: t.Array(Uuid("file_ids"), { minItems: 1, maxItems: 100, error: "file_ids: 1-100 file UUIDs" }),
        folder_id: t.Optional(Nullable(Uuid("folder_id"))),
        project_id: t.Optional(Uuid("project_id")),
      }),
      response: {
        200: t.Object({
          moved: t.Array(t.Object({ id: t.String(), status: t.String(), message: t.String() })),
          failed: t.Array(t.Object({ id: t.String(), status: t.String(), message: t.String() })),
          project_id: Nullable(t.String()),
          folder_id: Nullable(t.String()),
          summary: t.Object({ total: t.Integer(), moved: t.Integer(), failed: t.Integer() }),
        }),
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
      body: t.Object({
        file_ids: t.Array(Uuid("file_ids"), { minItems: 1, maxItems: 100, error: "file_ids: 1-100 file UUIDs" }),
      }),
      response: {
        200: t.Object({
          deleted: t.Array(t.Object({ id: t.String(), status: t.String(), message: t.String(), deleted_at: Nullable(t.String()) })),
          skipped: t.Array(t.Object({ id: t.String(), status: t.String(), message: t.String(), deleted_at: Nullable(t.String()) })),
          failed: t.Array(t.Object({ id: t.String(), status: t.String(), message: t.String(), deleted_at: Nullable(t.String()) })),
          summary: t.Object({ total: t.Integer(), deleted: t.Integer(), skipped: t.Integer(), failed: t.Integer() }),
        }),
        ...errorResponses([400]),
      },
      detail: { summary: "Soft-delete up to 100 files; each is reported on its own (already deleted ones are skipped)" },
    })
    .get(
      "/files/:file_id",
      async ({ principal, params, query, request }) => {
        const row = ctx.files.find(principal.orgId, params.file_id);
        const detail = await fileDetail(kinds, row, new FileUrls(ctx, publicOrigin(ctx.config, request)));
        if (query.format === "markdown") {
          if (row.media_type !== "image") throw new ApiError("WRONG_MEDIA_TYPE", "format=markdown is available for images only");
          const image = {
            ...row, tags: tagsOf(row), extractions: listExtractions(db, row.id),
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
      body: t.Object({
        title: t.Optional(Nullable(t.String({ error: "title: must be a string of at most 255 characters" }))),
        tags: t.Optional(t.Array(t.String(), { error: "tags: must be an array of strings" })),
        user_description: t.Optional(Nullable(t.String({ maxLength: MAX_USER_DESCRIPTION, error: `user_description: at most ${MAX_USER_DESCRIPTION} characters` }))),
      }),
      response: {
        200: t.Object({
          id: t.String(),
          title: Nullable(t.String()),
          tags: t.Array(t.String()),
          user_description: Nullable(t.String()),
          upload_description: Nullable(t.String()),
          updated_at: Timestamp,
        }),
        ...errorResponses([400, 404, 409]),
      },
      detail: { summary: "Edit title, tags or user_description (null hands the description back to the AI's)" },
    })
    .delete(
      "/files/:file_id/suggested-tags/:tag",
      ({ principal, params, set }) => {
        const row = ctx.files.find(principal.orgId, params.file_id);
        if (!dismissSuggestion(ctx.db, row.id, params.tag)) throw new ApiError("NOT_FOUND", `file ${row.id} has no open tag suggestion "${params.tag}"`);
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
    .post("/files/:file_id/restore", ({ principal, params }) => restoreFile(ctx, principal.orgId, params.file_id), {
      permission: "delete",
      params: FileParams,
      response: { 200: t.Object({ id: t.String(), restored_at: Timestamp, message: t.String() }), ...errorResponses([400, 404, 409]) },
      detail: { summary: "Restore a soft-deleted file within 30 days (extension)" },
    })
    .get(
      "/files/:file_id/download",
      async ({ principal, params, request, set }) => {
        const row = ctx.files.find(principal.orgId, params.file_id);
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
