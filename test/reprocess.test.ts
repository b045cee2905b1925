/**
 * POST /files/{id}/reprocess (extension), through real HTTP: a document, an image or a video that
 * failed is queued again and its pipeline runs again (failing again while its cause stays,
 * completing once the cause is gone); a second request while the first is queued is 409; a link is crawled again;
 * another organization's file is 404 and a view-only key 403.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { corruptPdf } from "./support/documents.ts";
import { textImage } from "./support/images.ts";
import { pollApi, processed } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { sharedDeployment } from "./support/suite-database.ts";
import { uploadFile } from "./support/uploads.ts";
import { defaultProjectOf } from "./support/rows.ts";

let server: TestServer;
let owner: Tenant;
beforeAll(async () => {
  server = await startTestServer();
  owner = await server.tenant({ tier: "CUSTOM" });
}, 60_000);
afterAll(async () => {
  await server?.close();
});

const upload = (bytes: Uint8Array, name: string) => uploadFile(owner.api, bytes, name);

const embedded = (id: string) =>
  pollApi(owner, `/files/${id}/processing-status`, (r) => r.status === 200 && ["completed", "failed"].includes(r.body.embedding_status), { what: `document ${id}'s embedding to end`, timeoutMs: 120_000 });

test("a corrupt PDF that failed is queued again with a new job, runs again and fails again with its reason", async () => {
  const id = await upload(corruptPdf(), "broken.pdf");
  const failed = await processed(owner, id, 120_000);
  expect([failed.processing_status, failed.text_extraction_status]).toEqual(["failed", "failed"]);
  const firstJob = (await owner.api.get(`/files/uploads-status/${id}`)).body.processing_ids[0];

  const res = await owner.api.post(`/files/${id}/reprocess`);
  expect(res.status).toBe(202);
  expect(res.body).toMatchObject({ file_id: id, media_type: "document", processing_status: "queued", crawl_status: null });
  expect(res.body.job_ids).toHaveLength(1);
  expect(res.body.job_ids[0]).not.toBe(firstJob);

  const again = await processed(owner, id, 120_000);
  expect(again.processing_status).toBe("failed");
  expect(again.processing_error).toContain("PDF");
  const status = (await owner.api.get(`/files/uploads-status/${id}`)).body;
  expect(status.processing_ids).toEqual(res.body.job_ids);
  expect((await owner.api.get(`/job/${res.body.job_ids[0]}`)).body.status).toBe("failed");
}, 240_000);

test("a document whose original went missing fails; with the original back, reprocessing completes it", async () => {
  const text = "Reprocessing notes: the quay wall was inspected twice.\n";
  const id = await upload(new TextEncoder().encode(text), "quay.txt");
  await processed(owner, id, 120_000);
  await embedded(id);
  const key = (await server.ctx.files.byId(id))!.blob_key!;
  await server.ctx.blobs.delete(key);

  expect((await owner.api.post(`/files/${id}/reprocess`)).status).toBe(202);
  const failed = await processed(owner, id, 120_000);
  expect(failed.processing_status).toBe("failed");
  expect(failed.processing_error).toContain("missing from the store");

  await server.ctx.blobs.put(key, new TextEncoder().encode(text), "text/plain");
  expect((await owner.api.post(`/files/${id}/reprocess`)).status).toBe(202);
  const done = await processed(owner, id, 120_000);
  expect([done.processing_status, done.processing_error, done.text_extraction_status]).toEqual(["completed", null, "completed"]);
  expect(done.extracted_text).toContain("quay wall");
}, 240_000);

for (const kind of ["image", "video"] as const) {
  test(`${kind === "image" ? "an image" : "a video"} whose original went missing fails; with the original back, reprocessing completes it`, async () => {
    const bytes = kind === "image" ? new Uint8Array(await textImage(["REPROCESS ME"], 600, 240)) : new Uint8Array(readFileSync(join(import.meta.dir, "fixtures", "video", "scenes.mp4")));
    const id = await upload(bytes, kind === "image" ? "again.png" : "again.mp4");
    await processed(owner, id, 180_000);
    const row = (await server.ctx.files.byId(id))!;
    await server.ctx.blobs.delete(row.blob_key!);

    expect((await owner.api.post(`/files/${id}/reprocess`)).status).toBe(202);
    const failed = await processed(owner, id, 180_000);
    expect([failed.processing_status, failed.processing_error]).toEqual(["failed", expect.stringContaining("missing from the store")]);

    await server.ctx.blobs.put(row.blob_key!, bytes, row.content_type);
    const res = await owner.api.post(`/files/${id}/reprocess`);
    expect(res.body).toMatchObject({ media_type: kind, processing_status: "queued" });
    const done = await processed(owner, id, 180_000);
    expect(done.processing_status).toBe("completed");
    if (kind === "video") {
      expect(done.analysis_status).toBe("completed");
      expect(done.keyframes.length).toBeGreaterThan(0);
    } else {
      expect(done.variant_status).toBe("completed");
      expect(done.visible_text).toContain("REPROCESS");
    }
  }, 300_000);
}

// Stopping this process's workers keeps nothing queued when a worker process beside it takes the job at once.
test.skipIf(sharedDeployment())("a second reprocess while the first is still queued is 409 FILE_PROCESSING; the queued one then runs", async () => {
  const id = await upload(corruptPdf(), "queued.pdf");
  await processed(owner, id, 120_000);
  // No worker claims anything: the reprocessed file stays queued for as long as the test needs.
  await server.ctx.jobs.stop();
  try {
    const first = await owner.api.post(`/files/${id}/reprocess`);
    expect(first.status).toBe(202);
    const second = await owner.api.post(`/files/${id}/reprocess`);
    expect(second.status).toBe(409);
    expect(second.body.code).toBe("FILE_PROCESSING");
    expect((await owner.api.get(`/files/${id}`)).body.processing_status).toBe("queued");
  } finally {
    server.ctx.jobs.start();
  }
  expect((await processed(owner, id, 120_000)).processing_status).toBe("failed");
}, 240_000);

test("a link is crawled again through the recrawl path", async () => {
  // Loopback is off limits for crawls by default: the crawl ends blocked, quickly and without a network.
  const saved = await owner.api.post("/files/links", { url: "http://127.0.0.1:9/page" });
  expect(saved.status).toBe(201);
  const id = saved.body.id as string;
  await pollApi(owner, `/files/${id}`, (r) => r.body.crawl_status === "blocked", { what: `link ${id}'s crawl to be blocked`, timeoutMs: 60_000 });
  const res = await owner.api.post(`/files/${id}/reprocess`);
  expect(res.status).toBe(202);
  expect(res.body).toMatchObject({ file_id: id, media_type: "link", processing_status: "queued", crawl_status: "pending" });
  const after = await pollApi(owner, `/files/${id}`, (r) => r.body.crawl_status === "blocked", { what: `link ${id}'s second crawl to end`, timeoutMs: 60_000 });
  expect(after.body.processing_status).not.toBe("queued");
}, 120_000);

test("another organization's file is 404 and a key without edit permission is 403", async () => {
  const id = await upload(corruptPdf(), "mine.pdf");
  await processed(owner, id, 120_000);
  const other = await server.tenant({ tier: "CUSTOM" });
  const foreign = await other.api.post(`/files/${id}/reprocess`);
  expect([foreign.status, foreign.body.code]).toEqual([404, "FILE_NOT_FOUND"]);
  const viewer = await owner.keyWith(["view"]);
  const refused = await viewer.post(`/files/${id}/reprocess`);
  expect([refused.status, refused.body.code]).toEqual([403, "PERMISSION_DENIED"]);
  expect((await owner.api.get(`/files/${id}`)).body.processing_status).toBe("failed");
}, 120_000);

test("the listing filters by processing_status (the Activity page's failed files)", async () => {
  const tenant = await server.tenant({ tier: "CUSTOM" });
  const form = new FormData();
  form.append("file", new File([(corruptPdf()) as Uint8Array<ArrayBuffer>], "bad.pdf"));
  const bad = (await tenant.api.form("/files/upload", form)).body.image_id;
  const good = new FormData();
  good.append("file", new File(["fine text\n"], "fine.txt"));
  const fine = (await tenant.api.form("/files/upload", good)).body.image_id;
  await processed(tenant, bad, 120_000);
  await processed(tenant, fine, 120_000);
  const failed = (await tenant.api.get("/files?processing_status=failed")).body;
  expect(failed.items.map((f: { id: string }) => f.id)).toEqual([bad]);
  expect(failed.items[0].processing_error).toBeTruthy();
  expect((await tenant.api.get("/files?processing_status=bogus")).status).toBe(400);
}, 240_000);

test("a file whose bytes never arrived (a failed cloud import) is 409 FILE_NOT_STORED; one still arriving is 409 FILE_PROCESSING", async () => {
  const id = crypto.randomUUID();
  const projectId = await defaultProjectOf(server.ctx.sql, owner.orgId);
  await server.ctx.files.createPlaceholder({ id, orgId: owner.orgId, projectId, folderId: null, filename: "far.png", mediaType: "image", contentType: "image/png", size: 10, tags: [], uploadedBy: null, sourceUrl: null });
  const arriving = await owner.api.post(`/files/${id}/reprocess`);
  expect([arriving.status, arriving.body.code]).toEqual([409, "FILE_PROCESSING"]);
  await server.ctx.files.placeholderFailed(id, "the download failed: 404 from the drive");
  const never = await owner.api.post(`/files/${id}/reprocess`);
  expect([never.status, never.body.code]).toEqual([409, "FILE_NOT_STORED"]);
  expect(never.body.detail).toContain("import it again");
});
