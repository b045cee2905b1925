import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { clockPassed } from "./support/polling.ts";
import { deleteFileRow, insertFileRow } from "./support/rows.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** CUSTOM tier: unlimited requests, so tests that create dozens of projects never hit 429. */
const newTenant = (): Promise<Tenant> => server.tenant({ tier: "CUSTOM" });

async function defaultProject(tenant: Tenant) {
  const res = await tenant.api.get("/projects");
  const project = res.body.items[0];
  expect(project.is_default).toBe(true);
  return project;
}

describe("POST /projects", () => {
  test("201 with every field, defaults applied", async () => {
    const { api } = await newTenant();
    const res = await api.post("/projects", { name: "  Listings 2026  ", description: "Spring", icon: "house", color: "#1A2b3c" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: "Listings 2026",
      description: "Spring",
      icon: "house",
      color: "#1A2b3c",
      project_type: "general",
      is_default: false,
      folder_count: 0,
      file_count: 0,
    });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof res.body.created_by).toBe("string");
    expect(Date.parse(res.body.created_at)).not.toBeNaN();
    expect(res.body.updated_at).toBe(res.body.created_at);

    const fetched = await api.get(`/projects/${res.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(res.body);
  });

  test("project_type real_estate is kept; optional fields default to null", async () => {
    const { api } = await newTenant();
    const res = await api.post("/projects", { name: "Homes", project_type: "real_estate" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ project_type: "real_estate", description: null, icon: null, color: null });
  });

  test("invalid bodies are 400 with a detail naming the field", async () => {
    const { api } = await newTenant();
    const cases: [string, unknown, string][] = [
      ["missing name", {}, "name"],
      ["blank name", { name: "   " }, "name"],
      ["name too long", { name: "x".repeat(256) }, "name"],
      ["slash", { name: "a/b" }, "name"],
      ["backslash", { name: "a\\b" }, "name"],
      ["NUL", { name: "a\u0000b" }, "name"],
      ["name not a string", { name: 42 }, "name"],
      ["description too long", { name: "ok", description: "d".repeat(2001) }, "description"],
      ["icon too long", { name: "ok", icon: "i".repeat(51) }, "icon"],
      ["color not hex", { name: "ok", color: "red" }, "color"],
      ["color too long", { name: "ok", color: "#1234567" }, "color"],
      ["unknown project_type", { name: "ok", project_type: "warehouse" }, "project_type"],
    ];
    for (const [label, body, field] of cases) {
      const res = await api.post("/projects", body);
      expect(res.status, label).toBe(400);
      expect(res.body.detail, label).toContain(field);
    }
    const list = await api.get("/projects");
    expect(list.body.total_count).toBe(1);
  });

  test("names at the limits are accepted: 255 characters, 2000-character description, #abc", async () => {
    const { api } = await newTenant();
    const res = await api.post("/projects", { name: "n".repeat(255), description: "d".repeat(2000), icon: "i".repeat(50), color: "#abc" });
    expect(res.status).toBe(201);
    expect(res.body.name.length).toBe(255);
  });

  test("names are unique per organization, case-insensitively: 409 PROJECT_NAME_EXISTS", async () => {
    const tenant = await newTenant();
    expect((await tenant.api.post("/projects", { name: "Marketing" })).status).toBe(201);
    for (const name of ["marketing", "MARKETING", " Marketing "]) {
      const res = await tenant.api.post("/projects", { name });
      expect(res.status, name).toBe(409);
      expect(res.body.code).toBe("PROJECT_NAME_EXISTS");
      expect(res.body.detail).toContain("Marketing");
    }
    const clashWithDefault = await tenant.api.post("/projects", { name: "default" });
    expect(clashWithDefault.status).toBe(409);
    expect(clashWithDefault.body.code).toBe("PROJECT_NAME_EXISTS");

    // Another organization may use the same name.
    expect((await (await newTenant()).api.post("/projects", { name: "Marketing" })).status).toBe(201);
  });

  test("the 51st project is refused with 409 PROJECT_LIMIT_REACHED and nothing is lost", async () => {
    const { api } = await newTenant();
    for (let i = 1; i < 50; i++) {
      const res = await api.post("/projects", { name: `P${i}` });
      expect(res.status, `project ${i}`).toBe(201);
    }
    const over = await api.post("/projects", { name: "One too many" });
    expect(over.status).toBe(409);
    expect(over.body.code).toBe("PROJECT_LIMIT_REACHED");
    expect(over.body.detail).toContain("50");
    const list = await api.get("/projects?limit=100");
    expect(list.body.total_count).toBe(50);
    expect(list.body.items.some((p: { name: string }) => p.name === "One too many")).toBe(false);

    // Deleting one frees a slot.
    await api.delete(`/projects/${list.body.items[1].id}`);
    expect((await api.post("/projects", { name: "One too many" })).status).toBe(201);
  });
});

describe("GET /projects", () => {
  test("Default is created with the organization and always listed first, then by name", async () => {
    const { api } = await newTenant();
    for (const name of ["beta", "Alpha", "_first", "charlie"]) await api.post("/projects", { name });
    const res = await api.get("/projects");
    expect(res.status).toBe(200);
    expect(res.body.items.map((p: { name: string }) => p.name)).toEqual(["Default", "_first", "Alpha", "beta", "charlie"]);
    expect(res.body.items[0].is_default).toBe(true);
    expect(res.body.items.slice(1).every((p: { is_default: boolean }) => !p.is_default)).toBe(true);
    expect(res.body).toMatchObject({ total_count: 5, limit: 50, offset: 0, has_more: false });
  });

  test("pagination: limit, offset, has_more, and Default first on page one only", async () => {
    const { api } = await newTenant();
    for (let i = 0; i < 6; i++) await api.post("/projects", { name: `Proj ${i}` });
    const first = await api.get("/projects?limit=3");
    expect(first.body.items.map((p: { name: string }) => p.name)).toEqual(["Default", "Proj 0", "Proj 1"]);
    expect(first.body).toMatchObject({ total_count: 7, limit: 3, offset: 0, has_more: true });
    const last = await api.get("/projects?limit=3&offset=6");
    expect(last.body.items.map((p: { name: string }) => p.name)).toEqual(["Proj 5"]);
    expect(last.body.has_more).toBe(false);
    const beyond = await api.get("/projects?offset=100");
    expect(beyond.body.items).toEqual([]);
    expect(beyond.body.total_count).toBe(7);
  });

  test("limit outside 1-100 and bad offsets are 400 naming the parameter", async () => {
    const { api } = await newTenant();
    for (const query of ["limit=0", "limit=101", "limit=abc", "offset=-1", "offset=1.5"]) {
      const res = await api.get(`/projects?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.detail, query).toContain(query.split("=")[0]!);
    }
    expect((await api.get("/projects?limit=100")).status).toBe(200);
    expect((await api.get("/projects?limit=1")).body.items.length).toBe(1);
  });
});

