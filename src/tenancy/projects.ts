/**
 * Projects: an organization's workspaces. Owns the spec's rules: the Default project (created
 * with the organization, listed first, never renamed or deleted), case-insensitive unique
 * names, the 50-project limit, live folder/file counts, and refusing to delete a non-empty one.
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { nameKey, validName } from "./names.ts";

export const MAX_PROJECTS_PER_ORG = 50;
export const DEFAULT_PROJECT_NAME = "Default";
export const PROJECT_TYPES = ["general", "real_estate"] as const;
export type ProjectType = (typeof PROJECT_TYPES)[number];

export interface Project {
  id: string;
  name: string;
  description: string | null;
  icon: string | null;
  color: string | null;
  project_type: ProjectType;
  is_default: boolean;
  folder_count: number;
  file_count: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface ProjectInput {
  name: string;
  description?: string | null;
  icon?: string | null;
  color?: string | null;
  project_type?: ProjectType;
}

export type ProjectPatch = Partial<ProjectInput>;

type ProjectRow = Omit<Project, "is_default"> & { is_default: number };

const SELECT_PROJECT = `
  SELECT p.id, p.name, p.description, p.icon, p.color, p.project_type, p.is_default, p.created_by,
         p.created_at, p.updated_at,
         (SELECT count(*) FROM folders f WHERE f.project_id = p.id) AS folder_count,
         (SELECT count(*) FROM files x WHERE x.project_id = p.id AND x.deleted_at IS NULL) AS file_count
  FROM projects p`;

const toProject = (row: ProjectRow): Project => ({ ...row, is_default: row.is_default === 1 });

/** Called inside the organization's creation transaction. */
export function createDefaultProject(db: Database, clock: Clock, orgId: string): string {
  const id = crypto.randomUUID();
  const now = isoAt(clock.now());
  db.query(
    `INSERT INTO projects (id, org_id, name, name_key, project_type, is_default, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'general', 1, ?, ?)`,
  ).run(id, orgId, DEFAULT_PROJECT_NAME, nameKey(DEFAULT_PROJECT_NAME), now, now);
  return id;
}

export function defaultProjectId(db: Database, orgId: string): string {
  const row = db.query<{ id: string }, [string]>("SELECT id FROM projects WHERE org_id = ? AND is_default = 1").get(orgId);
  if (!row) throw new Error(`organization ${orgId} has no Default project`);
  return row.id;
}

export function getProject(db: Database, orgId: string, id: string): Project {
  const row = db.query<ProjectRow, [string, string]>(`${SELECT_PROJECT} WHERE p.id = ? AND p.org_id = ?`).get(id, orgId);
  if (!row) throw projectNotFound(id);
  return toProject(row);
}

export function listProjects(db: Database, orgId: string, limit: number, offset: number): { items: Project[]; total: number } {
  const total = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM projects WHERE org_id = ?").get(orgId)?.n ?? 0;
  const items = db
    .query<ProjectRow, [string, number, number]>(
      `${SELECT_PROJECT} WHERE p.org_id = ? ORDER BY p.is_default DESC, p.name_key, p.id LIMIT ? OFFSET ?`,
    )
    .all(orgId, limit, offset)
    .map(toProject);
  return { items, total };
}

export function createProject(db: Database, clock: Clock, orgId: string, createdBy: string | null, input: ProjectInput): Project {
  const name = validName("name", input.name);
  const id = crypto.randomUUID();
  const now = isoAt(clock.now());
  db.transaction(() => {
    const count = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM projects WHERE org_id = ?").get(orgId)?.n ?? 0;
    if (count >= MAX_PROJECTS_PER_ORG) {
      throw new ApiError("PROJECT_LIMIT_REACHED", `the organization already has ${MAX_PROJECTS_PER_ORG} projects, the maximum`);
    }
    assertNameFree(db, orgId, name, null);
    db.query(
      `INSERT INTO projects (id, org_id, name, name_key, description, icon, color, project_type, is_default,
         created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
    ).run(
      id,
      orgId,
      name,
      nameKey(name),
      input.description ?? null,
      input.icon ?? null,
      input.color ?? null,
      input.project_type ?? "general",
      createdBy,
      now,
      now,
    );
  }).immediate();
  return getProject(db, orgId, id);
}

export function updateProject(db: Database, clock: Clock, orgId: string, id: string, patch: ProjectPatch): Project {
  db.transaction(() => {
    const current = getProject(db, orgId, id);
    const sets: string[] = [];
    const values: (string | null)[] = [];
    if (patch.name !== undefined) {
      const name = validName("name", patch.name);
      if (name !== current.name) {
        if (current.is_default) throw new ApiError("BUSINESS_RULE_VIOLATION", "the Default project cannot be renamed");
        assertNameFree(db, orgId, name, id);
        sets.push("name = ?", "name_key = ?");
        values.push(name, nameKey(name));
      }
    }
    for (const field of ["description", "icon", "color", "project_type"] as const) {
      if (patch[field] !== undefined) {
        sets.push(`${field} = ?`);
        values.push(patch[field] ?? null);
      }
    }
    if (sets.length === 0) return;
    sets.push("updated_at = ?");
    values.push(isoAt(clock.now()));
    db.query(`UPDATE projects SET ${sets.join(", ")} WHERE id = ? AND org_id = ?`).run(...values, id, orgId);
  }).immediate();
  return getProject(db, orgId, id);
}

export function deleteProject(db: Database, orgId: string, id: string): void {
  db.transaction(() => {
    const project = getProject(db, orgId, id);
    if (project.is_default) throw new ApiError("BUSINESS_RULE_VIOLATION", "the Default project cannot be deleted");
    const trashed = db
      .query<{ n: number }, [string]>("SELECT count(*) AS n FROM files WHERE project_id = ? AND deleted_at IS NOT NULL")
      .get(id)?.n ?? 0;
    if (project.folder_count > 0 || project.file_count > 0 || trashed > 0) {
      const parts = [`${project.folder_count} folder(s)`, `${project.file_count} file(s)`];
      if (trashed > 0) parts.push(`${trashed} deleted file(s) still recoverable`);
      throw new ApiError("PROJECT_NOT_EMPTY", `project "${project.name}" is not empty: it holds ${parts.join(", ")}`);
    }
    db.query("DELETE FROM projects WHERE id = ? AND org_id = ?").run(id, orgId);
  }).immediate();
}

function assertNameFree(db: Database, orgId: string, name: string, exceptId: string | null): void {
  const clash = db
    .query<{ id: string; name: string }, [string, string]>("SELECT id, name FROM projects WHERE org_id = ? AND name_key = ?")
    .get(orgId, nameKey(name));
  if (clash && clash.id !== exceptId) {
    throw new ApiError("PROJECT_NAME_EXISTS", `a project named "${clash.name}" already exists (names are compared case-insensitively)`);
  }
}

export function projectNotFound(id: string) {
  return new ApiError("PROJECT_NOT_FOUND", `project ${id} not found`);
}
