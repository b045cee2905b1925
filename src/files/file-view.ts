/** The fields every file shows in the API whatever its kind: the File resource's common part. */
import { type FileRow, tagsOf } from "./file.ts";

export function commonFields(row: FileRow) {
  return {
    id: row.id,
    media_type: row.media_type,
    title: row.title,
    filename: row.filename,
    tags: tagsOf(row),
    size_bytes: row.size_bytes,
    content_type: row.content_type,
    created_at: row.created_at,
    updated_at: row.updated_at,
    content_created_at: row.content_created_at,
    user_description: row.user_description,
    upload_description: row.upload_description,
    visible_text: row.visible_text,
    source_url: row.source_url,
    content_category: row.content_category,
    project_id: row.project_id,
    folder_id: row.folder_id,
    processing_status: row.processing_status,
    processing_error: row.processing_error,
  };
}