describe("GET /projects/{project_id}", () => {
  test("404 PROJECT_NOT_FOUND for an unknown id and for another organization's project", async () => {
    const owner = await newTenant();
    const other = await newTenant();
    const project = (await owner.api.post("/projects", { name: "Private" })).body;
    for (const [label, api, id] of [
      ["unknown", owner.api, crypto.randomUUID()],
      ["other org", other.api, project.id],
    ] as const) {
      const res = await api.get(`/projects/${id}`);
      expect(res.status, label).toBe(404);
      expect(res.body.code, label).toBe("PROJECT_NOT_FOUND");
    }
  });

  test("a malformed id is 400", async () => {
    const res = await (await newTenant()).api.get("/projects/not-a-uuid");
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain("project_id");
  });

  test("folder_count and file_count are live and ignore deleted files", async () => {
    const tenant = await newTenant();
    const project = (await tenant.api.post("/projects", { name: "Counted" })).body;
    const folder = (await tenant.api.post("/folders", { name: "A", project_id: project.id })).body;
    await tenant.api.post("/folders", { name: "B", parent_id: folder.id });
    await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId: project.id });
    await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId: project.id, folderId: folder.id });
    await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId: project.id, deleted: true });
    const res = await tenant.api.get(`/projects/${project.id}`);
    expect(res.body).toMatchObject({ folder_count: 2, file_count: 2 });
    const listed = (await tenant.api.get("/projects")).body.items.find((p: { id: string }) => p.id === project.id);
    expect(listed).toMatchObject({ folder_count: 2, file_count: 2 });
  });
});

