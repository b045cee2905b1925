/**
 * Direct row fixtures for tests that need state the API cannot create yet (for example file
 * rows before the ingest pipeline exists), written through the server's own database handle.
 */
import type { Database } from "bun:sqlite";

export function insertFileRow(
  db: Database,
  row: { orgId: string; projectId: string; folderId?: string | null; deleted?: boolean; mediaType?: string },
): string {
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  db.query(
    `INSERT INTO files (id, org_id, project_id, folder_id, media_type, filename, created_at, updated_at, deleted_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(id, row.orgId, row.projectId, row.folderId ?? null, row.mediaType ?? "image", `${id}.jpg`, now, now, row.deleted ? now : null);
  return id;
}

export function deleteFileRow(db: Database, id: string): void {
  db.query("DELETE FROM files WHERE id = ?").run(id);
}
