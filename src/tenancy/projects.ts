/**
 * Projects: an organization's workspaces. Owns the spec's rules: the Default project (created
 * with the organization, listed first, never renamed or deleted), case-insensitive unique
 * names, the 50-project limit, live folder/file counts, and refusing to delete a non-empty one.
 * On the data-access port (docs/scale-out.md): a change to an organization's projects first locks
 * the organization's row (PostgreSQL), so two processes cannot both pass the limit or take one name.
 */
import type { SqlClient } from "../db/sql-client.ts";
import { isoAt, type Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { nameKey, validName } from "./names.ts";
import { lockOrganization } from "./organizations.ts";

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
export async function createDefaultProject(tx: SqlClient, clock: Clock, orgId: string): Promise<string> {
  const id = crypto.randomUUID();
  const now = isoAt(clock.now());
  await tx.run(
    `INSERT INTO projects (id, org_id, name, name_key, project_type, is_default, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'general', 1, ?, ?)`,
    [id, orgId, DEFAULT_PROJECT_NAME, nameKey(DEFAULT_PROJECT_NAME), now, now],
  );
  return id;
}

export async function defaultProjectId(db: SqlClient, orgId: string): Promise<string> {
  const row = await db.one<{ id: string }>("SELECT id FROM projects WHERE org_id = ? AND is_default = 1", [orgId]);
  if (!row) throw new Error(`organization ${orgId} has no Default project`);
  return row.id;
}

export async function getProject(db: SqlClient, orgId: string, id: string): Promise<Project> {
  const row = await db.one<ProjectRow>(`${SELECT_PROJECT} WHERE p.id = ? AND p.org_id = ?`, [id, orgId]);
  if (!row) throw projectNotFound(id);
  return toProject(row);
}

export async function listProjects(db: SqlClient, orgId: string, limit: number, offset: number): Promise<{ items: Project[]; total: number }> {
  const total = (await db.one<{ n: number }>("SELECT count(*) AS n FROM projects WHERE org_id = ?", [orgId]))?.n ?? 0;
  const rows = await db.all<ProjectRow>(`${SELECT_PROJECT} WHERE p.org_id = ? ORDER BY p.is_default DESC, p.name_key, p.id LIMIT ? OFFSET ?`, [orgId, limit, offset]);
  return { items: rows.map(toProject), total };
}

export async function createProject(db: SqlClient, clock: Clock, orgId: string, createdBy: string | null, input: ProjectInput): Promise<Project> {
  const name = validName("name", input.name);
  const id = crypto.randomUUID();
  const now = isoAt(clock.now());
  return db.transaction(async (tx) => {
    await lockOrganization(tx, orgId);
    const count = (await tx.one<{ n: number }>("SELECT count(*) AS n FROM projects WHERE org_id = ?", [orgId]))?.n ?? 0;
    if (count >= MAX_PROJECTS_PER_ORG) {
      throw new ApiError("PROJECT_LIMIT_REACHED", `the organization already has ${MAX_PROJECTS_PER_ORG} projects, the maximum`);
    }
    await assertNameFree(tx, orgId, name, null);
    await tx.run(
      `INSERT INTO projects (id, org_id, name, name_key, description, icon, color, project_type, is_default,
         created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
      [id, orgId, name, nameKey(name), input.description ?? null, input.icon ?? null, input.color ?? null, input.project_type ?? "general", createdBy, now, now],
    );
    return getProject(tx, orgId, id);
  });
}

export async function updateProject(db: SqlClient, clock: Clock, orgId: string, id: string, patch: ProjectPatch): Promise<Project> {
  return db.transaction(async (tx) => {
    await lockOrganization(tx, orgId);
    const current = await getProject(tx, orgId, id);
    const sets: string[] = [];
    const values: (string | null)[] = [];
    if (patch.name !== undefined) {
      const name = validName("name", patch.name);
      if (name !== current.name) {
        if (current.is_default) throw new ApiError("BUSINESS_RULE_VIOLATION", "the Default project cannot be renamed");
        await assertNameFree(tx, orgId, name, id);
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
    if (sets.length === 0) return current;
    sets.push("updated_at = ?");
    values.push(isoAt(clock.now()));
    await tx.run(`UPDATE projects SET ${sets.join(", ")} WHERE id = ? AND org_id = ?`, [...values, id, orgId]);
    return getProject(tx, orgId, id);
  });
}

export async function deleteProject(db: SqlClient, orgId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    await lockOrganization(tx, orgId);
    const project = await getProject(tx, orgId, id);
    if (project.is_default) throw new ApiError("BUSINESS_RULE_VIOLATION", "the Default project cannot be deleted");
    const trashed = (await tx.one<{ n: number }>("SELECT count(*) AS n FROM files WHERE project_id = ? AND deleted_at IS NOT NULL", [id]))?.n ?? 0;
    if (project.folder_count > 0 || project.file_count > 0 || trashed > 0) {
      const parts = [`${project.folder_count} folder(s)`, `${project.file_count} file(s)`];
      if (trashed > 0) parts.push(`${trashed} deleted file(s) still recoverable`);
      throw new ApiError("PROJECT_NOT_EMPTY", `project "${project.name}" is not empty: it holds ${parts.join(", ")}`);
    }
    await tx.run("DELETE FROM projects WHERE id = ? AND org_id = ?", [id, orgId]);
  });
}

async function assertNameFree(db: SqlClient, orgId: string, name: string, exceptId: string | null): Promise<void> {
  const clash = await db.one<{ id: string; name: string }>("SELECT id, name FROM projects WHERE org_id = ? AND name_key = ?", [orgId, nameKey(name)]);
  if (clash && clash.id !== exceptId) {
    throw new ApiError("PROJECT_NAME_EXISTS", `a project named "${clash.name}" already exists (names are compared case-insensitively)`);
  }
}

export function projectNotFound(id: string) {
  return new ApiError("PROJECT_NOT_FOUND", `project ${id} not found`);
}