describe("PATCH /projects/{project_id}", () => {
  test("updates any field, bumps updated_at, and null clears optional fields", async () => {
    const { api } = await newTenant();
    const created = (await api.post("/projects", { name: "Old", description: "d", color: "#000" })).body;
    await clockPassed(created.updated_at);
    const res = await api.patch(`/projects/${created.id}`, {
      name: "New",
      description: null,
      icon: "star",
      project_type: "real_estate",
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: "New", description: null, icon: "star", color: "#000", project_type: "real_estate" });
    expect(res.body.updated_at > created.updated_at).toBe(true);
    expect(res.body.created_at).toBe(created.created_at);
  });

  test("fields left out of a PATCH keep their values (project_type is not reset to its default)", async () => {
    const { api } = await newTenant();
    const created = (await api.post("/projects", { name: "Homes", project_type: "real_estate", icon: "house" })).body;
    const res = await api.patch(`/projects/${created.id}`, { description: "only this" });
    expect(res.body).toMatchObject({ project_type: "real_estate", icon: "house", description: "only this", name: "Homes" });
  });

  test("renaming to another project's name (any case) is 409; changing only the case of its own name is fine", async () => {
    const { api } = await newTenant();
    await api.post("/projects", { name: "Taken" });
    const mine = (await api.post("/projects", { name: "Mine" })).body;
    const clash = await api.patch(`/projects/${mine.id}`, { name: "TAKEN" });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe("PROJECT_NAME_EXISTS");
    const recased = await api.patch(`/projects/${mine.id}`, { name: "MINE" });
    expect(recased.status).toBe(200);
    expect(recased.body.name).toBe("MINE");
  });

  test("renaming the Default project is 422 BUSINESS_RULE_VIOLATION; its other fields can change", async () => {
    const tenant = await newTenant();
    const def = await defaultProject(tenant);
    const rename = await tenant.api.patch(`/projects/${def.id}`, { name: "Main" });
    expect(rename.status).toBe(422);
    expect(rename.body.code).toBe("BUSINESS_RULE_VIOLATION");
    expect(rename.body.detail).toContain("Default");
    const recolor = await tenant.api.patch(`/projects/${def.id}`, { color: "#ff0000", name: "Default" });
    expect(recolor.status).toBe(200);
    expect(recolor.body).toMatchObject({ name: "Default", color: "#ff0000", is_default: true });
  });

  test("validation, 404 and cross-organization cases", async () => {
    const owner = await newTenant();
    const project = (await owner.api.post("/projects", { name: "P" })).body;
    const bad = await owner.api.patch(`/projects/${project.id}`, { name: "a/b" });
    expect(bad.status).toBe(400);
    expect((await owner.api.patch(`/projects/${project.id}`, { color: "blue" })).status).toBe(400);
    const missing = await owner.api.patch(`/projects/${crypto.randomUUID()}`, { name: "X" });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("PROJECT_NOT_FOUND");
    const foreign = await (await newTenant()).api.patch(`/projects/${project.id}`, { name: "Hijacked" });
    expect(foreign.status).toBe(404);
    expect((await owner.api.get(`/projects/${project.id}`)).body.name).toBe("P");
  });
});

