/**
 * People through real HTTP: real faces (thumbnails from @vladmandic/human's face-match
 * screenshot) pasted into different synthetic scenes, at different sizes, mirrored and
 * re-exposed, make "photos" of two people. The clustering job makes a person of the first two
 * photos of one face; a third photo joins that person at once (incremental); the other face
 * becomes a person of its own; rename, hide, same-person search and merge work, and deleting a
 * file updates the counts. Another organization sees none of it; roles and bad input are checked.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import sharp from "sharp";
import { photo } from "./support/images.ts";
import { jobDone, processed, waitFor } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { uploadFile } from "./support/uploads.ts";

const assets = join(dirname(createRequire(import.meta.url).resolve("@vladmandic/human")), "..", "assets");

/** One face thumbnail of the face-match screenshot (18 columns; rows from y = 283). */
function face(column: number, row: number): Promise<Buffer> {
  const tops = [283, 395, 508, 620, 732, 845];
  return sharp(join(assets, "screenshot-facematch.jpg"))
    .extract({ left: Math.round((column * 1920) / 18) + 3, top: tops[row]! + 3, width: 100, height: 100 })
    .toBuffer();
}

/** A scene (synthetic landscape) with the face pasted at `size` px, `left`/`top` as shares of the free room. */
async function scene(faceImage: Buffer, seed: number, size: number, at: [number, number], options: { mirror?: boolean; brightness?: number } = {}): Promise<Buffer> {
  let pasted = sharp(faceImage).resize(size, size);
  if (options.mirror) pasted = pasted.flop();
  if (options.brightness) pasted = pasted.modulate({ brightness: options.brightness });
  const [width, height] = [900, 700];
  return sharp(await photo(seed, width, height))
    .composite([{ input: await pasted.toBuffer(), left: Math.round(at[0] * (width - size)), top: Math.round(at[1] * (height - size)) }])
    .jpeg({ quality: 92 })
    .toBuffer();
}

let server: TestServer;
let owner: Tenant;
let other: Tenant;
const ids: Record<string, string> = {};
let alice: Buffer;
let bob: Buffer;

async function upload(tenant: Tenant, bytes: Uint8Array, filename: string): Promise<string> {
  const id = await uploadFile(tenant.api, bytes, filename, { auto_describe: "false" });
  await processed(tenant, id, 240_000);
  return id;
}

const facesOf = async (tenant: Tenant, fileId: string) => {
  const res = await tenant.api.get(`/files/${fileId}/faces`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.faces as { id: string; person_id: string | null; person_name: string | null; box: Record<string, number>; score: number }[];
};

async function recluster(tenant: Tenant) {
  const res = await tenant.api.post("/people/recluster");
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  await jobDone(tenant, res.body.job_id, 120_000);
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.tenant({ tier: "CUSTOM" });
  other = await server.tenant({ tier: "CUSTOM" });
  alice = await face(0, 0);
  bob = await face(2, 1);
  ids.alice1 = await upload(owner, await scene(alice, 1, 260, [0.2, 0.3]), "alice-1.jpg");
  ids.alice2 = await upload(owner, await scene(alice, 2, 200, [0.8, 0.6], { mirror: true, brightness: 1.15 }), "alice-2.jpg");
  ids.bob1 = await upload(owner, await scene(bob, 3, 240, [0.5, 0.4]), "bob-1.jpg");
  ids.theirs = await upload(other, await scene(alice, 4, 240, [0.3, 0.5]), "theirs.jpg");
}, 900_000);
afterAll(() => server.close());

