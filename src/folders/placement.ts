/**
 * Where a file goes in the organization's tree, from a folder and/or a project named by a client:
 * into the folder (and its project), else the top level of the project, else the Default project.
 * Uploads, links and moves all place files through this one rule.
 *
 * Still on the SQLite handle (docs/scale-out.md): ingest and the rules' actions place files inside
 * their SQLite transactions, so this reads the few rows it needs synchronously until those convert.
 */
import type { Database } from "bun:sqlite";
import { badRequest } from "../errors.ts";
import { projectNotFound } from "../tenancy/projects.ts";
import { folderNotFound } from "./folders.ts";

export interface Placement {
  projectId: string;
  folderId: string | null;
}

export function placement(db: Database, orgId: string, folderId: string | null | undefined, projectId: string | null | undefined): Placement {
  if (folderId) {
    const folder = db.query<{ id: string; project_id: string }, [string, string]>("SELECT id, project_id FROM folders WHERE id = ? AND org_id = ?").get(folderId, orgId);
    if (!folder) throw folderNotFound(folderId);
    if (projectId && projectId !== folder.project_id) {
      throw badRequest(`folder_id: folder ${folder.id} belongs to project ${folder.project_id}, not ${projectId}`);
    }
    return { projectId: folder.project_id, folderId: folder.id };
  }
  const project = projectId
    ? db.query<{ id: string }, [string, string]>("SELECT id FROM projects WHERE id = ? AND org_id = ?").get(projectId, orgId)
    : db.query<{ id: string }, [string]>("SELECT id FROM projects WHERE org_id = ? AND is_default = 1").get(orgId);
  if (!project) {
    if (projectId) throw projectNotFound(projectId);
    throw new Error(`organization ${orgId} has no Default project`);
  }
  return { projectId: project.id, folderId: null };
}
