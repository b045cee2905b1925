/** The /projects routes' request and response schemas (TypeBox). */
import { t } from "elysia";
import { Enum, Nullable, pageQuery, Timestamp, Uuid } from "../http/shapes.ts";
import { PROJECT_TYPES } from "../tenancy/projects.ts";

const ProjectType = Enum(PROJECT_TYPES, { error: "project_type must be general or real_estate" });
const Description = t.String({ maxLength: 2000, error: "description must be at most 2000 characters" });
const Icon = t.String({ maxLength: 50, error: "icon must be at most 50 characters" });
const Color = t.String({
  maxLength: 7,
  pattern: "^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$",
  error: "color must be a hex colour such as #1A2B3C or #abc",
});
const Name = t.String({ maxLength: 255, error: "name must be a string of 1-255 characters" });

export const ProjectSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    name: t.String(),
    description: Nullable(t.String()),
    icon: Nullable(t.String()),
    color: Nullable(t.String()),
    project_type: ProjectType,
    is_default: t.Boolean(),
    folder_count: t.Integer(),
    file_count: t.Integer(),
    created_by: Nullable(t.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: "Project" },
);

export const ProjectParams = t.Object({ project_id: Uuid("project_id") });

export const ProjectCreation = t.Object({
  name: Name,
  description: t.Optional(Nullable(Description)),
  icon: t.Optional(Nullable(Icon)),
  color: t.Optional(Nullable(Color)),
  project_type: t.Optional(ProjectType),
});

export const ProjectEdit = t.Object({
  name: t.Optional(Name),
  description: t.Optional(Nullable(Description)),
  icon: t.Optional(Nullable(Icon)),
  color: t.Optional(Nullable(Color)),
  project_type: t.Optional(ProjectType),
});

export const ProjectsQuery = t.Object(pageQuery(100, 50));