describe("people (extension)", () => {
  let alicePerson: string;

  test("each photo's face is found with its box; faces wait for the clustering job", async () => {
    for (const name of ["alice1", "alice2", "bob1"]) {
      const faces = await facesOf(owner, ids[name]!);
      expect(faces, name).toHaveLength(1);
      expect(faces[0]!.box.x_max!).toBeGreaterThan(faces[0]!.box.x_min!);
      expect(faces[0]!.score).toBeGreaterThan(0.2);
    }
  });

  test("clustering makes a person of the two photos of one face, and none of a face seen once", async () => {
    await recluster(owner);
    const people = await owner.api.get("/people");
    expect(people.status).toBe(200);
    expect(people.body.total_count).toBe(1);
    const [person] = people.body.items;
    expect(person).toMatchObject({ name: null, hidden: false, face_count: 2, file_count: 2 });
    expect([ids.alice1, ids.alice2]).toContain(person.cover.file_id);
    expect(person.cover.thumbnail_url).toStartWith("http");
    alicePerson = person.id;
    expect((await facesOf(owner, ids.alice1!))[0]!.person_id).toBe(alicePerson);
    expect((await facesOf(owner, ids.bob1!))[0]!.person_id).toBeNull();
  });

  test("a new photo of the face joins the person at once", async () => {
    ids.alice3 = await upload(owner, await scene(alice, 5, 300, [0.6, 0.2], { brightness: 0.85 }), "alice-3.jpg");
    expect((await facesOf(owner, ids.alice3))[0]!.person_id).toBe(alicePerson);
    const files = await owner.api.get(`/people/${alicePerson}/files`);
    expect(files.status).toBe(200);
    expect(files.body.items.map((f: { id: string }) => f.id).sort()).toEqual([ids.alice1, ids.alice2, ids.alice3].sort());
    expect(files.body.items[0]).toMatchObject({ media_type: "image" });
  });

  test("rename and hide", async () => {
    const renamed = await owner.api.patch(`/people/${alicePerson}`, { name: "  Alice  " });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: alicePerson, name: "Alice", hidden: false, file_count: 3 });
    expect((await facesOf(owner, ids.alice1!))[0]!.person_name).toBe("Alice");
    expect((await owner.api.patch(`/people/${alicePerson}`, { hidden: true })).body.hidden).toBe(true);
    expect((await owner.api.get("/people")).body.total_count).toBe(0);
    expect((await owner.api.get("/people?include_hidden=true")).body.items[0]).toMatchObject({ id: alicePerson, hidden: true });
    await owner.api.patch(`/people/${alicePerson}`, { hidden: false });
  });

  test("same-person search finds the face in the other photos, not the other face", async () => {
    const [first] = await facesOf(owner, ids.alice1!);
    const res = await owner.api.get(`/faces/${first!.id}/similar`);
    expect(res.status).toBe(200);
    const files = res.body.items.map((f: { file_id: string }) => f.file_id);
    expect(files.sort()).toEqual([ids.alice2, ids.alice3].sort());
    expect(res.body.items[0].similarity).toBeGreaterThan(0.7);
    const [bobFace] = await facesOf(owner, ids.bob1!);
    const bobs = await owner.api.get(`/faces/${bobFace!.id}/similar`);
    expect(bobs.body.items.map((f: { file_id: string }) => f.file_id)).not.toContain(ids.alice1);
  });

  test("merge moves a person's faces into another and removes it", async () => {
    ids.bob2 = await upload(owner, await scene(bob, 6, 220, [0.1, 0.7], { mirror: true }), "bob-2.jpg");
    await recluster(owner);
    const bobPerson = (await facesOf(owner, ids.bob1!))[0]!.person_id!;
    expect(bobPerson).not.toBeNull();
    expect(bobPerson).not.toBe(alicePerson);
    const merged = await owner.api.post(`/people/${alicePerson}/merge`, { person_ids: [bobPerson] });
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    expect(merged.body).toMatchObject({ id: alicePerson, name: "Alice", face_count: 5, file_count: 5 });
    expect((await owner.api.get(`/people/${bobPerson}`)).status).toBe(404);
    expect((await facesOf(owner, ids.bob2!))[0]!.person_id).toBe(alicePerson);
  });

  test("a deleted file no longer counts", async () => {
    expect((await owner.api.delete(`/files/${ids.bob2}`)).status).toBe(200);
    const person = await owner.api.get(`/people/${alicePerson}`);
    expect(person.body).toMatchObject({ face_count: 4, file_count: 4 });
    const files = await owner.api.get(`/people/${alicePerson}/files`);
    expect(files.body.items.map((f: { id: string }) => f.id)).not.toContain(ids.bob2);
  });

  test("another organization sees none of it; its own face is clustered apart", async () => {
    expect((await other.api.get("/people")).body.total_count).toBe(0);
    expect((await other.api.get(`/people/${alicePerson}`)).status).toBe(404);
    expect((await other.api.get(`/people/${alicePerson}/files`)).status).toBe(404);
    expect((await other.api.patch(`/people/${alicePerson}`, { name: "Mallory" })).status).toBe(404);
    expect((await other.api.post(`/people/${alicePerson}/merge`, { person_ids: [alicePerson] })).status).toBe(404);
    const [aliceFace] = await facesOf(owner, ids.alice1!);
    expect((await other.api.get(`/faces/${aliceFace!.id}/similar`)).status).toBe(404);
    expect((await other.api.get(`/files/${ids.alice1}/faces`)).status).toBe(404);
    // The other organization's photo of the same face never joined the owner's person.
    const [theirs] = await facesOf(other, ids.theirs!);
    expect(theirs!.person_id).toBeNull();
    expect((await owner.api.get(`/people/${alicePerson}`)).body.name).toBe("Alice");
  });

  test("roles: viewing needs VIEW, changes need EDIT", async () => {
    const viewer = await owner.keyWith(["view"]);
    expect((await viewer.get("/people")).status).toBe(200);
    expect((await viewer.patch(`/people/${alicePerson}`, { name: "X" })).status).toBe(403);
    expect((await viewer.post(`/people/${alicePerson}/merge`, { person_ids: [crypto.randomUUID()] })).status).toBe(403);
    expect((await viewer.post("/people/recluster")).status).toBe(403);
    expect((await (await owner.keyWith(["edit"])).get("/people")).status).toBe(403);
    expect((await server.anonymous().get("/people")).status).toBe(401);
  });

  test("bad input is 400 with the error envelope; unknown ids 404", async () => {
    const cases: [Promise<{ status: number; body: any }>, number][] = [
      [owner.api.patch(`/people/${alicePerson}`, {}), 400],
      [owner.api.patch(`/people/${alicePerson}`, { name: "x".repeat(201) }), 400],
      [owner.api.patch(`/people/${alicePerson}`, { hidden: "yes" }), 400],
      [owner.api.post(`/people/${alicePerson}/merge`, { person_ids: ["nope"] }), 400],
      [owner.api.post(`/people/${alicePerson}/merge`, { person_ids: [] }), 400],
      [owner.api.post(`/people/${alicePerson}/merge`, { person_ids: [alicePerson] }), 400],
      [owner.api.get("/people/not-a-uuid"), 400],
      [owner.api.get("/people?limit=500"), 400],
      [owner.api.get(`/faces/${alicePerson}/similar?limit=0`), 400],
      [owner.api.get(`/people/${crypto.randomUUID()}`), 404],
      [owner.api.post(`/people/${alicePerson}/merge`, { person_ids: [crypto.randomUUID()] }), 404],
      [owner.api.get(`/faces/${crypto.randomUUID()}/similar`), 404],
    ];
    for (const [request, status] of cases) {
      const res = await request;
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(typeof res.body.detail).toBe("string");
    }
    // A refused merge changed nothing.
    await waitFor(async () => (await owner.api.get(`/people/${alicePerson}`)).body.face_count === 4, { what: "the person unchanged" });
  });

  test("analysing a photo again keeps its faces' ids, people and a reviewer's \"not this person\"", async () => {
    const [before] = await facesOf(owner, ids.alice2!);
    const [rejected] = await facesOf(owner, ids.alice3!);
    expect([before!.person_id, rejected!.person_id]).toEqual([alicePerson, alicePerson]);
    expect((await owner.api.patch(`/faces/${rejected!.id}`, { person_id: null })).status).toBe(200);
    for (const id of [ids.alice2!, ids.alice3!]) {
      const res = await owner.api.post(`/files/${id}/reprocess`);
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      expect((await jobDone(owner, res.body.job_ids[0], 240_000)).status).toBe("completed");
    }
    const [after] = await facesOf(owner, ids.alice2!);
    expect(after).toMatchObject({ id: before!.id, person_id: alicePerson });
    const [still] = await facesOf(owner, ids.alice3!);
    expect(still).toMatchObject({ id: rejected!.id, person_id: null });
    expect((await owner.api.get(`/people/${alicePerson}`)).body.face_count).toBe(3);
  });
});
