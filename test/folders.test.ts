import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_FOLDER_DEPTH } from "../src/folders/folders.ts";
import { insertFileRow } from "./support/rows.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const newTenant = (): Promise<Tenant> => server.tenant({ tier: "CUSTOM" });

async function setup() {
  const tenant = await newTenant();
  const projects = (await tenant.api.get("/projects")).body.items;
  const other = (await tenant.api.post("/projects", { name: "Other" })).body;
  return { tenant, api: tenant.api, defaultId: projects[0].id as string, otherId: other.id as string };
}

const names = (items: { name: string }[]) => items.map((f) => f.name);

describe("POST /folders", () => {
  test("201 at the top of the Default project when neither project nor parent is given", async () => {
    const { api, defaultId } = await setup();
    const res = await api.post("/folders", { name: " Invoices " });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: "Invoices", project_id: defaultId, parent_id: null, folder_count: 0, file_count: 0 });
    expect(res.body.path).toEqual([{ id: res.body.id, name: "Invoices" }]);
    expect((await api.get(`/folders/${res.body.id}`)).body).toEqual(res.body);
  });

  test("nested folders take the parent's project and carry their path", async () => {
    const { api, otherId } = await setup();
    const a = (await api.post("/folders", { name: "A", project_id: otherId })).body;
    const b = (await api.post("/folders", { name: "B", parent_id: a.id })).body;
    const c = (await api.post("/folders", { name: "C", parent_id: b.id, project_id: otherId })).body;
    expect(c.project_id).toBe(otherId);
    expect(c.path.map((f: { name: string }) => f.name)).toEqual(["A", "B", "C"]);
    expect((await api.get(`/folders/${a.id}`)).body.folder_count).toBe(1);
  });

  test("a parent from another project than project_id is 400", async () => {
    const { api, defaultId, otherId } = await setup();
    const parent = (await api.post("/folders", { name: "P", project_id: otherId })).body;
    const res = await api.post("/folders", { name: "X", parent_id: parent.id, project_id: defaultId });
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain("parent_id");
  });

  test("invalid names and ids are 400 naming the field", async () => {
    const { api } = await setup();
    const cases: [string, unknown, string][] = [
      ["missing name", {}, "name"],
      ["blank", { name: " " }, "name"],
      ["slash", { name: "a/b" }, "name"],
      ["too long", { name: "x".repeat(256) }, "name"],
      ["bad project id", { name: "ok", project_id: "nope" }, "project_id"],
      ["bad parent id", { name: "ok", parent_id: "nope" }, "parent_id"],
    ];
    for (const [label, body, field] of cases) {
      const res = await api.post("/folders", body);
      expect(res.status, label).toBe(400);
      expect(res.body.detail, label).toContain(field);
    }
    expect((await api.get("/folders")).body.total_count).toBe(0);
  });

  test("unknown project or parent is 404", async () => {
    const { api } = await setup();
    const project = await api.post("/folders", { name: "x", project_id: crypto.randomUUID() });
    expect(project.status).toBe(404);
    expect(project.body.code).toBe("PROJECT_NOT_FOUND");
    const parent = await api.post("/folders", { name: "x", parent_id: crypto.randomUUID() });
    expect(parent.status).toBe(404);
    expect(parent.body.code).toBe("FOLDER_NOT_FOUND");
  });

  test("sibling names are unique case-insensitively (409 FOLDER_NAME_EXISTS); the same name elsewhere is fine", async () => {
    const { api, otherId } = await setup();
    const top = (await api.post("/folders", { name: "Reports" })).body;
    const dup = await api.post("/folders", { name: "REPORTS" });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe("FOLDER_NAME_EXISTS");
    expect((await api.post("/folders", { name: "reports", parent_id: top.id })).status).toBe(201);
    expect((await api.post("/folders", { name: "Reports", project_id: otherId })).status).toBe(201);
  });

  test(`nesting deeper than ${MAX_FOLDER_DEPTH} levels is 422 FOLDER_DEPTH_EXCEEDED`, async () => {
    const { api } = await setup();
    let parent: string | null = null;
    for (let level = 1; level <= MAX_FOLDER_DEPTH; level++) {
      const res: { status: number; body: { id: string } } = await api.post("/folders", { name: `L${level}`, parent_id: parent });
      expect(res.status, `level ${level}`).toBe(201);
      parent = res.body.id;
    }
    const res = await api.post("/folders", { name: "too deep", parent_id: parent });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("FOLDER_DEPTH_EXCEEDED");
    expect(res.body.detail).toContain(String(MAX_FOLDER_DEPTH));
  });
});

