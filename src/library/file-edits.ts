/**
 * Changing files: metadata edits, soft delete (single and batch), restore within the retention
 * window, and the purge that removes a deleted file's rows and blobs once the window has passed.
 */
import { purgeDerivedData } from "../processing/derived-data.ts";
import { isoAt } from "../clock.ts";
import type { LibraryDeps } from "./deps.ts";
import { ApiError, badRequest } from "../errors.ts";
import { MAX_TITLE_LENGTH, parseTags } from "../files/file-fields.ts";
import { tagsOf, type FileRow } from "../files/file.ts";
import type { FileEdit } from "../files/file-repository.ts";
import { placement } from "../folders/placement.ts";
import type { SqlClient } from "../db/sql-client.ts";

export const RETENTION_DAYS = 30;
const RETENTION_MS = RETENTION_DAYS * 86_400_000;

/** When a file deleted at `deletedAt` is removed for good (restore is refused from then on). */
export function purgeAt(deletedAt: string): string {
  return isoAt(Date.parse(deletedAt) + RETENTION_MS);
}

/** Files deleted at or before this moment are past retention: purged, or about to be. */
export function retentionCutoff(nowMs: number): string {
  return isoAt(nowMs - RETENTION_MS);
}
export const MAX_USER_DESCRIPTION = 10_000;

export interface FilePatch {
  title?: string | null;
  tags?: string[];
  user_description?: string | null;
}

export async function updateFile(ctx: LibraryDeps, orgId: string, ref: string, patch: FilePatch) {
  const row = await ctx.files.find(orgId, ref);
  const edit: FileEdit = {};
  if (patch.title !== undefined) {
    const title = patch.title === null ? null : patch.title.trim() || null;
    if (title !== null && title.length > MAX_TITLE_LENGTH) throw badRequest(`title: must be at most ${MAX_TITLE_LENGTH} characters`);
    edit.title = title;
  }
  if (patch.tags !== undefined) edit.tags = parseTags(patch.tags);
  if (patch.user_description !== undefined) {
    const text = patch.user_description;
    if (text !== null && text.length > MAX_USER_DESCRIPTION) throw badRequest(`user_description: must be at most ${MAX_USER_DESCRIPTION} characters`);
    // null (or blank) hands the description back to the AI's upload_description.
    edit.userDescription = text === null || !text.trim() ? null : text;
  }
  await ctx.files.edit(row.id, edit);
  const updated = await ctx.files.find(orgId, row.id);
  return {
    id: updated.id,
    title: updated.title,
    tags: tagsOf(updated),
    user_description: updated.user_description,
    upload_description: updated.upload_description,
    updated_at: updated.updated_at,
  };
}

/** Inside the caller's transaction `tx`: the kind's busy check and the delete commit together. */
async function markDeleted(ctx: LibraryDeps, tx: SqlClient, row: FileRow): Promise<string> {
  const busy = (await ctx.kinds.for(row.media_type)?.busy?.(tx, row.id))?.[0]?.reason;
  if (busy) throw new ApiError("FILE_BUSY", `file ${row.id} cannot be deleted while ${busy}; try again when it finishes`);
  return ctx.files.withTx(tx).softDelete(row.id);
}

export async function deleteFile(ctx: LibraryDeps, orgId: string, ref: string) {
  const row = await ctx.files.find(orgId, ref);
  const deletedAt = await ctx.sql.transaction(async (tx) => markDeleted(ctx, tx, await ctx.files.withTx(tx).find(orgId, row.id)));
  return { id: row.id, deleted_at: deletedAt, message: `file deleted; it can be restored until ${purgeAt(deletedAt)}` };
}

interface BatchEntry {
  id: string;
  status: "deleted" | "failed";
  message: string;
  deleted_at: string | null;
}

/** Deletes each file on its own: one failure never blocks the others. */
export async function batchDeleteFiles(ctx: LibraryDeps, orgId: string, ids: string[]) {
  const lowered = ids.map((id) => id.toLowerCase());
  if (new Set(lowered).size !== lowered.length) throw badRequest("file_ids: must be unique");
  const deleted: BatchEntry[] = [];
  const skipped: BatchEntry[] = [];
  const failed: BatchEntry[] = [];
  for (const id of lowered) {
    const row = await ctx.files.ofOrg(orgId, id);
    if (!row) {
      failed.push({ id, status: "failed", message: "file not found", deleted_at: null });
      continue;
    }
    if (row.deleted_at) {
      skipped.push({ id, status: "deleted", message: "already deleted", deleted_at: row.deleted_at });
      continue;
    }
    try {
      const at = await ctx.sql.transaction((tx) => markDeleted(ctx, tx, row));
      deleted.push({ id, status: "deleted", message: "deleted", deleted_at: at });
    } catch (err) {
      failed.push({ id, status: "failed", message: err instanceof ApiError ? err.detail : "could not delete", deleted_at: null });
    }
  }
  return {
    deleted,
    skipped,
    failed,
    summary: { total: ids.length, deleted: deleted.length, skipped: skipped.length, failed: failed.length },
  };
}

