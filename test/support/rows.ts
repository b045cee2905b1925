/**
 * Direct row fixtures for tests that need state the API cannot create yet (file rows with
 * fields only the media pipelines fill, many files with chosen timestamps), written through
 * the server's own data-access port (`server.ctx.sql`), so they land in SQLite or PostgreSQL alike.
 */
import type { SqlClient } from "../../src/db/sql-client.ts";
import { isoAt, type Clock } from "../../src/clock.ts";
import { hashKey, KEY_PREFIX } from "../../src/auth/api-keys.ts";
import { PERMISSIONS, type Permission } from "../../src/auth/permissions.ts";
import { nameKey } from "../../src/tenancy/names.ts";
import { DEFAULT_PROJECT_NAME } from "../../src/tenancy/projects.ts";
import type { Tier } from "../../src/tenancy/tiers.ts";

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
  complianceStatus?: "pass" | "fail" | null;
  textExtractionStatus?: string | null;
}

export async function insertFileRow(db: SqlClient, row: FileRowFixture): Promise<string> {
  const id = row.id ?? crypto.randomUUID();
  const now = row.createdAt ?? new Date().toISOString();
  const deletedAt = row.deleted === true ? now : typeof row.deleted === "string" ? row.deleted : null;
  await db.run(
    `INSERT INTO files (id, org_id, project_id, folder_id, media_type, filename, created_at, updated_at, deleted_at,
       title, tags, size_bytes, content_created_at, visible_text, upload_description, user_description)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [id, row.orgId, row.projectId, row.folderId ?? null, row.mediaType ?? "image", row.filename ?? `${id}.jpg`, now, now, deletedAt,
    row.title ?? null, JSON.stringify(row.tags ?? []), row.sizeBytes ?? 0, row.contentCreatedAt ?? null, row.visibleText ?? null,
    row.uploadDescription ?? null, row.userDescription ?? null],
  );
  // The document kind's reading state is its own table's (documents/document-facts.ts).
  if (row.textExtractionStatus) await db.run("INSERT INTO document_facts (file_id, text_extraction_status) VALUES (?, ?)", [id, row.textExtractionStatus]);
  if (row.complianceStatus) {
    // A check asked at upload, then judged (its verdict is what listings filter on).
    await db.run("INSERT INTO image_compliance (file_id, type, standard, image_type, status) VALUES (?, 'mls', 'default', 'main', ?)", [id, row.complianceStatus]);
  }
  return id;
}

export async function deleteFileRow(db: SqlClient, id: string): Promise<void> {
  await db.run("DELETE FROM files WHERE id = ?", [id]);
}

/** A person as the clustering job makes one (its faces come from insertFaceRow). */
export async function insertPersonRow(db: SqlClient, row: { orgId: string; name?: string | null; hidden?: boolean; id?: string }): Promise<string> {
  const id = row.id ?? crypto.randomUUID();
  const now = new Date().toISOString();
  await db.run("INSERT INTO people (id, org_id, name, hidden, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)", [id, row.orgId, row.name ?? null, row.hidden ? 1 : 0, now, now]);
  return id;
}

/** A face found in a file (no embedding: what needs one, same-person search, is not served by it). */
export async function insertFaceRow(
  db: SqlClient,
  row: { orgId: string; fileId: string; personId: string | null; box?: { x_min: number; y_min: number; x_max: number; y_max: number }; score?: number },
): Promise<string> {
  const id = crypto.randomUUID();
  const box = row.box ?? { x_min: 0.3, y_min: 0.2, x_max: 0.6, y_max: 0.6 };
  await db.run("INSERT INTO faces (id, file_id, org_id, person_id, x_min, y_min, x_max, y_max, score, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
    id, row.fileId, row.orgId, row.personId, box.x_min, box.y_min, box.x_max, box.y_max, row.score ?? 0.9, new Date().toISOString(),
  ]);
  return id;
}

/** Stores `jpeg` as the file's small_256 variant (what listings sign as `thumbnail_url`). */
export async function insertThumbnailRow(
  ctx: { sql: SqlClient; blobs: { put(key: string, body: Uint8Array, contentType: string): Promise<void> } },
  fileId: string,
  jpeg: Uint8Array,
  size: { width: number; height: number },
): Promise<void> {
  const key = `test-variants/${fileId}/small_256.jpg`;
  await ctx.blobs.put(key, jpeg, "image/jpeg");
  await ctx.sql.run(
    `INSERT INTO image_variants (file_id, variant_type, blob_key, width, height, size_bytes, content_type, created_at) VALUES (?, 'small_256', ?, ?, ?, ?, 'image/jpeg', ?)
     ON CONFLICT (file_id, variant_type) DO UPDATE SET blob_key = excluded.blob_key, width = excluded.width, height = excluded.height,
       size_bytes = excluded.size_bytes, content_type = excluded.content_type, created_at = excluded.created_at`,
    [fileId, key, size.width, size.height, jpeg.byteLength, new Date().toISOString()],
  );
}

/** The organization's Default project (placement's rule with nothing named). */
export async function defaultProjectOf(db: SqlClient, orgId: string): Promise<string> {
  const project = await db.one<{ id: string }>("SELECT id FROM projects WHERE org_id = ? AND is_default = 1", [orgId]);
  if (!project) throw new Error(`organization ${orgId} has no Default project`);
  return project.id;
}

/**
 * An organization (with its Default project) and one API key: the rows createOrganization and
 * createApiKey write (test/port-modules.test.ts runs those on both engines).
 */
export async function insertTenantRows(db: SqlClient, clock: Clock, input: { name: string; tier: Tier; permissions?: readonly Permission[] }): Promise<{ orgId: string; key: string }> {
  const orgId = crypto.randomUUID();
  const now = isoAt(clock.now());
  const key = await db.transaction(async (tx) => {
    await tx.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, ?, ?)", [orgId, input.name, nameKey(input.name), input.tier, now]);
    await tx.run("INSERT INTO projects (id, org_id, name, name_key, project_type, is_default, created_at, updated_at) VALUES (?, ?, ?, ?, 'general', 1, ?, ?)", [
      crypto.randomUUID(), orgId, DEFAULT_PROJECT_NAME, nameKey(DEFAULT_PROJECT_NAME), now, now,
    ]);
    return insertApiKeyRow(tx, clock, orgId, input.permissions ?? PERMISSIONS);
  });
  return { orgId, key };
}

/** Another API key of an organization; returns the key. */
export async function insertApiKeyRow(db: SqlClient, clock: Clock, orgId: string, permissions: readonly Permission[]): Promise<string> {
  const key = KEY_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  await db.run("INSERT INTO api_keys (id, org_id, name, display_prefix, key_hash, permissions, created_at) VALUES (?, ?, NULL, ?, ?, ?, ?)", [
    crypto.randomUUID(), orgId, key.slice(0, KEY_PREFIX.length + 8), hashKey(key), permissions.join(","), isoAt(clock.now()),
  ]);
  return key;
}