describe("GET /folders", () => {
  test("lists a project's top level by name, or a parent's children, with pagination", async () => {
    const { api, otherId } = await setup();
    for (const name of ["gamma", "Alpha", "beta"]) await api.post("/folders", { name });
    const inOther = (await api.post("/folders", { name: "Elsewhere", project_id: otherId })).body;
    const child = (await api.post("/folders", { name: "Child", parent_id: inOther.id })).body;

    const top = await api.get("/folders");
    expect(names(top.body.items)).toEqual(["Alpha", "beta", "gamma"]);
    expect(top.body).toMatchObject({ total_count: 3, limit: 50, offset: 0, has_more: false });

    const paged = await api.get("/folders?limit=2&offset=1");
    expect(names(paged.body.items)).toEqual(["beta", "gamma"]);
    expect(paged.body.has_more).toBe(false);
    expect((await api.get("/folders?limit=1")).body.has_more).toBe(true);

    expect(names((await api.get(`/folders?project_id=${otherId}`)).body.items)).toEqual(["Elsewhere"]);
    const children = await api.get(`/folders?parent_id=${inOther.id}`);
    expect(children.body.items.map((f: { id: string }) => f.id)).toEqual([child.id]);
  });

  test("query errors: bad limit 400, parent outside the given project 400, unknown ids 404", async () => {
    const { api, defaultId, otherId } = await setup();
    const folder = (await api.post("/folders", { name: "F", project_id: otherId })).body;
    for (const q of ["limit=0", "limit=101", "project_id=abc", "parent_id=abc"]) {
      expect((await api.get(`/folders?${q}`)).status, q).toBe(400);
    }
    expect((await api.get(`/folders?parent_id=${folder.id}&project_id=${defaultId}`)).status).toBe(400);
    expect((await api.get(`/folders?project_id=${crypto.randomUUID()}`)).status).toBe(404);
    expect((await api.get(`/folders?parent_id=${crypto.randomUUID()}`)).status).toBe(404);
  });

  test("file_count counts live files directly in the folder", async () => {
    const { tenant, api, defaultId } = await setup();
    const folder = (await api.post("/folders", { name: "Photos" })).body;
    await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId: defaultId, folderId: folder.id });
    await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId: defaultId, folderId: folder.id, deleted: true });
    expect((await api.get(`/folders/${folder.id}`)).body.file_count).toBe(1);
  });
});

describe("PATCH /folders/{folder_id}", () => {
  test("rename, with the sibling-name rule", async () => {
    const { api } = await setup();
    await api.post("/folders", { name: "Taken" });
    const folder = (await api.post("/folders", { name: "Old" })).body;
    const renamed = await api.patch(`/folders/${folder.id}`, { name: "New" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe("New");
    expect(renamed.body.path).toEqual([{ id: folder.id, name: "New" }]);
    const clash = await api.patch(`/folders/${folder.id}`, { name: "taken" });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe("FOLDER_NAME_EXISTS");
    expect((await api.patch(`/folders/${folder.id}`, { name: "NEW" })).status).toBe(200);
  });

  test("move under another folder and back to the top level", async () => {
    const { api } = await setup();
    const a = (await api.post("/folders", { name: "A" })).body;
    const b = (await api.post("/folders", { name: "B" })).body;
    const moved = await api.patch(`/folders/${b.id}`, { parent_id: a.id });
    expect(moved.status).toBe(200);
    expect(moved.body.parent_id).toBe(a.id);
    expect(moved.body.path.map((f: { name: string }) => f.name)).toEqual(["A", "B"]);
    expect(names((await api.get("/folders")).body.items)).toEqual(["A"]);
    const back = await api.patch(`/folders/${b.id}`, { parent_id: null });
    expect(back.body.parent_id).toBeNull();
    expect(names((await api.get("/folders")).body.items)).toEqual(["A", "B"]);
  });

  test("moving a folder into itself or its own subtree is 422 and changes nothing", async () => {
    const { api } = await setup();
    const a = (await api.post("/folders", { name: "A" })).body;
    const b = (await api.post("/folders", { name: "B", parent_id: a.id })).body;
    const c = (await api.post("/folders", { name: "C", parent_id: b.id })).body;
    for (const target of [a.id, c.id]) {
      const res = await api.patch(`/folders/${a.id}`, { parent_id: target });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("BUSINESS_RULE_VIOLATION");
    }
    expect((await api.get(`/folders/${a.id}`)).body.parent_id).toBeNull();
  });

  test("a move that would exceed the depth limit is 422 FOLDER_DEPTH_EXCEEDED", async () => {
    const { api } = await setup();
    let deep: string | null = null;
    for (let level = 1; level <= MAX_FOLDER_DEPTH - 1; level++) {
      deep = (await api.post("/folders", { name: `D${level}`, parent_id: deep })).body.id as string;
    }
    const sub = (await api.post("/folders", { name: "Sub" })).body;
    await api.post("/folders", { name: "Leaf", parent_id: sub.id });
    const res = await api.patch(`/folders/${sub.id}`, { parent_id: deep });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("FOLDER_DEPTH_EXCEEDED");
    expect((await api.get(`/folders/${sub.id}`)).body.parent_id).toBeNull();
  });

  test("moving to another project carries the subtree and its files along", async () => {
    const { tenant, api, defaultId, otherId } = await setup();
    const top = (await api.post("/folders", { name: "Top" })).body;
    const inner = (await api.post("/folders", { name: "Inner", parent_id: top.id })).body;
    await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId: defaultId, folderId: inner.id });
    await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId: defaultId });

    const res = await api.patch(`/folders/${top.id}`, { project_id: otherId });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ project_id: otherId, parent_id: null });
    expect((await api.get(`/folders/${inner.id}`)).body.project_id).toBe(otherId);
    expect((await api.get(`/projects/${otherId}`)).body).toMatchObject({ folder_count: 2, file_count: 1 });
    expect((await api.get(`/projects/${defaultId}`)).body).toMatchObject({ folder_count: 0, file_count: 1 });
  });

  test("moving under a folder of another project moves it to that project", async () => {
    const { api, otherId } = await setup();
    const target = (await api.post("/folders", { name: "Target", project_id: otherId })).body;
    const folder = (await api.post("/folders", { name: "Mover" })).body;
    const res = await api.patch(`/folders/${folder.id}`, { parent_id: target.id });
    expect(res.body).toMatchObject({ project_id: otherId, parent_id: target.id });
  });

  test("a move into a place where the name is taken is 409", async () => {
    const { api } = await setup();
    const a = (await api.post("/folders", { name: "A" })).body;
    await api.post("/folders", { name: "Same", parent_id: a.id });
    const same = (await api.post("/folders", { name: "same" })).body;
    const res = await api.patch(`/folders/${same.id}`, { parent_id: a.id });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("FOLDER_NAME_EXISTS");
  });
});

