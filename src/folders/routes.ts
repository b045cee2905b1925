/** HTTP binding of /folders (Mediabox extension; documented in docs/files.md). */
import { Elysia, t } from "elysia";
import type { Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { permissions } from "../http/permissions.ts";
import { Page, page, errorResponses } from "../http/shapes.ts";
import { createFolder, deleteFolder, getFolder, listFolders, updateFolder } from "./folders.ts";
import { FolderCreation, FolderEdit, FolderParams, FolderSchema, FoldersQuery } from "./model.ts";

export function folderRoutes(ctx: { sql: SqlClient; clock: Clock }) {
  const { sql: db, clock } = ctx;
  return new Elysia({ tags: ["Folders"] })
    .use(permissions)
    .post(
      "/folders",
      async ({ principal, body, set }) => {
        const folder = await createFolder(db, clock, principal.orgId, principal.keyId, body);
        set.status = 201;
        return folder;
      },
      {
        permission: "edit",
        body: FolderCreation,
        response: { 201: FolderSchema, ...errorResponses([400, 404, 409, 422]) },
        detail: {
          summary: "Create a folder",
          description: "Inside parent_id when given, else at the top level of project_id (the Default project when omitted).",
        },
      },
    )
    .get(
      "/folders",
      async ({ principal, query }) => {
        const { items, total } = await listFolders(db, principal.orgId, { projectId: query.project_id, parentId: query.parent_id }, query.limit, query.offset);
        return page(items, total, query.limit, query.offset);
      },
      {
        permission: "view",
        query: FoldersQuery,
        response: { 200: Page(FolderSchema), ...errorResponses([400, 404]) },
        detail: {
          summary: "List folders",
          description: "Children of parent_id, or the top-level folders of project_id (the Default project when both are omitted). Sorted by name.",
        },
      },
    )
    .get("/folders/:folder_id", ({ principal, params }) => getFolder(db, principal.orgId, params.folder_id), {
      permission: "view",
      params: FolderParams,
      response: { 200: FolderSchema, ...errorResponses([400, 404]) },
      detail: { summary: "Get a folder with its path and counts" },
    })
    .patch(
      "/folders/:folder_id",
      ({ principal, params, body }) => updateFolder(db, clock, principal.orgId, params.folder_id, body),
      {
        permission: "edit",
        params: FolderParams,
        body: FolderEdit,
        response: { 200: FolderSchema, ...errorResponses([400, 404, 409, 422]) },
        detail: {
          summary: "Rename or move a folder",
          description:
            "parent_id moves it under another folder (null: to the top level); project_id moves it, its subfolders and their files to another project.",
        },
      },
    )
    .delete(
      "/folders/:folder_id",
      async ({ principal, params, set }) => {
        await deleteFolder(db, principal.orgId, params.folder_id);
        set.status = 204;
      },
      {
        permission: "delete",
        params: FolderParams,
        response: { 204: t.Void(), ...errorResponses([400, 404, 409]) },
        detail: { summary: "Delete an empty folder" },
      },
    );
}
