/**
 * Reviewing a person through real HTTP (extensions): a person's faces with their thumbnails
 * (GET /people/{id}/faces), "not this person" and giving a face to another person
 * (PATCH /faces/{id}); roles before validation, bad input, and another organization's faces and
 * people. Faces and people are seeded as the pipeline and the clustering job write them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { photo } from "./support/images.ts";
import { insertFaceRow, insertFileRow, insertPersonRow, insertThumbnailRow, defaultProjectOf } from "./support/rows.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";

let server: TestServer;
let owner: Tenant;
let other: Tenant;
let alice: string;
let bob: string;
let theirPerson: string;
let theirFace: string;
const faces: string[] = [];
const files: string[] = [];

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.tenant({ tier: "CUSTOM" });
  other = await server.tenant({ tier: "CUSTOM" });
  const db = server.ctx.sql;
  const project = await defaultProjectOf(db, owner.orgId);
  alice = await insertPersonRow(db, { orgId: owner.orgId, name: "Alice" });
  bob = await insertPersonRow(db, { orgId: owner.orgId, name: "Bob" });
  for (let i = 0; i < 3; i++) {
    const file = await insertFileRow(db, { orgId: owner.orgId, projectId: project, filename: `alice-${i}.jpg`, contentCreatedAt: `2024-0${i + 1}-10T10:00:00.000Z` });
    files.push(file);
    faces.push(await insertFaceRow(db, { orgId: owner.orgId, fileId: file, personId: alice }));
  }
  await insertThumbnailRow(server.ctx, files[2]!, await photo(1, 256, 192), { width: 256, height: 192 });
  const bobFile = await insertFileRow(db, { orgId: owner.orgId, projectId: project, filename: "bob.jpg" });
  await insertFaceRow(db, { orgId: owner.orgId, fileId: bobFile, personId: bob });
  theirPerson = await insertPersonRow(db, { orgId: other.orgId, name: "Theirs" });
  const theirFile = await insertFileRow(db, { orgId: other.orgId, projectId: await defaultProjectOf(db, other.orgId), filename: "theirs.jpg" });
  theirFace = await insertFaceRow(db, { orgId: other.orgId, fileId: theirFile, personId: theirPerson });
}, 60_000);
afterAll(() => server.close());

test("a person's faces come newest taken first, paged, with their file's name and thumbnail", async () => {
  const first = await owner.api.get(`/people/${alice}/faces?limit=2`);
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  expect(first.body).toMatchObject({ total_count: 3, limit: 2, offset: 0, has_more: true });
  expect(first.body.items.map((f: { id: string }) => f.id)).toEqual([faces[2], faces[1]]);
  expect(first.body.items[0]).toMatchObject({ file_id: files[2], filename: "alice-2.jpg", person_id: alice, person_name: "Alice", box: { x_min: 0.3, y_min: 0.2, x_max: 0.6, y_max: 0.6 } });
  expect(first.body.items[0].thumbnail_url).toStartWith("http");
  expect(first.body.items[1].thumbnail_url).toBeNull();
  const thumbnail = await fetch(first.body.items[0].thumbnail_url);
  expect(thumbnail.status).toBe(200);
  expect(thumbnail.headers.get("content-type")).toBe("image/jpeg");
  const rest = await owner.api.get(`/people/${alice}/faces?limit=2&offset=2`);
  expect(rest.body.items.map((f: { id: string }) => f.id)).toEqual([faces[0]]);
  expect(rest.body.has_more).toBe(false);
});

test("not this person takes the face from its person; a face can be given to another person", async () => {
  const taken = await owner.api.patch(`/faces/${faces[0]}`, { person_id: null });
  expect(taken.status, JSON.stringify(taken.body)).toBe(200);
  expect(taken.body).toMatchObject({ id: faces[0], file_id: files[0], person_id: null, person_name: null });
  expect((await owner.api.get(`/people/${alice}`)).body).toMatchObject({ face_count: 2, file_count: 2 });
  expect((await owner.api.get(`/people/${alice}/faces`)).body.items.map((f: { id: string }) => f.id)).not.toContain(faces[0]);
  expect((await owner.api.get(`/files/${files[0]}/faces`)).body.faces[0].person_id).toBeNull();

  const given = await owner.api.patch(`/faces/${faces[1]}`, { person_id: bob.toUpperCase() });
  expect(given.status, JSON.stringify(given.body)).toBe(200);
  expect(given.body).toMatchObject({ id: faces[1], person_id: bob, person_name: "Bob" });
  expect((await owner.api.get(`/people/${bob}`)).body).toMatchObject({ face_count: 2, file_count: 2 });
  expect((await owner.api.get(`/people/${alice}`)).body).toMatchObject({ face_count: 1 });
  // Back again (the dashboard's Undo).
  expect((await owner.api.patch(`/faces/${faces[0]}`, { person_id: alice })).body.person_id).toBe(alice);
  expect((await owner.api.get(`/people/${alice}`)).body.face_count).toBe(2);
});

test("another organization's faces and people are not found", async () => {
  const face = await owner.api.patch(`/faces/${theirFace}`, { person_id: null });
  expect(face.status).toBe(404);
  expect(face.body.code).toBe("FACE_NOT_FOUND");
  const person = await owner.api.patch(`/faces/${faces[0]}`, { person_id: theirPerson });
  expect(person.status).toBe(404);
  expect(person.body.code).toBe("PERSON_NOT_FOUND");
  expect((await owner.api.get(`/people/${theirPerson}/faces`)).status).toBe(404);
  expect((await other.api.get(`/people/${alice}/faces`)).body.code).toBe("PERSON_NOT_FOUND");
  // Nothing moved.
  expect((await other.api.get(`/people/${theirPerson}`)).body.face_count).toBe(1);
  expect((await owner.api.get(`/files/${files[0]}/faces`)).body.faces[0].person_id).toBe(alice);
});

test("a key without EDIT is refused before its body is read; bad bodies and ids say what is wrong", async () => {
  const viewer = await owner.keyWith(["view"]);
  const refused = await viewer.patch(`/faces/${faces[0]}`, { person_id: "not a uuid" });
  expect(refused.status).toBe(403);
  expect(refused.body.detail).toContain("EDIT");
  expect((await viewer.get(`/people/${alice}/faces`)).status).toBe(200);

  for (const body of [{}, { person_id: "someone" }, { person_id: 3 }]) {
    const bad = await owner.api.patch(`/faces/${faces[0]}`, body);
    expect(bad.status, JSON.stringify(body)).toBe(400);
    expect(bad.body.detail).toContain("person_id");
  }
  const badFace = await owner.api.patch("/faces/not-a-face", { person_id: null });
  expect(badFace.status).toBe(400);
  expect(badFace.body.detail).toContain("face_id");
  expect((await owner.api.patch(`/faces/${crypto.randomUUID()}`, { person_id: null })).body.code).toBe("FACE_NOT_FOUND");
  const badLimit = await owner.api.get(`/people/${alice}/faces?limit=500`);
  expect(badLimit.status).toBe(400);
  expect(badLimit.body.detail).toContain("limit");
});