describe("DELETE /projects/{project_id}", () => {
  test("204 for an empty project, which is then gone", async () => {
    const { api } = await newTenant();
    const project = (await api.post("/projects", { name: "Temp" })).body;
    const res = await api.delete(`/projects/${project.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBe("");
    expect((await api.get(`/projects/${project.id}`)).status).toBe(404);
    const again = await api.delete(`/projects/${project.id}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("PROJECT_NOT_FOUND");
  });

  test("the Default project cannot be deleted: 422 BUSINESS_RULE_VIOLATION", async () => {
    const tenant = await newTenant();
    const def = await defaultProject(tenant);
    const res = await tenant.api.delete(`/projects/${def.id}`);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("BUSINESS_RULE_VIOLATION");
    expect((await tenant.api.get(`/projects/${def.id}`)).status).toBe(200);
  });

  test("409 PROJECT_NOT_EMPTY while it holds a folder, a file or a recoverable deleted file", async () => {
    const tenant = await newTenant();
    const { sql } = server.ctx;
    const project = (await tenant.api.post("/projects", { name: "Busy" })).body;

    const folder = (await tenant.api.post("/folders", { name: "F", project_id: project.id })).body;
    let res = await tenant.api.delete(`/projects/${project.id}`);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("PROJECT_NOT_EMPTY");
    expect(res.body.detail).toContain("1 folder");
    expect((await tenant.api.delete(`/folders/${folder.id}`)).status).toBe(204);

    const live = await insertFileRow(sql, { orgId: tenant.orgId, projectId: project.id });
    res = await tenant.api.delete(`/projects/${project.id}`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain("1 file");
    await deleteFileRow(sql, live);

    const trashed = await insertFileRow(sql, { orgId: tenant.orgId, projectId: project.id, deleted: true });
    res = await tenant.api.delete(`/projects/${project.id}`);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("PROJECT_NOT_EMPTY");
    expect(res.body.detail).toContain("deleted");
    await deleteFileRow(sql, trashed);

    expect((await tenant.api.get(`/projects/${project.id}`)).status).toBe(200);
    expect((await tenant.api.delete(`/projects/${project.id}`)).status).toBe(204);
  });

  test("another organization cannot delete it", async () => {
    const owner = await newTenant();
    const project = (await owner.api.post("/projects", { name: "Mine" })).body;
    const res = await (await newTenant()).api.delete(`/projects/${project.id}`);
    expect(res.status).toBe(404);
    expect((await owner.api.get(`/projects/${project.id}`)).status).toBe(200);
  });
});

describe("permissions and isolation", () => {
  test("VIEW reads, EDIT creates and updates, DELETE deletes; each missing one is 403", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM", permissions: ["view", "edit", "delete"] });
    const project = (await tenant.api.post("/projects", { name: "Guarded" })).body;
    const viewOnly = await tenant.keyWith(["view"]);
    const editOnly = await tenant.keyWith(["edit"]);
    const deleteOnly = await tenant.keyWith(["delete"]);

    expect((await viewOnly.get("/projects")).status).toBe(200);
    expect((await viewOnly.get(`/projects/${project.id}`)).status).toBe(200);
    for (const [label, res] of [
      ["view cannot create", await viewOnly.post("/projects", { name: "X" })],
      ["view cannot update", await viewOnly.patch(`/projects/${project.id}`, { name: "X" })],
      ["view cannot delete", await viewOnly.delete(`/projects/${project.id}`)],
      ["edit cannot read", await editOnly.get("/projects")],
      ["edit cannot delete", await editOnly.delete(`/projects/${project.id}`)],
      ["delete cannot create", await deleteOnly.post("/projects", { name: "X" })],
    ] as const) {
      expect(res.status, label).toBe(403);
      expect(res.body.detail, label).toMatch(/permission/i);
    }
    expect((await editOnly.patch(`/projects/${project.id}`, { description: "edited" })).status).toBe(200);
    expect((await deleteOnly.delete(`/projects/${project.id}`)).status).toBe(204);
  });

  test("a listing shows only the caller's organization", async () => {
    const a = await newTenant();
    const b = await newTenant();
    await a.api.post("/projects", { name: "A-only" });
    await b.api.post("/projects", { name: "B-only" });
    const names = (await a.api.get("/projects")).body.items.map((p: { name: string }) => p.name);
    expect(names).toEqual(["Default", "A-only"]);
    const defaults = [(await defaultProject(a)).id, (await defaultProject(b)).id];
    expect(new Set(defaults).size).toBe(2);
  });
});
