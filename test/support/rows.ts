/**
 * Direct row fixtures for tests that need state the API cannot create yet (file rows with
 * fields only the media pipelines fill, many files with chosen timestamps), written through
 * the server's own database handle.
 */
import type { Database } from "bun:sqlite";

export interface FileRowFixture {
  orgId: string;
  projectId: string;
  folderId?: string | null;
  deleted?: boolean | string;
  mediaType?: string;
  id?: string;
  filename?: string;
  title?: string | null;
  tags?: string[];
  sizeBytes?: number;
  createdAt?: string;
  contentCreatedAt?: string | null;
  visibleText?: string | null;
  uploadDescription?: string | null;
  userDescription?: string | null;
  complianceStatus?: string | null;
  textExtractionStatus?: string | null;
}

export function insertFileRow(db: Database, row: FileRowFixture): string {
  const id = row.id ?? crypto.randomUUID();
  const now = row.createdAt ?? new Date().toISOString();
  const deletedAt = row.deleted === true ? now : typeof row.deleted === "string" ? row.deleted : null;
  db.query(
    `INSERT INTO files (id, org_id, project_id, folder_id, media_type, filename, created_at, updated_at, deleted_at,
       title, tags, size_bytes, content_created_at, visible_text, upload_description, user_description, compliance_status,
       text_extraction_status)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id, row.orgId, row.projectId, row.folderId ?? null, row.mediaType ?? "image", row.filename ?? `${id}.jpg`, now, now, deletedAt,
    row.title ?? null, JSON.stringify(row.tags ?? []), row.sizeBytes ?? 0, row.contentCreatedAt ?? null, row.visibleText ?? null,
    row.uploadDescription ?? null, row.userDescription ?? null, row.complianceStatus ?? null, row.textExtractionStatus ?? null,
  );
  return id;
}

export function deleteFileRow(db: Database, id: string): void {
  db.query("DELETE FROM files WHERE id = ?").run(id);
}