describe("DELETE /folders/{folder_id}", () => {
  test("204 when empty; 409 FOLDER_NOT_EMPTY with subfolders, files or recoverable deleted files", async () => {
    const { tenant, api, defaultId } = await setup();
    const parent = (await api.post("/folders", { name: "Parent" })).body;
    const child = (await api.post("/folders", { name: "Child", parent_id: parent.id })).body;
    let res = await api.delete(`/folders/${parent.id}`);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("FOLDER_NOT_EMPTY");
    expect(res.body.detail).toContain("1 subfolder");

    await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId: defaultId, folderId: child.id, deleted: true });
    res = await api.delete(`/folders/${child.id}`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain("deleted");

    const empty = (await api.post("/folders", { name: "Empty" })).body;
    expect((await api.delete(`/folders/${empty.id}`)).status).toBe(204);
    const gone = await api.get(`/folders/${empty.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe("FOLDER_NOT_FOUND");
    expect((await api.get(`/folders/${parent.id}`)).status).toBe(200);
  });
});

describe("isolation and permissions", () => {
  test("another organization sees 404 for every folder operation and cannot use it as a parent", async () => {
    const owner = await setup();
    const folder = (await owner.api.post("/folders", { name: "Private" })).body;
    const intruder = (await newTenant()).api;
    expect((await intruder.get(`/folders/${folder.id}`)).status).toBe(404);
    expect((await intruder.patch(`/folders/${folder.id}`, { name: "X" })).status).toBe(404);
    expect((await intruder.delete(`/folders/${folder.id}`)).status).toBe(404);
    expect((await intruder.get(`/folders?parent_id=${folder.id}`)).status).toBe(404);
    expect((await intruder.post("/folders", { name: "X", parent_id: folder.id })).status).toBe(404);
    expect((await intruder.post("/folders", { name: "X", project_id: owner.otherId })).status).toBe(404);
    expect((await intruder.get("/folders")).body.total_count).toBe(0);
    expect((await owner.api.get(`/folders/${folder.id}`)).body.name).toBe("Private");
  });

  test("VIEW to read, EDIT to create and change, DELETE to delete", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM", permissions: ["view", "edit", "delete"] });
    const folder = (await tenant.api.post("/folders", { name: "F" })).body;
    const viewOnly = await tenant.keyWith(["view"]);
    expect((await viewOnly.get("/folders")).status).toBe(200);
    expect((await viewOnly.post("/folders", { name: "G" })).status).toBe(403);
    expect((await viewOnly.patch(`/folders/${folder.id}`, { name: "G" })).status).toBe(403);
    expect((await viewOnly.delete(`/folders/${folder.id}`)).status).toBe(403);
    expect((await (await tenant.keyWith(["edit"])).get(`/folders/${folder.id}`)).status).toBe(403);
    expect((await (await tenant.keyWith(["delete"])).delete(`/folders/${folder.id}`)).status).toBe(204);
  });
});

describe("POST /files/batch-move", () => {
  const placeOf = async (api: Tenant["api"], id: string) => {
    const body = (await api.get(`/files/${id}`)).body;
    return [body.project_id, body.folder_id];
  };

  test("into a folder (and its project), to a project's top level, and out of folders in place", async () => {
    const { tenant, api, defaultId, otherId } = await setup();
    const folder = (await api.post("/folders", { name: "Site photos", project_id: otherId })).body;
    const a = await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId: defaultId });
    const b = await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId: defaultId });
    const into = await api.post("/files/batch-move", { file_ids: [a, b], folder_id: folder.id });
    expect(into.status).toBe(200);
    expect(into.body).toMatchObject({ project_id: otherId, folder_id: folder.id, summary: { total: 2, moved: 2, failed: 0 }, failed: [] });
    expect(await placeOf(api, a)).toEqual([otherId, folder.id]);
    expect((await api.get(`/folders/${folder.id}`)).body.file_count).toBe(2);
    expect((await api.get(`/files?folder_id=${folder.id}`)).body.total_count).toBe(2);

    // folder_id null alone: out of the folder, still in its project.
    expect((await api.post("/files/batch-move", { file_ids: [a], folder_id: null })).body.summary.moved).toBe(1);
    expect(await placeOf(api, a)).toEqual([otherId, null]);
    // project_id alone: the top level of that project.
    expect((await api.post("/files/batch-move", { file_ids: [b], project_id: defaultId })).body.summary.moved).toBe(1);
    expect(await placeOf(api, b)).toEqual([defaultId, null]);
    expect((await api.get(`/folders/${folder.id}`)).body.file_count).toBe(0);
  });

  test("missing, deleted and foreign files are reported one by one; the rest move", async () => {
    const { tenant, api, defaultId } = await setup();
    const stranger = await newTenant();
    const folder = (await api.post("/folders", { name: "Keep" })).body;
    const live = await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId: defaultId });
    const gone = await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId: defaultId, deleted: true });
    const theirs = await insertFileRow(server.ctx.sql, { orgId: stranger.orgId, projectId: (await stranger.api.get("/projects")).body.items[0].id });
    const res = await api.post("/files/batch-move", { file_ids: [live, gone, theirs], folder_id: folder.id });
    expect(res.status).toBe(200);
    expect(res.body.moved.map((m: { id: string }) => m.id)).toEqual([live]);
    expect(res.body.failed.map((m: { id: string; message: string }) => [m.id, m.message])).toEqual([[gone, "file not found"], [theirs, "file not found"]]);
    expect((await stranger.api.get(`/files/${theirs}`)).body.folder_id).toBeNull();
  });

  test("validation: a target is required, a folder and a disagreeing project are 400, foreign targets 404, EDIT needed", async () => {
    const { tenant, api, defaultId, otherId } = await setup();
    const stranger = await newTenant();
    const theirFolder = (await stranger.api.post("/folders", { name: "Theirs" })).body;
    const folder = (await api.post("/folders", { name: "Mine" })).body;
    const id = await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId: defaultId });
    const cases: [unknown, number, string][] = [
      [{ file_ids: [id] }, 400, "folder_id"],
      [{ file_ids: [], folder_id: folder.id }, 400, "file_ids"],
      [{ file_ids: [id, id], folder_id: folder.id }, 400, "unique"],
      [{ file_ids: ["nope"], folder_id: folder.id }, 400, "file_ids"],
      [{ file_ids: [id], folder_id: folder.id, project_id: otherId }, 400, "folder_id"],
      [{ file_ids: [id], folder_id: theirFolder.id }, 404, theirFolder.id],
      [{ file_ids: [id], project_id: crypto.randomUUID() }, 404, "project"],
    ];
    for (const [body, status, detail] of cases) {
      const res = await api.post("/files/batch-move", body);
      expect([res.status, res.body.detail?.includes(detail)], JSON.stringify(body)).toEqual([status, true]);
    }
    expect(await placeOf(api, id)).toEqual([defaultId, null]);
    expect((await (await tenant.keyWith(["view"])).post("/files/batch-move", { file_ids: [id], folder_id: folder.id })).status).toBe(403);
  });
});
