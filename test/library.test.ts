/**
 * The file library through real HTTP: listing filters, full-text search modes, sorting and
 * paging; detail by id and 8-character prefix; edits with their limits; soft delete, batch
 * delete, restore and the 30-day purge (with a manual clock); signed download redirects.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import { purgeDeletedFiles } from "../src/library/file-edits.ts";
import { RARE_TAG_MATCHES } from "../src/files/queries.ts";
import { pdf, png } from "./support/fixtures.ts";
import { pollApi } from "./support/polling.ts";
import { insertFileRow, type FileRowFixture, defaultProjectOf } from "./support/rows.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { sharedDeployment } from "./support/suite-database.ts";
import { uploadFile } from "./support/uploads.ts";

let server: TestServer;
const clock = new ManualClock(Date.parse("2026-11-01T12:00:00Z"));
// URLs signed on that clock are dated weeks from real time: a real S3 server (the shared mode's
// bucket) refuses them, where the appliance's own endpoint checks them on the same clock.
const signedOnTestClock = test.skipIf(sharedDeployment());

beforeAll(async () => {
  server = await startTestServer({ clock });
});
afterAll(() => server.close());

async function seed(tenant: Tenant, fields: Omit<FileRowFixture, "orgId" | "projectId"> & { projectId?: string }): Promise<string> {
  return insertFileRow(server.ctx.sql, { projectId: fields.projectId ?? (await defaultProjectOf(server.ctx.sql, tenant.orgId)), ...fields, orgId: tenant.orgId });
}

const upload = (tenant: Tenant, bytes: Uint8Array, filename: string, fields: Record<string, string> = {}) => uploadFile(tenant.api, bytes, filename, fields);

const ids = (res: { body: { items: { id: string }[] } }) => res.body.items.map((i) => i.id);

describe("GET /files", () => {
  let owner: Tenant;
  const f = {} as Record<"sunset" | "invoice" | "plan" | "clip" | "gone" | "project" | "folder", string>;

  beforeAll(async () => {
    owner = await server.tenant();
    const project: string = (await owner.api.post("/projects", { name: "Site B" })).body.id;
    const folder: string = (await owner.api.post("/folders", { name: "Plans", project_id: project })).body.id;
    f.sunset = await seed(owner, { title: "Sunset over the bay", tags: ["Beach", "evening"], sizeBytes: 300, createdAt: "2026-10-01T00:00:00.000Z", contentCreatedAt: "2020-01-01T00:00:00.000Z", uploadDescription: "Orange sky above calm water" });
    f.invoice = await seed(owner, { mediaType: "document", filename: "invoice.pdf", title: null, tags: ["finance"], sizeBytes: 100, createdAt: "2026-10-02T00:00:00.000Z", visibleText: "Invoice INV-2024-001 total due" });
    f.plan = await seed(owner, { projectId: project, folderId: folder, title: "apple orchard plan", tags: ["beach", "plans"], sizeBytes: 200, createdAt: "2026-10-03T00:00:00.000Z", complianceStatus: "pass", userDescription: "hand-drawn" });
    f.clip = await seed(owner, { mediaType: "video", filename: "clip.mp4", title: "Zebra crossing", sizeBytes: 400, createdAt: "2026-10-04T00:00:00.000Z", contentCreatedAt: "2019-05-05T00:00:00.000Z" });
    f.gone = await seed(owner, { title: "Sunset deleted", tags: ["beach"], createdAt: "2026-10-05T00:00:00.000Z", deleted: true });
    // Another tenant's files never show up.
    const stranger = await server.tenant();
    await seed(stranger, { title: "Sunset elsewhere", tags: ["beach"] });
    f.project = project;
    f.folder = folder;
  });

  test("newest first by default, with the page shape; soft-deleted and other orgs' files never appear", async () => {
    const res = await owner.api.get("/files");
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([f.clip, f.plan, f.invoice, f.sunset]);
    expect(res.body).toMatchObject({ total_count: 4, limit: 20, offset: 0, has_more: false });
  });

  test("each summary carries its media type's fields only, unfilled ones as null", async () => {
    const items = (await owner.api.get("/files")).body.items as Record<string, unknown>[];
    const byId = Object.fromEntries(items.map((i) => [i.id, i]));
    const image = byId[f.sunset]!;
    expect(image).toMatchObject({ media_type: "image", tags: ["Beach", "evening"], dimensions: null, blur_hash: null, variant_count: 0, has_full_description: false });
    expect(image).not.toHaveProperty("page_count");
    expect(image).not.toHaveProperty("duration_seconds");
    const doc = byId[f.invoice]!;
    expect(doc).toMatchObject({ media_type: "document", page_count: null, chunk_count: 0 });
    expect(doc).not.toHaveProperty("blur_hash");
    expect(doc).not.toHaveProperty("extracted_text");
    const video = byId[f.clip]!;
    expect(video).toMatchObject({ media_type: "video", duration_seconds: null, resolution: null, thumbnail_url: null, analysis_status: null });
    expect(video).not.toHaveProperty("page_count");
    expect(video).not.toHaveProperty("keyframes");
  });

  test("paging with limit and offset; limit outside 1-100 is 400", async () => {
    const first = await owner.api.get("/files?limit=3");
    expect(ids(first)).toEqual([f.clip, f.plan, f.invoice]);
    expect(first.body.has_more).toBe(true);
    const second = await owner.api.get("/files?limit=3&offset=3");
    expect(ids(second)).toEqual([f.sunset]);
    expect(second.body.has_more).toBe(false);
    for (const bad of ["limit=0", "limit=101", "offset=-1", "limit=abc"]) {
      const res = await owner.api.get(`/files?${bad}`);
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/limit|offset/);
    }
  });

  test("sort_by title, size_bytes and content_created_at in both orders", async () => {
    // Files without a title sort by filename ("invoice.pdf").
    expect(ids(await owner.api.get("/files?sort_by=title&sort_order=asc"))).toEqual([f.plan, f.invoice, f.sunset, f.clip]);
    expect(ids(await owner.api.get("/files?sort_by=size_bytes&sort_order=asc"))).toEqual([f.invoice, f.plan, f.sunset, f.clip]);
    expect(ids(await owner.api.get("/files?sort_by=size_bytes"))).toEqual([f.clip, f.sunset, f.plan, f.invoice]);
    const byContent = ids(await owner.api.get("/files?sort_by=content_created_at&sort_order=asc"));
    expect(byContent.slice(-2)).toEqual([f.clip, f.sunset]);
    expect((await owner.api.get("/files?sort_by=name")).status).toBe(400);
    expect((await owner.api.get("/files?sort_order=up")).status).toBe(400);
  });

  test("filters: tags (all must match, case-insensitive), media_types, ids, project, folder, description, compliance, dates", async () => {
    expect(ids(await owner.api.get("/files?tags=beach"))).toEqual([f.plan, f.sunset]);
    expect(ids(await owner.api.get("/files?tags=BEACH&tags=evening"))).toEqual([f.sunset]);
    expect(ids(await owner.api.get("/files?tags=beach&tags=nothing"))).toEqual([]);
    expect(ids(await owner.api.get("/files?media_types=document&media_types=video"))).toEqual([f.clip, f.invoice]);
    expect(ids(await owner.api.get(`/files?ids=${f.sunset}&ids=${f.clip}&ids=${f.gone}`))).toEqual([f.clip, f.sunset]);
    expect(ids(await owner.api.get(`/files?project_id=${f.project}`))).toEqual([f.plan]);
    expect(ids(await owner.api.get(`/files?folder_id=${f.folder}`))).toEqual([f.plan]);
    expect(ids(await owner.api.get("/files?has_description=true"))).toEqual([f.plan, f.sunset]);
    expect(ids(await owner.api.get("/files?has_description=false"))).toEqual([f.clip, f.invoice]);
    expect(ids(await owner.api.get("/files?compliance_status=pass"))).toEqual([f.plan]);
    expect(ids(await owner.api.get("/files?date_from=2026-10-02T00:00:00Z&date_to=2026-10-03T23:59:59Z"))).toEqual([f.plan, f.invoice]);
    for (const bad of ["media_types=audio", "ids=nope", "folder_id=x", "has_description=maybe", "date_from=yesterday", "search_mode=fuzzy"]) {
      const res = await owner.api.get(`/files?${bad}`);
      expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
      expect(res.body.detail).toContain(bad.split("=")[0]!);
    }
  });

  test("query syntax: repeatable parameters also as name[]= or comma-separated; empty parameters are absent; 1/0 and any-case sort_order", async () => {
    expect(ids(await owner.api.get("/files?tags[]=BEACH&tags[]=evening"))).toEqual([f.sunset]);
    expect(ids(await owner.api.get("/files?tags=beach,%20evening"))).toEqual([f.sunset]);
    expect(ids(await owner.api.get("/files?media_types=document,video"))).toEqual([f.clip, f.invoice]);
    expect(ids(await owner.api.get("/files?has_description=1"))).toEqual([f.plan, f.sunset]);
    expect(ids(await owner.api.get("/files?has_description=0"))).toEqual([f.clip, f.invoice]);
    expect(ids(await owner.api.get("/files?sort_by=size_bytes&sort_order=ASC"))).toEqual([f.invoice, f.plan, f.sunset, f.clip]);
    expect(ids(await owner.api.get("/files?sort_by=&sort_order=&search=&tags=&folder_id="))).toEqual([f.clip, f.plan, f.invoice, f.sunset]);
    const tooMany = await owner.api.get(`/files?tags=${Array.from({ length: 41 }, (_, i) => `t${i}`).join(",")}`);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.detail).toBe("invalid query: tags: at most 40 tags per query");
    const badId = await owner.api.get(`/files?ids=${f.sunset},nope`);
    expect(badId.status).toBe(400);
    expect(badId.body.detail).toBe("invalid query: ids.1: must be a UUID");
  });

  test("full-text search: every word must match, the last as a prefix; ranked by relevance unless sort_by is given", async () => {
    expect(ids(await owner.api.get("/files?search=sunset"))).toEqual([f.sunset]);
    expect(ids(await owner.api.get("/files?search=sun"))).toEqual([f.sunset]);
    expect(ids(await owner.api.get("/files?search=orange%20sky"))).toEqual([f.sunset]);
    expect(ids(await owner.api.get("/files?search=orange%20zebra"))).toEqual([]);
    // An identifier the tokenizer splits is matched as a phrase.
    expect(ids(await owner.api.get("/files?search=INV-2024-001"))).toEqual([f.invoice]);
    expect(ids(await owner.api.get("/files?search=INV-2024-002"))).toEqual([]);
    // Words are stemmed (both in the index and in the query) and diacritics folded.
    expect(ids(await owner.api.get("/files?search=orchards%20planning"))).toEqual([f.plan]);
    expect(ids(await owner.api.get("/files?search=sunsets"))).toEqual([f.sunset]);
    expect(ids(await owner.api.get("/files?search=%C3%B3range%20waters"))).toEqual([f.sunset]);
    expect(ids(await owner.api.get("/files?search=invoices%20totals"))).toEqual([f.invoice]);
    // Stop words need not occur, except as the last (still typed) word.
    expect(ids(await owner.api.get("/files?search=the%20apple%20orchard%20of"))).toEqual([]);
    expect(ids(await owner.api.get("/files?search=the%20apple%20orchard"))).toEqual([f.plan]);
    // Tags and filenames are searchable; FTS syntax in the input is neutralized.
    expect(ids(await owner.api.get("/files?search=finance"))).toEqual([f.invoice]);
    expect(ids(await owner.api.get("/files?search=clip.mp4"))).toEqual([f.clip]);
    expect((await owner.api.get('/files?search=%22%20OR%20*%20NEAR(')).status).toBe(200);
    expect((await owner.api.get("/files?search=%2B%2B%2B")).status).toBe(400);
    // Title hits rank above description hits.
    await seed(owner, { title: "Notes", uploadDescription: "apple pie recipe", createdAt: "2026-10-06T00:00:00.000Z" });
    const ranked = ids(await owner.api.get("/files?search=apple"));
    expect(ranked[0]).toBe(f.plan);
    expect(ranked).toHaveLength(2);
  });

  test("search_mode metadata searches titles, names, tags and descriptions; visible_text only the text in the media", async () => {
    expect(ids(await owner.api.get("/files?search=invoice&search_mode=visible_text"))).toEqual([f.invoice]);
    expect(ids(await owner.api.get("/files?search=total&search_mode=metadata"))).toEqual([]);
    expect(ids(await owner.api.get("/files?search=total&search_mode=visible_text"))).toEqual([f.invoice]);
    expect(ids(await owner.api.get("/files?search=orange&search_mode=metadata"))).toEqual([f.sunset]);
    expect(ids(await owner.api.get("/files?search=orange&search_mode=visible_text"))).toEqual([]);
  });

  test("visible_text_chars (extension) cuts each item's visible_text and says so; out of range is 400", async () => {
    const plain = (await owner.api.get("/files")).body.items as Record<string, unknown>[];
    expect(plain.every((i) => !("visible_text_truncated" in i))).toBe(true);
    const cut = (await owner.api.get("/files?visible_text_chars=7")).body.items as Record<string, unknown>[];
    const byId = Object.fromEntries(cut.map((i) => [i.id, i]));
    expect(byId[f.invoice]).toMatchObject({ visible_text: "Invoice", visible_text_truncated: true });
    expect(byId[f.sunset]).toMatchObject({ visible_text: null, visible_text_truncated: false });
    expect((await owner.api.get("/files?visible_text_chars=0")).body.items.find((i: { id: string }) => i.id === f.invoice)).toMatchObject({ visible_text: "", visible_text_truncated: true });
    expect((await owner.api.get("/files?visible_text_chars=1000")).body.items.find((i: { id: string }) => i.id === f.invoice)).toMatchObject({ visible_text: "Invoice INV-2024-001 total due", visible_text_truncated: false });
    // A character outside the BMP is never split.
    const other = await server.tenant();
    await seed(other, { mediaType: "document", filename: "emoji.txt", visibleText: "ab\u{1F600}cd" });
    expect((await other.api.get("/files?visible_text_chars=3")).body.items[0]).toMatchObject({ visible_text: "ab", visible_text_truncated: true });
    for (const bad of ["-1", "200001", "x"]) {
      const res = await owner.api.get(`/files?visible_text_chars=${bad}`);
      expect(res.status).toBe(400);
      expect(res.body.detail).toContain("visible_text_chars");
    }
  });

  test("edits are searchable at once", async () => {
    const id = await seed(owner, { title: "Plain name" });
    expect(ids(await owner.api.get("/files?search=quokka"))).toEqual([]);
    await owner.api.patch(`/files/${id}`, { tags: ["quokka"] });
    expect(ids(await owner.api.get("/files?search=quokka"))).toEqual([id]);
    expect(ids(await owner.api.get("/files?tags=Quokka"))).toEqual([id]);
  });
});

describe("GET /files/{id}", () => {
  let owner: Tenant;
  beforeAll(async () => {
    owner = await server.tenant();
  });

  signedOnTestClock("an uploaded image's detail by full id and by 8-character prefix, with a working original_url", async () => {
    const bytes = png(16, 16, 3);
    const id = await upload(owner, bytes, "photo.png", { title: "Photo", tags: "a,b" });
    const full = await owner.api.get(`/files/${id}`);
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ id, media_type: "image", title: "Photo", tags: ["a", "b"], filename: "photo.png", size_bytes: bytes.byteLength, content_type: "image/png", format: "png", text_regions: [], full_descriptions: [], has_full_description: false });
    for (const key of ["thumbnail_url", "medium_url", "full_url", "blur_hash", "dimensions", "description_error", "description_generated_at", "content_created_at", "visible_text"]) {
      expect(full.body).toHaveProperty(key);
    }
    const original = await fetch(full.body.original_url);
    expect(original.status).toBe(200);
    expect(Buffer.from(await original.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    const byPrefix = await owner.api.get(`/files/${id.slice(0, 8).toUpperCase()}`);
    expect(byPrefix.status).toBe(200);
    expect(byPrefix.body.id).toBe(id);
    const markdown = await owner.api.get(`/files/${id}?format=markdown`);
    expect(markdown.body).toHaveProperty("formatted_document");
    expect((await owner.api.get(`/files/${id}?format=html`)).status).toBe(400);
  });

  test("a document's detail has extracted_text and document_url; markdown format is for images only", async () => {
    const id = await upload(owner, pdf("Quarterly"), "q.pdf");
    const res = await pollApi(owner, `/files/${id}`, (r) => ["completed", "failed"].includes(r.body.text_extraction_status), {
      what: `the text extraction of ${id} to finish`,
    });
    expect(res.body).toMatchObject({ media_type: "document", document_type: "pdf", text_extraction_status: "completed", page_count: 1 });
    expect(res.body.extracted_text).toContain("Quarterly");
    expect(res.body.document_url).toContain("X-Amz-Signature=");
    expect((await owner.api.get(`/files/${id}?format=markdown`)).status).toBe(400);
  });

  test("an ambiguous prefix is 409; unknown, deleted and other orgs' files are 404; malformed ids 400", async () => {
    const a = await seed(owner, { id: "abcdef01-0000-4000-8000-000000000001" });
    await seed(owner, { id: "abcdef01-0000-4000-8000-000000000002" });
    const ambiguous = await owner.api.get("/files/abcdef01");
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body).toMatchObject({ code: "FILE_ID_AMBIGUOUS" });
    expect(ambiguous.body.detail).toContain("full id");
    expect((await owner.api.get(`/files/${a}`)).status).toBe(200);
    const missing = await owner.api.get(`/files/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("FILE_NOT_FOUND");
    expect((await owner.api.get("/files/12345678")).status).toBe(404);
    const deleted = await seed(owner, { deleted: true });
    expect((await owner.api.get(`/files/${deleted}`)).status).toBe(404);
    expect((await (await server.tenant()).api.get(`/files/${a}`)).status).toBe(404);
    for (const bad of ["abc", "abcdef0", "zzzzzzzz", `${a}x`]) {
      const res = await owner.api.get(`/files/${bad}`);
      expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
    }
  });
});

describe("PATCH /files/{id}", () => {
  let owner: Tenant;
  let id: string;
  beforeAll(async () => {
    owner = await server.tenant();
    id = await seed(owner, { title: "Before", tags: ["x"], uploadDescription: "AI says a cat" });
  });

  test("updates title, tags and user_description; null user_description hands back to the AI description", async () => {
    const res = await owner.api.patch(`/files/${id}`, { title: "  After  ", tags: ["one", " two ", "one"], user_description: "My cat" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, title: "After", tags: ["one", "two"], user_description: "My cat", upload_description: "AI says a cat" });
    expect(Date.parse(res.body.updated_at)).toBe(clock.now());
    const reset = await owner.api.patch(`/files/${id}`, { user_description: null });
    expect(reset.body).toMatchObject({ user_description: null, upload_description: "AI says a cat", title: "After", tags: ["one", "two"] });
    const detail = await owner.api.get(`/files/${id}`);
    expect(detail.body).toMatchObject({ title: "After", tags: ["one", "two"], user_description: null });
  });

  test("limits: title 255, 40 tags of 50 characters, description 10000; nothing changes on a refusal", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ title: "t".repeat(256) }, "title"],
      [{ tags: Array.from({ length: 41 }, (_, i) => `t${i}`) }, "tags"],
      [{ tags: ["x".repeat(51)] }, "tags"],
      [{ tags: "a,b" }, "tags"],
      [{ user_description: "d".repeat(10_001) }, "user_description"],
      [{ title: 5 }, "title"],
    ];
    for (const [body, field] of cases) {
      const res = await owner.api.patch(`/files/${id}`, body);
      expect({ body: Object.keys(body), status: res.status }).toEqual({ body: Object.keys(body), status: 400 });
      expect(res.body.detail).toContain(field);
    }
    expect((await owner.api.patch(`/files/${id}`, { title: "t".repeat(255), tags: Array.from({ length: 40 }, (_, i) => `${"x".repeat(48)}${i}`) })).status).toBe(200);
    const detail = await owner.api.get(`/files/${id}`);
    expect(detail.body.tags).toHaveLength(40);
  });

  test("permissions and tenancy: 403 without EDIT, 404 for another org", async () => {
    expect((await (await owner.keyWith(["view"])).patch(`/files/${id}`, { title: "nope" })).status).toBe(403);
    expect((await (await server.tenant()).api.patch(`/files/${id}`, { title: "nope" })).status).toBe(404);
  });
});

describe("deletion, restore and purge", () => {
  let owner: Tenant;
  beforeAll(async () => {
    owner = await server.tenant();
  });

  test("DELETE soft-deletes; the file leaves listing and detail; restore brings it back", async () => {
    const id = await upload(owner, png(8, 8, 11), "del.png");
    const res = await owner.api.delete(`/files/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, deleted_at: new Date(clock.now()).toISOString() });
    expect(res.body.message).toContain("restored");
    expect((await owner.api.get(`/files/${id}`)).status).toBe(404);
    expect(ids(await owner.api.get("/files"))).not.toContain(id);
    expect((await owner.api.delete(`/files/${id}`)).status).toBe(404);
    const restored = await owner.api.post(`/files/${id}/restore`);
    expect(restored.status).toBe(200);
    expect((await owner.api.get(`/files/${id}`)).status).toBe(200);
    const again = await owner.api.post(`/files/${id}/restore`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("FILE_NOT_DELETED");
  });

  test("a document whose text extraction is running cannot be deleted (409), alone or in a batch", async () => {
    const busy = await seed(owner, { mediaType: "document", textExtractionStatus: "processing" });
    const res = await owner.api.delete(`/files/${busy}`);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("FILE_BUSY");
    expect((await owner.api.get(`/files/${busy}`)).status).toBe(200);
  });

  test("batch-delete reports each file; one failure never blocks the rest", async () => {
    const a = await seed(owner, {});
    const b = await seed(owner, {});
    const already = await seed(owner, { deleted: true });
    const busy = await seed(owner, { mediaType: "document", textExtractionStatus: "processing" });
    const foreign = await seed(await server.tenant(), {});
    const missing = crypto.randomUUID();
    const res = await owner.api.post("/files/batch-delete", { file_ids: [a, busy, b, already, missing, foreign] });
    expect(res.status).toBe(200);
    expect(res.body.summary).toEqual({ total: 6, deleted: 2, skipped: 1, failed: 3 });
    expect(res.body.deleted.map((e: { id: string }) => e.id)).toEqual([a, b]);
    expect(res.body.deleted[0]).toMatchObject({ status: "deleted", deleted_at: expect.any(String) });
    expect(res.body.skipped[0]).toMatchObject({ id: already, message: "already deleted" });
    expect(res.body.failed.map((e: { id: string }) => e.id)).toEqual([busy, missing, foreign]);
    expect(res.body.failed[0].message).toContain("text extraction");
    expect((await owner.api.get(`/files/${a}`)).status).toBe(404);
    expect((await owner.api.get(`/files/${busy}`)).status).toBe(200);
  });

  test("batch-delete validation: 1-100 unique UUIDs, DELETE permission", async () => {
    const one = crypto.randomUUID();
    const cases: unknown[] = [{ file_ids: [] }, { file_ids: Array.from({ length: 101 }, () => crypto.randomUUID()) }, { file_ids: [one, one] }, { file_ids: ["nope"] }, {}];
    for (const body of cases) {
      const res = await owner.api.post("/files/batch-delete", body);
      expect(res.status).toBe(400);
      expect(res.body.detail).toContain("file_ids");
    }
    expect((await (await owner.keyWith(["view", "edit"])).post("/files/batch-delete", { file_ids: [one] })).status).toBe(403);
    expect((await (await owner.keyWith(["view", "edit"])).delete(`/files/${one}`)).status).toBe(403);
  });

  test("after 30 days the purge removes the row and the blob; restore is no longer possible", async () => {
    const bytes = png(8, 8, 21);
    const id = await upload(owner, bytes, "old.png");
    const blobKey = (await server.ctx.sql.one<{ blob_key: string }>("SELECT blob_key FROM files WHERE id = ?", [id]))!.blob_key;
    await owner.api.delete(`/files/${id}`);
    clock.advance(29 * 86_400_000);
    await purgeDeletedFiles(server.ctx);
    expect(await server.ctx.blobs.size(blobKey)).toBe(bytes.byteLength);
    clock.advance(1 * 86_400_000 + 1000);
    const late = await owner.api.post(`/files/${id}/restore`);
    expect(late.status).toBe(404);
    expect(await purgeDeletedFiles(server.ctx)).toBeGreaterThanOrEqual(1);
    expect(await server.ctx.sql.one("SELECT count(*) AS n FROM files WHERE id = ?", [id])).toEqual({ n: 0 });
    expect(await server.ctx.blobs.size(blobKey)).toBeNull();
    expect((await owner.api.post(`/files/${id}/restore`)).status).toBe(404);
  });
});

describe("GET /files/{id}/download", () => {
  signedOnTestClock("302 to a 300-second signed URL that serves the bytes under the original (UTF-8) filename", async () => {
    const owner = await server.tenant();
    const bytes = png(12, 12, 5);
    const id = await upload(owner, bytes, "Résumé \"final\".png");
    const res = await owner.api.get(`/files/${id}/download`);
    expect(res.status).toBe(302);
    const location = res.headers.get("location")!;
    expect(new URL(location).searchParams.get("X-Amz-Expires")).toBe("300");
    const file = await fetch(location);
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    const disposition = file.headers.get("content-disposition")!;
    expect(disposition).toContain(`filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22.png`);
    expect(disposition).toContain('filename="R_sum_ _final_.png"');
    expect((await (await server.tenant()).api.get(`/files/${id}/download`)).status).toBe(404);
    expect((await server.anonymous().get(`/files/${id}/download`)).status).toBe(401);
  });
});

describe("listing plans at volume", () => {
  test("with more tag matches than the rare-tag threshold, pages come back in order and counts stay exact", async () => {
    const owner = await server.tenant();
    const project = await defaultProjectOf(server.ctx.sql, owner.orgId);
    const n = RARE_TAG_MATCHES + 300;
    await server.ctx.sql.transaction(async (tx) => {
      for (let i = 0; i < n; i++) {
        await insertFileRow(tx, {
          orgId: owner.orgId, projectId: project, sizeBytes: i,
          tags: i % 2 === 0 ? ["bulk", "even"] : ["bulk"],
          title: i % 10 === 0 ? `walrus ${i}` : `item ${i}`,
          deleted: i === 4,
        });
      }
    });
    const first = await owner.api.get("/files?tags=bulk&sort_by=size_bytes&sort_order=asc&limit=5");
    expect(first.body.total_count).toBe(n - 1);
    expect(first.body.items.map((i: { size_bytes: number }) => i.size_bytes)).toEqual([0, 1, 2, 3, 5]);
    const both = await owner.api.get(`/files?tags=bulk&tags=EVEN&sort_by=size_bytes&limit=3&offset=1`);
    expect(both.body.total_count).toBe(Math.ceil(n / 2) - 1);
    const largestEven = (n - 1) % 2 === 0 ? n - 1 : n - 2;
    expect(both.body.items.map((i: { size_bytes: number }) => i.size_bytes)).toEqual([largestEven - 2, largestEven - 4, largestEven - 6]);
    const searched = await owner.api.get("/files?tags=bulk&search=walrus&sort_by=size_bytes&sort_order=asc&limit=2");
    expect(searched.body.total_count).toBe(Math.ceil(n / 10));
    expect(searched.body.items.map((i: { size_bytes: number }) => i.size_bytes)).toEqual([0, 10]);
  });
});
