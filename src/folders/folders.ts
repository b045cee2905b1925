/**
 * Folders: a tree inside a project (the spec refers to folder_id and folder_count; the
 * endpoints are Mediabox's extension). Owns the tree rules: sibling names unique
 * case-insensitively, bounded depth, no cycles, moves that carry the whole subtree and its
 * files to another project, and deletion only when empty.
 */
import type { FileRepository } from "../files/file-repository.ts";
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";
import { ApiError, badRequest } from "../errors.ts";
import { placement as filePlacement } from "./placement.ts";
import { nameKey, validName } from "../tenancy/names.ts";

export const MAX_FOLDER_DEPTH = 20;

export interface FolderRef {
  id: string;
  name: string;
}

export interface Folder {
  id: string;
  name: string;
  project_id: string;
  parent_id: string | null;
  /** From the project root down to this folder, inclusive. */
  path: FolderRef[];
  /** Direct subfolders. */
  folder_count: number;
  /** Files directly in this folder (not deleted). */
  file_count: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

type FolderRow = Omit<Folder, "path">;

const SELECT_FOLDER = `
  SELECT f.id, f.name, f.project_id, f.parent_id, f.created_by, f.created_at, f.updated_at,
         (SELECT count(*) FROM folders c WHERE c.parent_id = f.id) AS folder_count,
         (SELECT count(*) FROM files x WHERE x.folder_id = f.id AND x.deleted_at IS NULL) AS file_count
  FROM folders f`;

export function folderNotFound(id: string) {
  return new ApiError("FOLDER_NOT_FOUND", `folder ${id} not found`);
}

function ancestry(db: Database, id: string): FolderRef[] {
  const rows = db
    .query<FolderRef & { depth: number }, [string]>(
      `WITH RECURSIVE up(id, name, parent_id, depth) AS (
         SELECT id, name, parent_id, 0 FROM folders WHERE id = ?
         UNION ALL
         SELECT f.id, f.name, f.parent_id, up.depth + 1 FROM folders f JOIN up ON f.id = up.parent_id
       )
       SELECT id, name, depth FROM up ORDER BY depth DESC`,
    )
    .all(id);
  return rows.map(({ id, name }) => ({ id, name }));
}

function withPath(db: Database, row: FolderRow): Folder {
  return { ...row, path: ancestry(db, row.id) };
}

export function getFolder(db: Database, orgId: string, id: string): Folder {
  const row = db.query<FolderRow, [string, string]>(`${SELECT_FOLDER} WHERE f.id = ? AND f.org_id = ?`).get(id, orgId);
  if (!row) throw folderNotFound(id);
  return withPath(db, row);
}

export interface FolderListing {
  projectId?: string | undefined;
  parentId?: string | undefined;
}

/** Children of a folder, or the top-level folders of a project (the Default project when neither is given). */
export function listFolders(
  db: Database,
  orgId: string,
  where: FolderListing,
  limit: number,
  offset: number,
): { items: Folder[]; total: number } {
  let clause: string;
  let arg: string;
  if (where.parentId) {
    const parent = getFolder(db, orgId, where.parentId);
    if (where.projectId && where.projectId !== parent.project_id) {
      throw badRequest(`parent_id: folder ${parent.id} belongs to project ${parent.project_id}, not ${where.projectId}`);
    }
    clause = "f.parent_id = ?";
    arg = parent.id;
  } else {
    const projectId = filePlacement(db, orgId, null, where.projectId).projectId;
    clause = "f.project_id = ? AND f.parent_id IS NULL";
    arg = projectId;
  }
  const total = db.query<{ n: number }, [string, string]>(`SELECT count(*) AS n FROM folders f WHERE f.org_id = ? AND ${clause}`).get(orgId, arg)?.n ?? 0;
  const rows = db
    .query<FolderRow, [string, string, number, number]>(
      `${SELECT_FOLDER} WHERE f.org_id = ? AND ${clause} ORDER BY f.name_key, f.id LIMIT ? OFFSET ?`,
    )
    .all(orgId, arg, limit, offset);
  return { items: rows.map((r) => withPath(db, r)), total };
}

export interface FolderInput {
  name: string;
  project_id?: string | null | undefined;
  parent_id?: string | null | undefined;
}

export function createFolder(db: Database, clock: Clock, orgId: string, createdBy: string | null, input: FolderInput): Folder {
  const name = validName("name", input.name);
  const id = crypto.randomUUID();
  const now = isoAt(clock.now());
  db.transaction(() => {
    const { projectId, parentId } = placement(db, orgId, input.project_id ?? null, input.parent_id ?? null);
    if (parentId && ancestry(db, parentId).length >= MAX_FOLDER_DEPTH) {
      throw new ApiError("FOLDER_DEPTH_EXCEEDED", `folders can be nested at most ${MAX_FOLDER_DEPTH} levels deep`);
    }
    assertSiblingNameFree(db, projectId, parentId, name, null);
    db.query(
      `INSERT INTO folders (id, org_id, project_id, parent_id, name, name_key, created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(id, orgId, projectId, parentId, name, nameKey(name), createdBy, now, now);
  }).immediate();
  return getFolder(db, orgId, id);
}

export interface FolderPatch {
  name?: string | undefined;
  /** null moves the folder to the top level of its (possibly new) project. */
  parent_id?: string | null | undefined;
  /** Moves the folder, its subtree and their files to another project (top level unless parent_id is given). */
  project_id?: string | undefined;
}

/** `files` moves the folder's files along when the folder changes project. */
export function updateFolder(db: Database, clock: Clock, files: FileRepository, orgId: string, id: string, patch: FolderPatch): Folder {
  db.transaction(() => {
    const current = getFolder(db, orgId, id);
    const name = patch.name === undefined ? current.name : validName("name", patch.name);
    const moving = patch.parent_id !== undefined || (patch.project_id !== undefined && patch.project_id !== current.project_id);
    let projectId = current.project_id;
    let parentId = current.parent_id;
    if (moving) {
      const requestedParent = patch.parent_id === undefined ? null : patch.parent_id;
      ({ projectId, parentId } = placement(db, orgId, patch.project_id ?? (requestedParent ? null : current.project_id), requestedParent));
      if (parentId) {
        const parentPath = ancestry(db, parentId);
        if (parentPath.some((f) => f.id === id)) {
          throw new ApiError("BUSINESS_RULE_VIOLATION", "a folder cannot be moved into itself or one of its subfolders");
        }
        if (parentPath.length + subtreeHeight(db, id) > MAX_FOLDER_DEPTH) {
          throw new ApiError("FOLDER_DEPTH_EXCEEDED", `folders can be nested at most ${MAX_FOLDER_DEPTH} levels deep`);
        }
      }
    }
    if (name === current.name && projectId === current.project_id && parentId === current.parent_id) return;
    assertSiblingNameFree(db, projectId, parentId, name, id);
    const now = isoAt(clock.now());
    db.query("UPDATE folders SET name = ?, name_key = ?, parent_id = ?, updated_at = ? WHERE id = ?").run(
      name,
      nameKey(name),
      parentId,
      now,
      id,
    );
    if (projectId !== current.project_id) {
      const subtree = `WITH RECURSIVE sub(id) AS (
          SELECT ? UNION ALL SELECT f.id FROM folders f JOIN sub ON f.parent_id = sub.id)`;
      db.query(`${subtree} UPDATE folders SET project_id = ?, updated_at = ? WHERE id IN (SELECT id FROM sub)`).run(id, projectId, now);
      files.moveFolderTreeToProject(id, projectId);
    }
  }).immediate();
  return getFolder(db, orgId, id);
}

export function deleteFolder(db: Database, orgId: string, id: string): void {
  db.transaction(() => {
    const folder = getFolder(db, orgId, id);
    const trashed = db
      .query<{ n: number }, [string]>("SELECT count(*) AS n FROM files WHERE folder_id = ? AND deleted_at IS NOT NULL")
      .get(id)?.n ?? 0;
    if (folder.folder_count > 0 || folder.file_count > 0 || trashed > 0) {
      const parts = [`${folder.folder_count} subfolder(s)`, `${folder.file_count} file(s)`];
      if (trashed > 0) parts.push(`${trashed} deleted file(s) still recoverable`);
      throw new ApiError("FOLDER_NOT_EMPTY", `folder "${folder.name}" is not empty: it holds ${parts.join(", ")}`);
    }
    db.query("DELETE FROM folders WHERE id = ? AND org_id = ?").run(id, orgId);
  }).immediate();
}

/** Resolves where a folder goes: inside parent (whose project wins) or at the top of a project. */
function placement(
  db: Database,
  orgId: string,
  projectId: string | null,
  parentId: string | null,
): { projectId: string; parentId: string | null } {
  if (parentId) {
    const parent = getFolder(db, orgId, parentId);
    if (projectId && projectId !== parent.project_id) {
      throw badRequest(`parent_id: folder ${parent.id} belongs to project ${parent.project_id}, not ${projectId}`);
    }
    return { projectId: parent.project_id, parentId: parent.id };
  }
  return { projectId: filePlacement(db, orgId, null, projectId).projectId, parentId: null };
}

/** Levels below the folder (0 for a leaf), counting the folder itself as 1. */
function subtreeHeight(db: Database, id: string): number {
  return (
    db
      .query<{ h: number }, [string]>(
        `WITH RECURSIVE sub(id, depth) AS (
           SELECT ?, 1 UNION ALL SELECT f.id, sub.depth + 1 FROM folders f JOIN sub ON f.parent_id = sub.id)
         SELECT max(depth) AS h FROM sub`,
      )
      .get(id)?.h ?? 1
  );
}

function assertSiblingNameFree(db: Database, projectId: string, parentId: string | null, name: string, exceptId: string | null): void {
  const clash = db
    .query<{ id: string; name: string }, [string, string, string]>(
      "SELECT id, name FROM folders WHERE project_id = ? AND ifnull(parent_id, '') = ? AND name_key = ?",
    )
    .get(projectId, parentId ?? "", nameKey(name));
  if (clash && clash.id !== exceptId) {
    throw new ApiError("FOLDER_NAME_EXISTS", `a folder named "${clash.name}" already exists here (names are compared case-insensitively)`);
  }
}
