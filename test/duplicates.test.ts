/**
 * Near-duplicates through real HTTP: a photo, its half-size copy, a re-encoded copy and a copy
 * cropped 5 % form one group whose best is the full-size original; an unrelated photo is in no
 * group; keeping the best trashes the rest (restorable), and a restored copy is grouped again.
 * Another organization sees no group of these; viewing needs VIEW, trashing DELETE; bad bodies
 * are 400. Also the grouping and best-choice rules on their own.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { shiftedThumbCorrelation, THUMB_SIDE, thumbCorrelation } from "../src/duplicates/fingerprint.ts";
import { chooseBest, groupsOf, isNearDuplicate } from "../src/duplicates/near-duplicates.ts";
import { photo } from "./support/images.ts";
import { processed } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { uploadFile } from "./support/uploads.ts";

let server: TestServer;
let owner: Tenant;
let other: Tenant;
const ids: Record<string, string> = {};

const upload = (tenant: Tenant, bytes: Uint8Array, filename: string) => uploadFile(tenant.api, bytes, filename, { auto_describe: "false" });

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.tenant({ tier: "CUSTOM" });
  other = await server.tenant({ tier: "CUSTOM" });
  const original = await photo(7, 1200, 900);
  const versions: Record<string, Buffer> = {
    original,
    half: await sharp(original).resize(600).jpeg({ quality: 90 }).toBuffer(),
    reencoded: await sharp(original).jpeg({ quality: 35 }).toBuffer(),
    cropped: await sharp(original).extract({ left: 60, top: 45, width: 1080, height: 810 }).jpeg({ quality: 90 }).toBuffer(),
    unrelated: await photo(12, 1200, 900),
  };
  // One after another: each is compared with those fingerprinted before it.
  for (const [name, bytes] of Object.entries(versions)) {
    ids[name] = await upload(owner, bytes, `${name}.jpg`);
    await processed(owner, ids[name]!, 180_000);
  }
  ids.theirs = await upload(other, original, "theirs.jpg");
  await processed(other, ids.theirs, 180_000);
}, 600_000);
afterAll(() => server.close());

describe("GET /duplicates/groups (extension)", () => {
  test("the copies form one group, the full-size original first as the best; the unrelated photo is in none", async () => {
    const res = await owner.api.get("/duplicates/groups");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ total_count: 1, limit: 20, offset: 0, has_more: false });
    const [group] = res.body.items;
    expect(group.file_count).toBe(4);
    expect(group.best_file_id).toBe(ids.original);
    expect(group.files.map((f: { id: string }) => f.id).sort()).toEqual([ids.original, ids.half, ids.reencoded, ids.cropped].sort());
    expect(group.files[0]).toMatchObject({ id: ids.original, is_best: true, width: 1200, height: 900, filename: "original.jpg" });
    expect(group.files[0].thumbnail_url).toStartWith("http");
    expect(group.files.filter((f: { is_best: boolean }) => f.is_best)).toHaveLength(1);
    expect(group.files.every((f: { sharpness: number }) => f.sharpness > 0)).toBe(true);
  });

  test("another organization holding the same photo once has no group", async () => {
    const res = await other.api.get("/duplicates/groups");
    expect(res.body).toMatchObject({ items: [], total_count: 0 });
  });

  test("needs VIEW; paging is checked", async () => {
    expect((await (await owner.keyWith(["edit"])).get("/duplicates/groups")).status).toBe(403);
    expect((await server.anonymous().get("/duplicates/groups")).status).toBe(401);
    const bad = await owner.api.get("/duplicates/groups?limit=0");
    expect(bad.status).toBe(400);
    expect(typeof bad.body.detail).toBe("string");
  });
});

describe("POST /duplicates/groups/trash (extension)", () => {
  test("needs DELETE, and a body of unique file UUIDs", async () => {
    expect((await (await owner.keyWith(["view", "edit"])).post("/duplicates/groups/trash", { keep_file_ids: [ids.original] })).status).toBe(403);
    for (const body of [{}, { keep_file_ids: [] }, { keep_file_ids: ["nope"] }, { keep_file_ids: [ids.original, ids.original] }]) {
      const res = await owner.api.post("/duplicates/groups/trash", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(typeof res.body.detail).toBe("string");
    }
    // Nothing was trashed by the refused calls.
    expect((await owner.api.get("/duplicates/groups")).body.total_count).toBe(1);
  });

  test("another organization's file is not found there, and trashes nothing", async () => {
    const res = await other.api.post("/duplicates/groups/trash", { keep_file_ids: [ids.original] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ groups: [{ keep_file_id: ids.original, group_id: null, status: "not_found", trashed_file_ids: [], failed: [] }], trashed_count: 0 });
    expect((await owner.api.get("/duplicates/groups")).body.total_count).toBe(1);
  });

  test("keeping the best trashes the rest; a restored copy joins its group again; a file in no group is reported", async () => {
    const before = (await owner.api.get("/duplicates/groups")).body.items[0];
    const res = await owner.api.post("/duplicates/groups/trash", { keep_file_ids: [ids.original, ids.unrelated] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.trashed_count).toBe(3);
    expect(res.body.groups[0]).toMatchObject({ keep_file_id: ids.original, group_id: before.group_id, status: "trashed", failed: [] });
    expect(res.body.groups[0].trashed_file_ids.sort()).toEqual([ids.half, ids.reencoded, ids.cropped].sort());
    expect(res.body.groups[1]).toEqual({ keep_file_id: ids.unrelated, group_id: null, status: "no_group", trashed_file_ids: [], failed: [] });

    expect((await owner.api.get("/duplicates/groups")).body.total_count).toBe(0);
    const trash = await owner.api.get("/files/deleted");
    expect(trash.body.items.map((f: { id: string }) => f.id).sort()).toEqual([ids.half, ids.reencoded, ids.cropped].sort());
    expect((await owner.api.get(`/files/${ids.original}`)).status).toBe(200);

    expect((await owner.api.post(`/files/${ids.half}/restore`)).status).toBe(200);
    const again = await owner.api.get("/duplicates/groups");
    expect(again.body.items[0].files.map((f: { id: string }) => f.id).sort()).toEqual([ids.original, ids.half].sort());
    expect(again.body.items[0].best_file_id).toBe(ids.original);
  });
});

describe("rules", () => {
  test("close hashes pair on their own; farther ones only when the thumbnails agree", () => {
    expect(isNearDuplicate(3, null)).toBe(true);
    expect(isNearDuplicate(14, null)).toBe(false);
    expect(isNearDuplicate(14, 0.97)).toBe(true);
    expect(isNearDuplicate(14, 0.5)).toBe(false);
    expect(isNearDuplicate(40, 0.99)).toBe(false);
  });

  test("a thumbnail moved by a pixel still correlates once shifted back; an unrelated one does not", () => {
    const side = THUMB_SIDE;
    const scene = (x: number, y: number) => Math.round(128 + 60 * Math.sin(x / 3) + 50 * Math.cos(y / 4) + ((x * 7 + y * 13) % 11));
    const thumb = (dx: number) => Uint8Array.from({ length: side * side }, (_, i) => scene((i % side) + dx, Math.floor(i / side)));
    const moved = thumbCorrelation(thumb(0), thumb(1));
    expect(shiftedThumbCorrelation(thumb(0), thumb(1))).toBeGreaterThan(0.99);
    expect(shiftedThumbCorrelation(thumb(0), thumb(1))).toBeGreaterThan(moved);
    const unrelated = Uint8Array.from({ length: side * side }, (_, i) => (i * 37) % 251);
    expect(shiftedThumbCorrelation(thumb(0), unrelated)).toBeLessThan(0.5);
  });

  test("groups are connected pairs; the best is the largest, then the sharpest that is not recompressed", () => {
    expect(groupsOf([["a", "b"], ["c", "b"], ["x", "y"]])).toEqual([["a", "b", "c"], ["x", "y"]]);
    const at = "2024-01-01T00:00:00Z";
    const member = (id: string, pixels: number, sharpness: number, sizeBytes = pixels) => ({ id, pixels, sharpness, sizeBytes, createdAt: at });
    expect(chooseBest([member("small", 100, 900), member("big", 1000, 10), member("big-sharp", 990, 50)]).id).toBe("big-sharp");
    expect(chooseBest([member("small", 100, 900), member("big", 1000, 10), member("bigger", 1200, 1)]).id).toBe("bigger");
    // JPEG blocking of a copy saved at low quality looks like detail: its bytes per pixel give it away.
    expect(chooseBest([member("original", 1000, 40, 1000), member("recompressed", 1000, 60, 400)]).id).toBe("original");
  });
});
