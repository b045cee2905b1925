/**
 * Where a file goes in the organization's tree, from a folder and/or a project named by a client:
 * into the folder (and its project), else the top level of the project, else the Default project.
 * Uploads, links and moves all place files through this one rule.
 */
import type { Database } from "bun:sqlite";
import { badRequest } from "../errors.ts";
import { defaultProjectId, getProject } from "../tenancy/projects.ts";
import { getFolder } from "./folders.ts";

export interface Placement {
  projectId: string;
  folderId: string | null;
}

export function placement(db: Database, orgId: string, folderId: string | null | undefined, projectId: string | null | undefined): Placement {
  if (folderId) {
    const folder = getFolder(db, orgId, folderId);
    if (projectId && projectId !== folder.project_id) {
      throw badRequest(`folder_id: folder ${folder.id} belongs to project ${folder.project_id}, not ${projectId}`);
    }
    return { projectId: folder.project_id, folderId: folder.id };
  }
  if (projectId) return { projectId: getProject(db, orgId, projectId).id, folderId: null };
  return { projectId: defaultProjectId(db, orgId), folderId: null };
}
