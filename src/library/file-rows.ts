/**
 * Reading file records: the row type, lookup by full UUID or 8-character prefix (tenant-scoped,
 * soft-deleted files hidden unless asked for), and the media-type guard the per-type endpoints use.
 */
import type { Database } from "bun:sqlite";
import { ApiError, badRequest, conflict, notFound } from "../errors.ts";
import { UUID_PATTERN } from "../ids.ts";

export interface FileRow {
  id: string;
  org_id: string;
  project_id: string;
  folder_id: string | null;
  media_type: "image" | "document" | "video" | "link";
  filename: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  title: string | null;
  tags: string;
  size_bytes: number;
  content_type: string;
  format: string | null;
  document_type: string | null;
  sha256: string | null;
  blob_key: string | null;
  upload_method: string;
  session_id: string | null;
  storage_target: string;
  auto_describe: number;
  content_category: string;
  custom_schema_id: string | null;
  compliance_type: string | null;
  compliance_standard: string | null;
  compliance_image_type: string | null;
  compliance_status: string | null;
  uploaded_by: string | null;
  processing_status: string;
  processing_job_id: string | null;
  processing_error: string | null;
  processing_started_at: string | null;
  processing_completed_at: string | null;
  text_extraction_status: string | null;
  variant_status: string | null;
  description_status: string | null;
  description_error: string | null;
  description_generated_at: string | null;
  user_description: string | null;
  upload_description: string | null;
  visible_text: string | null;
  source_url: string | null;
  content_created_at: string | null;
  width: number | null;
  height: number | null;
  blur_hash: string | null;
  variant_count: number;
  page_count: number | null;
  chunk_count: number;
  extracted_text: string | null;
  duration_seconds: number | null;
  image_embedding_model: string | null;
  digitization_status: string | null;
  embedding_status: string | null;
  document_language: string | null;
  frame_rate: number | null;
  video_codec: string | null;
  analysis_status: string | null;
}

const PREFIX = /^[0-9a-f]{8}$/;

/** Accepts a full UUID or its first 8 hex characters (case-insensitive). */
export function parseFileRef(ref: string): { kind: "id" | "prefix"; value: string } {
  const value = ref.trim().toLowerCase();
  if (UUID_PATTERN.test(value)) return { kind: "id", value };
  if (PREFIX.test(value)) return { kind: "prefix", value };
  throw badRequest("file_id: must be a UUID or its first 8 hexadecimal characters");
}

/**
 * The organization's file named by `ref`. A prefix matching several files is 409 (the caller
 * must use more of the id); deleted files are 404 unless `includeDeleted`.
 */
export function findFile(db: Database, orgId: string, ref: string, options: { includeDeleted?: boolean } = {}): FileRow {
  const parsed = parseFileRef(ref);
  const visible = options.includeDeleted ? "" : "AND deleted_at IS NULL";
  if (parsed.kind === "id") {
    const row = db.query<FileRow, [string, string]>(`SELECT * FROM files WHERE id = ? AND org_id = ? ${visible}`).get(parsed.value, orgId);
    if (!row) throw notFound(`file ${ref} not found`, "FILE_NOT_FOUND");
    return row;
  }
  // A range over the primary key, so a prefix lookup is an index seek.
  const rows = db
    .query<FileRow, [string, string, string]>(`SELECT * FROM files WHERE id >= ? AND id < ? AND org_id = ? ${visible} LIMIT 2`)
    .all(parsed.value, `${parsed.value}g`, orgId);
  if (rows.length === 0) throw notFound(`no file id starts with ${parsed.value}`, "FILE_NOT_FOUND");
  if (rows.length > 1) {
    throw conflict(`more than one file id starts with ${parsed.value}; use the full id`, "FILE_ID_AMBIGUOUS");
  }
  return rows[0]!;
}

/** findFile for endpoints that only make sense for one media type (spec: 400 for the others). */
export function findFileOfType(db: Database, orgId: string, ref: string, mediaType: FileRow["media_type"]): FileRow {
  const row = findFile(db, orgId, ref);
  if (row.media_type !== mediaType) {
    throw new ApiError(400, "WRONG_MEDIA_TYPE", `file ${row.id} is a ${row.media_type}; this endpoint is for ${mediaType}s`);
  }
  return row;
}

/** A file row by its full id, deleted or not (jobs and routes re-reading a row they already resolved). */
export function fileById(db: Database, id: string): FileRow | null {
  return db.query<FileRow, [string]>("SELECT * FROM files WHERE id = ?").get(id);
}

export function tagsOf(row: Pick<FileRow, "tags">): string[] {
  return JSON.parse(row.tags) as string[];
}
