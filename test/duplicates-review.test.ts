/**
 * "Not duplicates" through real HTTP (POST /duplicates/not-duplicates, extension): the files
 * named leave the groups, also once fingerprinting has written their pairs again; a group's other
 * pairs stay. Roles before validation, bad bodies, another organization's files. Pairs are seeded
 * as the duplicates stage writes them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { pairAll, setImageFacts } from "./support/duplicate-rows.ts";
import { insertFileRow, defaultProjectOf } from "./support/rows.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";

let server: TestServer;
let owner: Tenant;
let other: Tenant;
const ids: string[] = [];
let theirs: string;

const groups = async (tenant: Tenant) => {
  const res = await tenant.api.get("/duplicates/groups");
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.items as { files: { id: string }[] }[]).map((g) => g.files.map((f) => f.id).sort());
};

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.tenant({ tier: "CUSTOM" });
  other = await server.tenant({ tier: "CUSTOM" });
  const db = server.ctx.sql;
  const project = await defaultProjectOf(db, owner.orgId);
  for (let i = 0; i < 4; i++) {
    const id = await insertFileRow(db, { orgId: owner.orgId, projectId: project, filename: `copy-${i}.jpg` });
    await setImageFacts(db, id, owner.orgId, { width: 1000 - i, height: 800, sizeBytes: 100_000, sharpness: 100 });
    ids.push(id);
  }
  // One group of three copies (0, 1, 2) and a pair (2, 3) chained to it: four files in one group.
  await pairAll(db, owner.orgId, ids.slice(0, 3));
  await pairAll(db, owner.orgId, [ids[2]!, ids[3]!]);
  theirs = await insertFileRow(db, { orgId: other.orgId, projectId: await defaultProjectOf(db, other.orgId), filename: "theirs.jpg" });
}, 60_000);
afterAll(() => server.close());

test("files said to be not duplicates leave the groups, for good", async () => {
  expect(await groups(owner)).toEqual([[...ids].sort()]);
  const res = await owner.api.post("/duplicates/not-duplicates", { file_ids: [ids[3], ids[2]!.toUpperCase()] });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toEqual({ file_ids: [ids[3], ids[2]], separated_pair_count: 1 });
  expect(await groups(owner)).toEqual([ids.slice(0, 3).sort()]);

  // Fingerprinting the files again rewrites their pairs: the verdict stays.
  await server.ctx.sql.run("DELETE FROM duplicate_pairs WHERE file_a = ? OR file_b = ?", [ids[3]!, ids[3]!]);
  await pairAll(server.ctx.sql, owner.orgId, [ids[2]!, ids[3]!]);
  expect(await groups(owner)).toEqual([ids.slice(0, 3).sort()]);

  // A whole group: none of them is grouped with another.
  const all = await owner.api.post("/duplicates/not-duplicates", { file_ids: ids.slice(0, 3) });
  expect(all.body.separated_pair_count).toBe(3);
  expect(await groups(owner)).toEqual([]);
});

test("another organization's file is not found, and nothing is recorded", async () => {
  const db = server.ctx.sql;
  const project = await defaultProjectOf(db, owner.orgId);
  const a = await insertFileRow(db, { orgId: owner.orgId, projectId: project, filename: "a.jpg" });
  const b = await insertFileRow(db, { orgId: owner.orgId, projectId: project, filename: "b.jpg" });
  await pairAll(db, owner.orgId, [a, b]);
  const res = await owner.api.post("/duplicates/not-duplicates", { file_ids: [a, b, theirs] });
  expect(res.status).toBe(404);
  expect(res.body.code).toBe("FILE_NOT_FOUND");
  expect(await groups(owner)).toEqual([[a, b].sort()]);
  expect((await other.api.post("/duplicates/not-duplicates", { file_ids: [a, theirs] })).status).toBe(404);
});

test("a key without EDIT is refused before its body is read; bad bodies say what is wrong", async () => {
  const viewer = await owner.keyWith(["view"]);
  const refused = await viewer.post("/duplicates/not-duplicates", { file_ids: ["nope"] });
  expect(refused.status).toBe(403);
  expect(refused.body.detail).toContain("EDIT");
  for (const body of [{}, { file_ids: [ids[0]] }, { file_ids: [ids[0], "x"] }, { file_ids: [ids[0], ids[0]] }]) {
    const bad = await owner.api.post("/duplicates/not-duplicates", body);
    expect(bad.status, JSON.stringify(body)).toBe(400);
    expect(bad.body.detail).toContain("file_ids");
  }
});

test("\"not duplicates\" can be taken back: the files group again; roles, bad bodies and another organization's files as for the verdict", async () => {
  const db = server.ctx.sql;
  const project = await defaultProjectOf(db, owner.orgId);
  const made: string[] = [];
  for (const filename of ["again-a.jpg", "again-b.jpg", "again-c.jpg"]) made.push(await insertFileRow(db, { orgId: owner.orgId, projectId: project, filename }));
  const [a, b, c] = made;
  await pairAll(db, owner.orgId, [a!, b!, c!]);
  const group = [a!, b!, c!].sort();
  const before = (await groups(owner)).filter((g) => g.includes(a!));
  expect(before).toEqual([group]);
  expect((await owner.api.post("/duplicates/not-duplicates", { file_ids: [a, b, c] })).body.separated_pair_count).toBe(3);
  expect((await groups(owner)).filter((g) => g.includes(a!))).toEqual([]);

  const viewer = await owner.keyWith(["view"]);
  expect((await viewer.post("/duplicates/not-duplicates/undo", { file_ids: ["nope"] })).status).toBe(403);
  expect((await owner.api.post("/duplicates/not-duplicates/undo", { file_ids: [a] })).status).toBe(400);
  const foreign = await owner.api.post("/duplicates/not-duplicates/undo", { file_ids: [a, theirs] });
  expect([foreign.status, foreign.body.code]).toEqual([404, "FILE_NOT_FOUND"]);
  expect((await groups(owner)).filter((g) => g.includes(a!))).toEqual([]);

  // Taken back for two of them: that pair groups again, the third stays apart.
  const undone = await owner.api.post("/duplicates/not-duplicates/undo", { file_ids: [b!.toUpperCase(), a] });
  expect(undone.status, JSON.stringify(undone.body)).toBe(200);
  expect(undone.body).toEqual({ file_ids: [b, a], regrouped_pair_count: 1 });
  expect((await groups(owner)).filter((g) => g.includes(a!))).toEqual([[a!, b!].sort()]);
  expect((await owner.api.post("/duplicates/not-duplicates/undo", { file_ids: [a, b, c] })).body.regrouped_pair_count).toBe(2);
  expect((await groups(owner)).filter((g) => g.includes(a!))).toEqual([group]);
});
