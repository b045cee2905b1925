/**
 * Folders: a tree inside a project (the spec refers to folder_id and folder_count; the
 * endpoints are Mediabox's extension). Owns the tree rules: sibling names unique
 * case-insensitively, bounded depth, no cycles, moves that carry the whole subtree and its
 * files to another project, and deletion only when empty. On the data-access port
 * (docs/scale-out.md): a change to a project's folders first locks the project's row (PostgreSQL),
 * so two processes cannot both take one sibling name or nest past the depth limit.
 */
import { moveFolderTreeFiles } from "../files/folder-moves.ts";
import { isoAt, type Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { ApiError, badRequest } from "../errors.ts";
import { defaultProjectId, getProject } from "../tenancy/projects.ts";
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

async function ancestry(db: SqlClient, id: string): Promise<FolderRef[]> {
  const rows = await db.all<FolderRef & { depth: number }>(
    `WITH RECURSIVE up(id, name, parent_id, depth) AS (
       SELECT id, name, parent_id, 0 FROM folders WHERE id = ?
       UNION ALL
       SELECT f.id, f.name, f.parent_id, up.depth + 1 FROM folders f JOIN up ON f.id = up.parent_id
     )
     SELECT id, name, depth FROM up ORDER BY depth DESC`,
    [id],
  );
  return rows.map(({ id, name }) => ({ id, name }));
}

async function withPath(db: SqlClient, row: FolderRow): Promise<Folder> {
  return { ...row, path: await ancestry(db, row.id) };
}

export async function getFolder(db: SqlClient, orgId: string, id: string): Promise<Folder> {
  const row = await db.one<FolderRow>(`${SELECT_FOLDER} WHERE f.id = ? AND f.org_id = ?`, [id, orgId]);
  if (!row) throw folderNotFound(id);
  return withPath(db, row);
}

export interface FolderListing {
  projectId?: string | undefined;
  parentId?: string | undefined;
}

/** Children of a folder, or the top-level folders of a project (the Default project when neither is given). */
export async function listFolders(
  db: SqlClient,
  orgId: string,
  where: FolderListing,
  limit: number,
  offset: number,
): Promise<{ items: Folder[]; total: number }> {
  let clause: string;
  let arg: string;
  if (where.parentId) {
    const parent = await getFolder(db, orgId, where.parentId);
    if (where.projectId && where.projectId !== parent.project_id) {
      throw badRequest(`parent_id: folder ${parent.id} belongs to project ${parent.project_id}, not ${where.projectId}`);
    }
    clause = "f.parent_id = ?";
    arg = parent.id;
  } else {
    const projectId = where.projectId ?? (await defaultProjectId(db, orgId));
    await getProject(db, orgId, projectId);
    clause = "f.project_id = ? AND f.parent_id IS NULL";
    arg = projectId;
  }
  const total = (await db.one<{ n: number }>(`SELECT count(*) AS n FROM folders f WHERE f.org_id = ? AND ${clause}`, [orgId, arg]))?.n ?? 0;
  const rows = await db.all<FolderRow>(`${SELECT_FOLDER} WHERE f.org_id = ? AND ${clause} ORDER BY f.name_key, f.id LIMIT ? OFFSET ?`, [orgId, arg, limit, offset]);
  const items: Folder[] = [];
  for (const row of rows) items.push(await withPath(db, row));
  return { items, total };
}

export interface FolderInput {
  name: string;
  project_id?: string | null | undefined;
  parent_id?: string | null | undefined;
}

/** A project's folders change one transaction at a time (PostgreSQL; SQLite's transaction already excludes other writers). */
async function lockProject(tx: SqlClient, projectId: string): Promise<void> {
  await tx.one(`SELECT id FROM projects WHERE id = ? ${tx.dialect.forUpdate}`, [projectId]);
}

export async function createFolder(db: SqlClient, clock: Clock, orgId: string, createdBy: string | null, input: FolderInput): Promise<Folder> {
  const name = validName("name", input.name);
  const id = crypto.randomUUID();
  const now = isoAt(clock.now());
  return db.transaction(async (tx) => {
    const { projectId, parentId } = await placement(tx, orgId, input.project_id ?? null, input.parent_id ?? null);
    await lockProject(tx, projectId);
    if (parentId && (await ancestry(tx, parentId)).length >= MAX_FOLDER_DEPTH) {
      throw new ApiError("FOLDER_DEPTH_EXCEEDED", `folders can be nested at most ${MAX_FOLDER_DEPTH} levels deep`);
    }
    await assertSiblingNameFree(tx, projectId, parentId, name, null);
    await tx.run(
      `INSERT INTO folders (id, org_id, project_id, parent_id, name, name_key, created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [id, orgId, projectId, parentId, name, nameKey(name), createdBy, now, now],
    );
    return getFolder(tx, orgId, id);
  });
}

export interface FolderPatch {
  name?: string | undefined;
  /** null moves the folder to the top level of its (possibly new) project. */
  parent_id?: string | null | undefined;
  /** Moves the folder, its subtree and their files to another project (top level unless parent_id is given). */
  project_id?: string | undefined;
}

/** A folder moved to another project takes its subtree and their files along, in the same transaction. */
export async function updateFolder(db: SqlClient, clock: Clock, orgId: string, id: string, patch: FolderPatch): Promise<Folder> {
  return db.transaction(async (tx) => {
    const current = await getFolder(tx, orgId, id);
    const name = patch.name === undefined ? current.name : validName("name", patch.name);
    const moving = patch.parent_id !== undefined || (patch.project_id !== undefined && patch.project_id !== current.project_id);
    let projectId = current.project_id;
    let parentId = current.parent_id;
    if (moving) {
      const requestedParent = patch.parent_id === undefined ? null : patch.parent_id;
      ({ projectId, parentId } = await placement(tx, orgId, patch.project_id ?? (requestedParent ? null : current.project_id), requestedParent));
    }
    // Both projects, in a fixed order, so two moves between the same two projects cannot deadlock.
    for (const locked of [...new Set([current.project_id, projectId])].sort()) await lockProject(tx, locked);
    if (moving && parentId) {
      const parentPath = await ancestry(tx, parentId);
      if (parentPath.some((f) => f.id === id)) {
        throw new ApiError("BUSINESS_RULE_VIOLATION", "a folder cannot be moved into itself or one of its subfolders");
      }
      if (parentPath.length + (await subtreeHeight(tx, id)) > MAX_FOLDER_DEPTH) {
        throw new ApiError("FOLDER_DEPTH_EXCEEDED", `folders can be nested at most ${MAX_FOLDER_DEPTH} levels deep`);
      }
    }
    if (name === current.name && projectId === current.project_id && parentId === current.parent_id) return current;
    await assertSiblingNameFree(tx, projectId, parentId, name, id);
    const now = isoAt(clock.now());
    await tx.run("UPDATE folders SET name = ?, name_key = ?, parent_id = ?, updated_at = ? WHERE id = ?", [name, nameKey(name), parentId, now, id]);
    if (projectId !== current.project_id) {
      const subtree = `WITH RECURSIVE sub(id) AS (
          SELECT ? UNION ALL SELECT f.id FROM folders f JOIN sub ON f.parent_id = sub.id)`;
      await tx.run(`${subtree} UPDATE folders SET project_id = ?, updated_at = ? WHERE id IN (SELECT id FROM sub)`, [id, projectId, now]);
      await moveFolderTreeFiles(tx, id, projectId, now);
    }
    return getFolder(tx, orgId, id);
  });
}

export async function deleteFolder(db: SqlClient, orgId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await tx.one<{ project_id: string }>("SELECT project_id FROM folders WHERE id = ? AND org_id = ?", [id, orgId]);
    if (!row) throw folderNotFound(id);
    // Counted under the lock, so a subfolder another process adds meanwhile waits for the answer.
    await lockProject(tx, row.project_id);
    const folder = await getFolder(tx, orgId, id);
    const trashed = (await tx.one<{ n: number }>("SELECT count(*) AS n FROM files WHERE folder_id = ? AND deleted_at IS NOT NULL", [id]))?.n ?? 0;
    if (folder.folder_count > 0 || folder.file_count > 0 || trashed > 0) {
      const parts = [`${folder.folder_count} subfolder(s)`, `${folder.file_count} file(s)`];
      if (trashed > 0) parts.push(`${trashed} deleted file(s) still recoverable`);
      throw new ApiError("FOLDER_NOT_EMPTY", `folder "${folder.name}" is not empty: it holds ${parts.join(", ")}`);
    }
    await tx.run("DELETE FROM folders WHERE id = ? AND org_id = ?", [id, orgId]);
  });
}

/** Resolves where a folder goes: inside parent (whose project wins) or at the top of a project. */
async function placement(
  db: SqlClient,
  orgId: string,
  projectId: string | null,
  parentId: string | null,
): Promise<{ projectId: string; parentId: string | null }> {
  if (parentId) {
    const parent = await getFolder(db, orgId, parentId);
    if (projectId && projectId !== parent.project_id) {
      throw badRequest(`parent_id: folder ${parent.id} belongs to project ${parent.project_id}, not ${projectId}`);
    }
    return { projectId: parent.project_id, parentId: parent.id };
  }
  const resolved = projectId ?? (await defaultProjectId(db, orgId));
  await getProject(db, orgId, resolved);
  return { projectId: resolved, parentId: null };
}

/** Levels below the folder (0 for a leaf), counting the folder itself as 1. */
async function subtreeHeight(db: SqlClient, id: string): Promise<number> {
  const row = await db.one<{ h: number }>(
    `WITH RECURSIVE sub(id, depth) AS (
       SELECT ?, 1 UNION ALL SELECT f.id, sub.depth + 1 FROM folders f JOIN sub ON f.parent_id = sub.id)
     SELECT max(depth) AS h FROM sub`,
    [id],
  );
  return row?.h ?? 1;
}

async function assertSiblingNameFree(db: SqlClient, projectId: string, parentId: string | null, name: string, exceptId: string | null): Promise<void> {
  const clash = await db.one<{ id: string; name: string }>(
    "SELECT id, name FROM folders WHERE project_id = ? AND coalesce(parent_id, '') = ? AND name_key = ?",
    [projectId, parentId ?? "", nameKey(name)],
  );
  if (clash && clash.id !== exceptId) {
    throw new ApiError("FOLDER_NAME_EXISTS", `a folder named "${clash.name}" already exists here (names are compared case-insensitively)`);
  }
}
