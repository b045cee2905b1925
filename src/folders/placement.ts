/**
 * Where a file goes in the organization's tree, from a folder and/or a project named by a client:
 * into the folder (and its project), else the top level of the project, else the Default project.
 * Uploads, links, imports, mail, watched folders, moves and the rules' move action all place files
 * through this one rule, on the data-access port (inside the caller's transaction when given its `tx`).
 */
import type { SqlClient } from "../db/sql-client.ts";
import { badRequest } from "../errors.ts";
import { projectNotFound } from "../tenancy/projects.ts";
import { folderNotFound } from "./folders.ts";

export interface Placement {
  projectId: string;
  folderId: string | null;
}

export async function placement(db: SqlClient, orgId: string, folderId: string | null | undefined, projectId: string | null | undefined): Promise<Placement> {
  if (folderId) {
    const folder = await db.one<{ id: string; project_id: string }>("SELECT id, project_id FROM folders WHERE id = ? AND org_id = ?", [folderId, orgId]);
    if (!folder) throw folderNotFound(folderId);
    if (projectId && projectId !== folder.project_id) {
      throw badRequest(`folder_id: folder ${folder.id} belongs to project ${folder.project_id}, not ${projectId}`);
    }
    return { projectId: folder.project_id, folderId: folder.id };
  }
  const project = projectId
    ? await db.one<{ id: string }>("SELECT id FROM projects WHERE id = ? AND org_id = ?", [projectId, orgId])
    : await db.one<{ id: string }>("SELECT id FROM projects WHERE org_id = ? AND is_default = 1", [orgId]);
  if (!project) {
    if (projectId) throw projectNotFound(projectId);
    throw new Error(`organization ${orgId} has no Default project`);
  }
  return { projectId: project.id, folderId: null };
}
