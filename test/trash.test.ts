/**
 * The trash (`GET /files/deleted`, extension) through real HTTP: only this organization's
 * soft-deleted files still within retention, newest deletion first, paged like GET /files; a
 * restore takes a file out of it; permissions and query validation. A manual clock moves time
 * past retention without sleeping.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import { purgeDeletedFiles } from "../src/library/file-edits.ts";
import { insertFileRow, type FileRowFixture, defaultProjectOf } from "./support/rows.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";

const DAY = 86_400_000;
let server: TestServer;
const clock = new ManualClock(Date.parse("2026-11-01T12:00:00Z"));

beforeAll(async () => {
  server = await startTestServer({ clock });
});
afterAll(() => server.close());

async function seed(tenant: Tenant, fields: Omit<FileRowFixture, "orgId" | "projectId">): Promise<string> {
  return insertFileRow(server.ctx.sql, { projectId: await defaultProjectOf(server.ctx.sql, tenant.orgId), ...fields, orgId: tenant.orgId });
}

const ago = (days: number) => new Date(clock.now() - days * DAY).toISOString();
const ids = (res: { body: { items: { id: string }[] } }) => res.body.items.map((i) => i.id);

test("lists this organization's deleted files within retention, newest deletion first, each with deleted_at and purge_at", async () => {
  const owner = await server.tenant();
  const live = await seed(owner, { title: "Still here" });
  const old = await seed(owner, { title: "Deleted long ago", deleted: ago(20), sizeBytes: 120 });
  const recent = await seed(owner, { mediaType: "document", filename: "notes.pdf", deleted: ago(2) });
  // Past retention but not purged yet: no longer restorable, so not in the trash either.
  const expired = await seed(owner, { title: "Expired", deleted: ago(31) });
  await seed(await server.tenant(), { title: "Another org's", deleted: ago(1) });
  // Deleted through the API just now: the newest deletion.
  expect((await owner.api.delete(`/files/${live}`)).status).toBe(200);

  const res = await owner.api.get("/files/deleted");
  expect(res.status).toBe(200);
  expect(ids(res)).toEqual([live, recent, old]);
  expect(ids(res)).not.toContain(expired);
  expect(res.body).toMatchObject({ total_count: 3, limit: 20, offset: 0, has_more: false });
  const [first, , third] = res.body.items;
  expect(first).toMatchObject({ id: live, media_type: "image", title: "Still here", deleted_at: new Date(clock.now()).toISOString(), purge_at: new Date(clock.now() + 30 * DAY).toISOString() });
  expect(third).toMatchObject({ title: "Deleted long ago", size_bytes: 120, deleted_at: ago(20), purge_at: new Date(clock.now() + 10 * DAY).toISOString() });
  expect(res.body.items[1]).toMatchObject({ media_type: "document", filename: "notes.pdf", chunk_count: 0 });

  // Live listing and trash never share a file.
  expect(ids(await owner.api.get("/files"))).toEqual([]);
});

test("pages with limit and offset; restore takes a file out of the trash and back into GET /files", async () => {
  const owner = await server.tenant();
  const files: string[] = [];
  for (const days of [5, 4, 3, 2, 1]) files.push(await seed(owner, { title: `Deleted ${days} days ago`, deleted: ago(days) }));
  const first = await owner.api.get("/files/deleted?limit=2");
  expect(ids(first)).toEqual([files[4]!, files[3]!]);
  expect(first.body).toMatchObject({ total_count: 5, limit: 2, offset: 0, has_more: true });
  const last = await owner.api.get("/files/deleted?limit=2&offset=4");
  expect(ids(last)).toEqual([files[0]!]);
  expect(last.body).toMatchObject({ total_count: 5, limit: 2, offset: 4, has_more: false });

  expect((await owner.api.post(`/files/${files[2]!}/restore`)).status).toBe(200);
  const after = await owner.api.get("/files/deleted");
  expect(ids(after)).toEqual([files[4]!, files[3]!, files[1]!, files[0]!]);
  expect(ids(await owner.api.get("/files"))).toEqual([files[2]!]);
});

test("files leave the trash when retention ends and the purge removes them", async () => {
  const owner = await server.tenant();
  const id = await seed(owner, { title: "Soon gone", deleted: ago(0) });
  expect(ids(await owner.api.get("/files/deleted"))).toEqual([id]);
  clock.advance(30 * DAY);
  expect((await owner.api.get("/files/deleted")).body).toMatchObject({ items: [], total_count: 0 });
  await purgeDeletedFiles(server.ctx);
  expect(await server.ctx.files.byId(id)).toBeNull();
  expect((await owner.api.get("/files/deleted")).body.total_count).toBe(0);
});

test("GET /files/deleted is a route of its own, not a file reference; needs view permission and a key", async () => {
  const owner = await server.tenant();
  const id = await seed(owner, { deleted: ago(0) });
  // A file whose id starts with "de1e7ed0" is still reached by its prefix.
  const prefixed = await seed(owner, { id: "de1e7ed0-0000-4000-8000-000000000000", title: "Prefix" });
  expect((await owner.api.get("/files/de1e7ed0")).body.id).toBe(prefixed);
  expect(ids(await (await owner.keyWith(["view"])).get("/files/deleted"))).toEqual([id]);
  expect((await (await owner.keyWith(["edit", "delete"])).get("/files/deleted")).status).toBe(403);
  expect((await server.anonymous().get("/files/deleted")).status).toBe(401);
});

test("limit and offset are validated with a detail saying what is allowed", async () => {
  const owner = await server.tenant();
  for (const query of ["limit=0", "limit=101", "limit=ten"]) {
    const res = await owner.api.get(`/files/deleted?${query}`);
    expect([res.status, res.body.detail]).toEqual([400, expect.stringContaining("limit must be an integer from 1 to 100")]);
  }
  const res = await owner.api.get("/files/deleted?offset=-1");
  expect([res.status, res.body.detail]).toEqual([400, expect.stringContaining("offset must be an integer from 0 to 2147483647")]);
});