/** Undoes a soft delete within the retention window (extension). */
export async function restoreFile(ctx: LibraryDeps, orgId: string, ref: string) {
  const row = await ctx.files.find(orgId, ref, { includeDeleted: true });
  if (!row.deleted_at) throw new ApiError("FILE_NOT_DELETED", `file ${row.id} is not deleted`);
  if (row.deleted_at <= retentionCutoff(ctx.clock.now())) {
    throw new ApiError("FILE_NOT_FOUND", `file ${row.id} was deleted more than ${RETENTION_DAYS} days ago and is being purged`);
  }
  const at = await ctx.files.restore(row.id);
  return { id: row.id, restored_at: at, message: "file restored" };
}

/**
 * Removes files deleted more than RETENTION_DAYS ago: first their blobs and derived data
 * (variants, vectors), then their rows (index rows go by trigger, derived rows by cascade). A blob that cannot be removed keeps its
 * row for the next run, so nothing is left orphaned in the store.
 */
export async function purgeDeletedFiles(ctx: LibraryDeps): Promise<number> {
  const cutoff = retentionCutoff(ctx.clock.now());
  const due = await ctx.files.deletedBefore(cutoff, 1000);
  let purged = 0;
  for (const file of due) {
    try {
      // Every record owns its object (keys are per file or per upload intent), so it goes too.
      await purgeDerivedData(ctx, file.id);
      if (file.blob_key) await ctx.blobs.delete(file.blob_key);
      await ctx.files.purge(file.id, cutoff);
      purged += 1;
    } catch (err) {
      ctx.log.warn("could not purge a deleted file; will retry", { file_id: file.id, err });
    }
  }
  if (purged) ctx.log.info("purged deleted files", { count: purged });
  return purged;
}

export interface MoveTarget {
  /** Into this folder (and its project); null takes the files out of their folders. */
  folder_id?: string | null;
  /** To the top level of this project (or, with folder_id, a check that the folder is in it). */
  project_id?: string;
}

interface MoveEntry {
  id: string;
  status: "moved" | "failed";
  message: string;
}

/**
 * Moves files into a folder or to a project's top level (POST /files/batch-move, extension). The
 * target is checked once (404 when it is not in the organization); each file is then moved on its
 * own, and one missing file never blocks the others.
 */
export async function batchMoveFiles(ctx: LibraryDeps, orgId: string, ids: string[], target: MoveTarget) {
  const lowered = ids.map((id) => id.toLowerCase());
  if (new Set(lowered).size !== lowered.length) throw badRequest("file_ids: must be unique");
  if (target.folder_id === undefined && target.project_id === undefined) throw badRequest("give folder_id (a folder, or null for no folder) or project_id");
  // folder_id null without a project: out of the folder, staying in each file's own project.
  const fixed = target.folder_id || target.project_id ? await placement(ctx.sql, orgId, target.folder_id, target.project_id) : null;
  const moved: MoveEntry[] = [];
  const failed: MoveEntry[] = [];
  await ctx.sql.transaction(async (tx) => {
    const files = ctx.files.withTx(tx);
    for (const id of lowered) {
      const row = await files.ofOrg(orgId, id);
      if (!row || row.deleted_at) {
        failed.push({ id, status: "failed", message: "file not found" });
        continue;
      }
      const to = fixed ?? { projectId: row.project_id, folderId: null };
      await files.place(row.id, to.projectId, to.folderId);
      moved.push({ id, status: "moved", message: to.folderId ? `moved into folder ${to.folderId}` : `moved to the top level of project ${to.projectId}` });
    }
  });
  return {
    moved,
    failed,
    project_id: fixed?.projectId ?? null,
    folder_id: fixed?.folderId ?? null,
    summary: { total: ids.length, moved: moved.length, failed: failed.length },
  };
}
