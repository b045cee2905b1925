/** The /folders routes' request and response schemas (TypeBox). */
import { t } from "elysia";
import { Nullable, pageQuery, Timestamp, Uuid } from "../http/shapes.ts";

const FolderRef = t.Object({ id: t.String({ format: "uuid" }), name: t.String() });

export const FolderSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    name: t.String(),
    project_id: t.String({ format: "uuid" }),
    parent_id: t.Union([t.String({ format: "uuid" }), t.Null()]),
    path: t.Array(FolderRef, { description: "From the project root down to this folder, inclusive" }),
    folder_count: t.Integer({ description: "Direct subfolders" }),
    file_count: t.Integer({ description: "Files directly in this folder" }),
    created_by: t.Union([t.String(), t.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: "Folder" },
);

const Name = t.String({ maxLength: 255, error: "name must be a string of 1-255 characters" });

export const FolderParams = t.Object({ folder_id: Uuid("folder_id") });

export const FolderCreation = t.Object({
  name: Name,
  project_id: t.Optional(Nullable(Uuid("project_id"))),
  parent_id: t.Optional(Nullable(Uuid("parent_id"))),
});

export const FoldersQuery = t.Object({
  project_id: t.Optional(Uuid("project_id")),
  parent_id: t.Optional(Uuid("parent_id")),
  ...pageQuery(100, 50),
});

export const FolderEdit = t.Object({
  name: t.Optional(Name),
  parent_id: t.Optional(Nullable(Uuid("parent_id"))),
  project_id: t.Optional(Uuid("project_id")),
});
