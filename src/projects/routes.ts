/** HTTP binding of /projects (spec section "Projects"). */
import { Elysia, t } from "elysia";
import type { ProjectDeps } from "./deps.ts";
import { permissions } from "../http/permissions.ts";
import { Page, page, errorResponses } from "../http/shapes.ts";
import { createProject, deleteProject, getProject, listProjects, updateProject } from "../tenancy/projects.ts";
import { ProjectCreation, ProjectEdit, ProjectParams, ProjectSchema, ProjectsQuery } from "./model.ts";

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
        body: ProjectCreation,
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
        query: ProjectsQuery,
        response: { 200: Page(ProjectSchema), ...errorResponses([400]) },
        detail: { summary: "List projects (the Default project first, then by name)" },
      },
    )
    .get("/projects/:project_id", ({ principal, params }) => getProject(db, principal.orgId, params.project_id), {
      permission: "view",
      params: ProjectParams,
      response: { 200: ProjectSchema, ...errorResponses([400, 404]) },
      detail: { summary: "Get a project with its current counts" },
    })
    .patch(
      "/projects/:project_id",
      ({ principal, params, body }) => updateProject(db, clock, principal.orgId, params.project_id, body),
      {
        permission: "edit",
        params: ProjectParams,
        body: ProjectEdit,
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
        params: ProjectParams,
        response: { 204: t.Void(), ...errorResponses([400, 404, 409, 422]) },
        detail: { summary: "Delete an empty project" },
      },
    );
}
