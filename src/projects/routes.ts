/** HTTP binding of /projects (spec section "Projects"). */
import { Elysia, t } from "elysia";
import type { ProjectDeps } from "./deps.ts";
import { permissions } from "../http/permissions.ts";
import { Nullable, Page, page, pageQuery, Timestamp, Uuid, Enum, errorResponses } from "../http/shapes.ts";
import { createProject, deleteProject, getProject, listProjects, PROJECT_TYPES, updateProject } from "../tenancy/projects.ts";

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

const projectParams = t.Object({ project_id: Uuid("project_id") });

export function projectRoutes(ctx: ProjectDeps) {
  const { sql: db, clock } = ctx;
  return new Elysia({ tags: ["Projects"] })
    .use(permissions)
    .post(
      "/projects",
      async ({ principal, body, set }) => {
        const project = await createProject(db, clock, principal.orgId, principal.keyId, body);
        set.status = 201;
        return project;
      },
      {
        permission: "edit",
        body: t.Object({
          name: Name,
          description: t.Optional(Nullable(Description)),
          icon: t.Optional(Nullable(Icon)),
          color: t.Optional(Nullable(Color)),
          project_type: t.Optional(ProjectType),
        }),
        response: { 201: ProjectSchema, ...errorResponses([400, 409]) },
        detail: { summary: "Create a project" },
      },
    )
    .get(
      "/projects",
      async ({ principal, query }) => {
        const { items, total } = await listProjects(db, principal.orgId, query.limit, query.offset);
        return page(items, total, query.limit, query.offset);
      },
      {
        permission: "view",
        query: t.Object(pageQuery(100, 50)),
        response: { 200: Page(ProjectSchema), ...errorResponses([400]) },
        detail: { summary: "List projects (the Default project first, then by name)" },
      },
    )
    .get("/projects/:project_id", ({ principal, params }) => getProject(db, principal.orgId, params.project_id), {
      permission: "view",
      params: projectParams,
      response: { 200: ProjectSchema, ...errorResponses([400, 404]) },
      detail: { summary: "Get a project with its current counts" },
    })
    .patch(
      "/projects/:project_id",
      ({ principal, params, body }) => updateProject(db, clock, principal.orgId, params.project_id, body),
      {
        permission: "edit",
        params: projectParams,
        body: t.Object({
          name: t.Optional(Name),
          description: t.Optional(Nullable(Description)),
          icon: t.Optional(Nullable(Icon)),
          color: t.Optional(Nullable(Color)),
          project_type: t.Optional(ProjectType),
        }),
        response: { 200: ProjectSchema, ...errorResponses([400, 404, 409, 422]) },
        detail: { summary: "Update a project (the Default project cannot be renamed)" },
      },
    )
    .delete(
      "/projects/:project_id",
      async ({ principal, params, set }) => {
        await deleteProject(db, principal.orgId, params.project_id);
        set.status = 204;
      },
      {
        permission: "delete",
        params: projectParams,
        response: { 204: t.Void(), ...errorResponses([400, 404, 409, 422]) },
        detail: { summary: "Delete an empty project" },
      },
    );
}
