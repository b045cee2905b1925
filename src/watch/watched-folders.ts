/**
 * Watched folders and the files taken from them: the only writer of `watched_folders` and
 * `watch_items`. A watched folder maps a directory of the server to an organization, a project and
 * optionally a folder; it comes from MEDIABOX_WATCH_DIR (`DIR=ORG[/PROJECT[/FOLDER/…]]`, several
 * separated by `;`) or from `mediabox watch DIR --org ...`. Only the server's administrator names
 * directories: the API lists them, it never adds one (a web user must not make the server read
 * its own disk).
 *
 * On the data-access port (docs/scale-out.md).
 */
import { resolve } from "node:path";
import { isoAt, type Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { ApiError, forTenantsOrNull } from "../errors.ts";
import { createFolder } from "../folders/folders.ts";
import { defaultProjectId } from "../tenancy/projects.ts";
import { findOrganization } from "../tenancy/organizations.ts";
import { nameKey } from "../tenancy/names.ts";
import type { WatchMapping } from "../config.ts";

/** A mapping names an organization, project or folder that cannot be used. */
export class WatchSettingError extends Error {
  override name = "WatchSettingError";
}

export interface WatchedFolderRow {
  id: string;
  org_id: string;
  path: string;
  project_id: string;
  folder_id: string | null;
  origin: "setting" | "cli";
  active: number;
  created_at: string;
  last_scan_at: string | null;
  last_error: string | null;
}

async function projectByNameOrId(db: SqlClient, orgId: string, ref: string | null): Promise<string> {
  if (!ref) return defaultProjectId(db, orgId);
  const row = await db.one<{ id: string }>("SELECT id FROM projects WHERE org_id = ? AND (id = ? OR name_key = ?)", [orgId, ref.toLowerCase(), nameKey(ref)]);
  if (!row) throw new WatchSettingError(`no project "${ref}" in the organization`);
  return row.id;
}

async function folderNamed(db: SqlClient, projectId: string, parentId: string | null, name: string): Promise<string | null> {
  const row = await db.one<{ id: string }>("SELECT id FROM folders WHERE project_id = ? AND coalesce(parent_id, '') = ? AND name_key = ?", [projectId, parentId ?? "", nameKey(name.trim())]);
  return row?.id ?? null;
}

/** The folder at `path` (names below `parentId`, or the project's top level), created where missing. */
export async function ensureFolderPath(db: SqlClient, clock: Clock, orgId: string, projectId: string, parentId: string | null, path: string[]): Promise<string | null> {
  let current = parentId;
  for (const name of path) {
    let found = await folderNamed(db, projectId, current, name);
    if (!found) {
      try {
        found = (await createFolder(db, clock, orgId, null, current ? { name, parent_id: current } : { name, project_id: projectId })).id;
      } catch (err) {
        // Another file of the same folder (or another process) created it meanwhile.
        if (!(err instanceof ApiError && err.code === "FOLDER_NAME_EXISTS")) throw err;
        found = (await folderNamed(db, projectId, current, name))!;
      }
    }
    current = found;
  }
  return current;
}

/**
 * Records (or updates) the mapping; the organization must exist, the project too, folders are
 * created (each in its own transaction: a name taken meanwhile is found, not refused).
 */
export async function addWatchedFolder(db: SqlClient, clock: Clock, mapping: WatchMapping, origin: "setting" | "cli"): Promise<WatchedFolderRow> {
  const org = await findOrganization(db, mapping.org);
  if (!org) throw new WatchSettingError(`${mapping.path}: no organization named "${mapping.org}"`);
  const projectId = await projectByNameOrId(db, org.id, mapping.project);
  let folderId: string | null;
  try {
    folderId = mapping.folder ? await ensureFolderPath(db, clock, org.id, projectId, null, mapping.folder.split("/")) : null;
  } catch (err) {
    throw new WatchSettingError(`${mapping.path}: folder "${mapping.folder}": ${err instanceof ApiError ? err.message : String(err)}`);
  }
  return (await db.one<WatchedFolderRow>(
    `INSERT INTO watched_folders (id, org_id, path, project_id, folder_id, origin, active, created_at)
     VALUES (?, ?, ?, ?, ?, ?, 1, ?)
     ON CONFLICT (path) DO UPDATE SET org_id = excluded.org_id, project_id = excluded.project_id, folder_id = excluded.folder_id,
       origin = excluded.origin, active = 1, last_error = NULL
     RETURNING *`,
    [crypto.randomUUID(), org.id, mapping.path, projectId, folderId, origin, isoAt(clock.now())],
  ))!;
}

/**
 * MEDIABOX_WATCH_DIR's mappings become the active `setting` folders; ones no longer listed stop
 * being watched. Run at start, before the watcher looks.
 */
export async function syncWatchSetting(db: SqlClient, clock: Clock, mappings: WatchMapping[]): Promise<void> {
  const listed = new Set<string>();
  for (const mapping of mappings) listed.add((await addWatchedFolder(db, clock, mapping, "setting")).path);
  const active = await db.all<{ path: string }>("SELECT path FROM watched_folders WHERE origin = 'setting' AND active = 1");
  for (const { path } of active) if (!listed.has(path)) await db.run("UPDATE watched_folders SET active = 0 WHERE path = ?", [path]);
}

/** Stops watching a directory added with `mediabox watch` (its history goes with it). */
export async function removeWatchedFolder(sql: SqlClient, path: string): Promise<boolean> {
  return (await sql.run("DELETE FROM watched_folders WHERE path = ? AND origin = 'cli'", [resolve(path)])).changes > 0;
}

export function activeWatchedFolders(sql: SqlClient): Promise<WatchedFolderRow[]> {
  return sql.all<WatchedFolderRow>("SELECT * FROM watched_folders WHERE active = 1 ORDER BY path");
}

export function allWatchedFolders(sql: SqlClient): Promise<WatchedFolderRow[]> {
  return sql.all<WatchedFolderRow>("SELECT * FROM watched_folders ORDER BY path");
}

export async function scanned(sql: SqlClient, clock: Clock, id: string, error: string | null): Promise<void> {
  await sql.run("UPDATE watched_folders SET last_scan_at = ?, last_error = ? WHERE id = ?", [isoAt(clock.now()), forTenantsOrNull(error), id]);
}

export interface WatchItemRow {
  id: string;
  watch_id: string;
  org_id: string;
  rel_path: string;
  size_bytes: number;
  file_id: string;
  status: "ingesting" | "done" | "failed";
  error: string | null;
  moved_to: string | null;
  created_at: string;
  finished_at: string | null;
}

/** Claims a file: its row is committed before the file is moved or read. */
export async function claimItem(sql: SqlClient, clock: Clock, watch: WatchedFolderRow, relPath: string, size: number): Promise<WatchItemRow> {
  const item: WatchItemRow = {
    id: crypto.randomUUID(), watch_id: watch.id, org_id: watch.org_id, rel_path: relPath, size_bytes: size, file_id: crypto.randomUUID(),
    status: "ingesting", error: null, moved_to: null, created_at: isoAt(clock.now()), finished_at: null,
  };
  await sql.run("INSERT INTO watch_items (id, watch_id, org_id, rel_path, size_bytes, file_id, status, created_at) VALUES (?, ?, ?, ?, ?, ?, 'ingesting', ?)", [
    item.id, item.watch_id, item.org_id, item.rel_path, item.size_bytes, item.file_id, item.created_at,
  ]);
  return item;
}

/** Withdraws a claim whose file was gone before it could be moved: nothing was taken, nothing to report. */
export async function withdrawItem(sql: SqlClient, id: string): Promise<void> {
  await sql.run("DELETE FROM watch_items WHERE id = ? AND status = 'ingesting'", [id]);
}

export function openItems(sql: SqlClient, watchId: string): Promise<WatchItemRow[]> {
  return sql.all<WatchItemRow>("SELECT * FROM watch_items WHERE watch_id = ? AND status = 'ingesting' ORDER BY created_at", [watchId]);
}

export async function finishItem(sql: SqlClient, clock: Clock, id: string, outcome: { status: "done" | "failed"; movedTo: string; error: string | null; fileId?: string }): Promise<void> {
  await sql.run("UPDATE watch_items SET status = ?, moved_to = ?, error = ?, file_id = coalesce(?, file_id), finished_at = ? WHERE id = ?", [
    outcome.status, outcome.movedTo, outcome.error, outcome.fileId ?? null, isoAt(clock.now()), id,
  ]);
}

/** Watched folders of an organization with their latest items, for the API and dashboard. */
export async function watchedFoldersOf(sql: SqlClient, orgId: string, itemsEach: number) {
  const folders = [];
  for (const w of await sql.all<WatchedFolderRow>("SELECT * FROM watched_folders WHERE org_id = ? ORDER BY path", [orgId])) {
    const counts = { ingesting: 0, done: 0, failed: 0 };
    for (const c of await sql.all<{ status: keyof typeof counts; n: number }>("SELECT status, count(*) AS n FROM watch_items WHERE watch_id = ? GROUP BY status", [w.id])) counts[c.status] = c.n;
    const recent = await sql.all<WatchItemRow>("SELECT * FROM watch_items WHERE watch_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?", [w.id, itemsEach]);
    folders.push({
      id: w.id,
      path: w.path,
      project_id: w.project_id,
      folder_id: w.folder_id,
      origin: w.origin,
      active: w.active === 1,
      created_at: w.created_at,
      last_scan_at: w.last_scan_at,
      last_error: w.last_error,
      counts,
      recent_items: recent.map(({ watch_id: _w, org_id: _o, ...item }) => item),
    });
  }
  return folders;
}
