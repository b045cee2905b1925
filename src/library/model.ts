/** The library's request and response schemas (TypeBox): the listing's query and filters, edits, batches, exports. */
import { t } from "elysia";
import type { Static, TObject } from "@sinclair/typebox";
import { Enum, Nullable, OneOf, pageQuery, Timestamp, Uuid, UuidText } from "../http/shapes.ts";
import type { MediaType } from "../files/file.ts";
import { EXPORT_FORMATS } from "./exports.ts";
import { MAX_USER_DESCRIPTION } from "./file-edits.ts";
import { parseBoundingBox, type FileFilters, PROCESSING_STATUSES, SEARCH_MODES, SORT_FIELDS, type ListFilesQuery } from "../files/queries.ts";



/** Repeatable parameters of GET /files (repeated, `name[]=` or comma-separated; see querySyntax). */
export const LIST_REPEATABLE = ["tags", "media_types", "ids"] as const;
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

export const listQuery = (mediaTypes: readonly MediaType[]) => t.Object({
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
export function listFilesQuery(query: Static<ReturnType<typeof listQuery>>): ListFilesQuery {
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

/** GET /files/export/columns: the columns by group. */
export const ColumnGroups = t.Object({ groups: t.Record(t.String(), t.Array(t.Object({ field_key: t.String(), display_name: t.String(), group: t.String() }))) });

/** POST /files/export's body. */
export const ExportBody = t.Object({
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
      });

export const ExportAnswer = t.Object({ download_url: Nullable(t.String()), spreadsheet_url: Nullable(t.String()), record_count: t.Integer(), format: t.String() });

/** POST /files/batch-move. */
export const BatchMoveBody = t.Object({
        file_ids: t.Array(Uuid("file_ids"), { minItems: 1, maxItems: 100, error: "file_ids: 1-100 file UUIDs" }),
        folder_id: t.Optional(Nullable(Uuid("folder_id"))),
        project_id: t.Optional(Uuid("project_id")),
      });

export const BatchMoveAnswer = t.Object({
          moved: t.Array(t.Object({ id: t.String(), status: t.String(), message: t.String() })),
          failed: t.Array(t.Object({ id: t.String(), status: t.String(), message: t.String() })),
          project_id: Nullable(t.String()),
          folder_id: Nullable(t.String()),
          summary: t.Object({ total: t.Integer(), moved: t.Integer(), failed: t.Integer() }),
        });

/** POST /files/batch-delete. */
export const BatchDeleteBody = t.Object({
        file_ids: t.Array(Uuid("file_ids"), { minItems: 1, maxItems: 100, error: "file_ids: 1-100 file UUIDs" }),
      });

export const BatchDeleteAnswer = t.Object({
          deleted: t.Array(t.Object({ id: t.String(), status: t.String(), message: t.String(), deleted_at: Nullable(t.String()) })),
          skipped: t.Array(t.Object({ id: t.String(), status: t.String(), message: t.String(), deleted_at: Nullable(t.String()) })),
          failed: t.Array(t.Object({ id: t.String(), status: t.String(), message: t.String(), deleted_at: Nullable(t.String()) })),
          summary: t.Object({ total: t.Integer(), deleted: t.Integer(), skipped: t.Integer(), failed: t.Integer() }),
        });

/** PATCH /files/{file_id}. */
export const FileEditBody = t.Object({
        title: t.Optional(Nullable(t.String({ error: "title: must be a string of at most 255 characters" }))),
        tags: t.Optional(t.Array(t.String(), { error: "tags: must be an array of strings" })),
        user_description: t.Optional(Nullable(t.String({ maxLength: MAX_USER_DESCRIPTION, error: `user_description: at most ${MAX_USER_DESCRIPTION} characters` }))),
      });

export const FileEditAnswer = t.Object({
          id: t.String(),
          title: Nullable(t.String()),
          tags: t.Array(t.String()),
          user_description: Nullable(t.String()),
          upload_description: Nullable(t.String()),
          updated_at: Timestamp,
        });
