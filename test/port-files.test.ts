/**
 * FileRepository (the files row's reads and writes) on the data-access port behaves the same on
 * SQLite and on PostgreSQL: files recorded and found by id and by 8-character prefix (two files
 * sharing it: FILE_ID_AMBIGUOUS), duplicates by content, placeholders filled or failed, the
 * processing outcomes and a reprocess, the per-kind transitions of the row, soft delete, restore
 * and purge, and a write made inside a caller's transaction rolled back with it. The HTTP sides are
 * tested where they were (library, trash, reprocess, images, documents, videos, links, cloud jobs).
 * The PostgreSQL half skips, saying why, where no server binary is found.
 */
import { describe, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import { FileRepository, type NewFileRecord } from "../src/files/file-repository.ts";
import { portEngines, refusal } from "./support/port-engines.ts";

const { engines } = portEngines("files");

/** An organization with its default project (what a file belongs to); returns the project's id. */
async function tenant(db: SqlClient, orgId: string): Promise<string> {
  const projectId = `${orgId}-default`;
  await db.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, 'STARTER', 'x') ON CONFLICT DO NOTHING", [orgId, orgId, orgId]);
  await db.run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES (?, ?, 'Default', 'default', 1, 'x', 'x') ON CONFLICT DO NOTHING", [projectId, orgId]);
  return projectId;
}

/** A UUID whose first 8 characters are `prefix` (the rest from `n`). */
const idWith = (prefix: string, n: number) => `${prefix}-0000-4000-8000-${String(n).padStart(12, "0")}`;

function record(id: string, orgId: string, projectId: string, overrides: Partial<NewFileRecord> = {}): NewFileRecord {
  return {
    id, orgId, projectId, folderId: null, filename: `${id.slice(0, 8)}.jpg`, size: 1234, sha256: `sha-${id}`,
    type: { mediaType: "image", mime: "image/jpeg", format: "jpeg", documentType: null },
    blobKey: `orgs/${orgId}/files/${id}/original`, uploadMethod: "streaming", sessionId: null, uploadedBy: null, processingJobId: `job-${id}`,
    title: null, tags: ["one"], storageTarget: "default", autoDescribe: true, contentCategory: "general", customSchemaId: null,
    description: { status: "pending", error: null, credits: 1 },
    ...overrides,
  };
}


describe.each(engines)("FileRepository on $name", ({ client }) => {
  test("a file recorded is found by id, by its 8-character prefix (ambiguous when two share it), by type and by content", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 1));
    const files = new FileRepository(db, clock);
    const projectId = await tenant(db, "org-find");
    const other = await tenant(db, "org-find-other");
    const a = idWith("a1b2c3d4", 1);
    await files.create(record(a, "org-find", projectId));
    clock.advance(1_000);
    const twin = idWith("a1b2c3d4", 2);
    await files.create(record(twin, "org-find", projectId, { sha256: `sha-${a}`, type: { mediaType: "document", mime: "application/pdf", format: "pdf", documentType: "pdf" } }));
    const lone = idWith("0f0f0f0f", 3);
    await files.create(record(lone, "org-find", projectId, { title: "Lone", tags: [] }));
    const elsewhere = idWith("0e0e0e0e", 4);
    await files.create(record(elsewhere, "org-find-other", other));

    const row = (await files.byId(a))!;
    expect(row).toMatchObject({
      id: a, org_id: "org-find", project_id: projectId, folder_id: null, media_type: "image", filename: "a1b2c3d4.jpg", size_bytes: 1234,
      content_type: "image/jpeg", format: "jpeg", sha256: `sha-${a}`, tags: '["one"]', auto_describe: 1, processing_status: "queued",
      processing_job_id: `job-${a}`, description_status: "pending", reserved_credits: 1, deleted_at: null, created_at: "2031-05-01T00:00:00.000Z",
    });
    expect(await files.byId(idWith("ffffffff", 9))).toBeNull();
    expect((await files.ofOrg("org-find", a))?.id).toBe(a);
    expect(await files.ofOrg("org-find-other", a)).toBeNull();

    expect((await files.find("org-find", a)).id).toBe(a);
    expect((await files.find("org-find", a.toUpperCase())).id).toBe(a);
    expect((await files.find("org-find", "0f0f0f0f")).id).toBe(lone);
    expect(await refusal(files.find("org-find", "a1b2c3d4"))).toBe("FILE_ID_AMBIGUOUS");
    expect(await refusal(files.find("org-find", "0e0e0e0e"))).toBe("FILE_NOT_FOUND");
    expect(await refusal(files.find("org-find", elsewhere))).toBe("FILE_NOT_FOUND");
    expect(await refusal(files.find("org-find", "nonsense"))).toBe("VALIDATION_ERROR");

    expect((await files.findOfType("org-find", twin, ["document", "video"])).id).toBe(twin);
    expect(await refusal(files.findOfType("org-find", twin, "image"))).toBe("WRONG_MEDIA_TYPE");

    // The oldest live file with the content.
    expect(await files.findDuplicate("org-find", `sha-${a}`)).toEqual({ id: a, filename: "a1b2c3d4.jpg" });
    expect(await files.findDuplicate("org-find-other", `sha-${a}`)).toBeNull();
    expect(await files.exists(lone)).toBe(true);
    expect(await files.exists(idWith("ffffffff", 9))).toBe(false);

    // A deleted file leaves the prefix to the other one.
    await files.softDelete(twin);
    expect((await files.find("org-find", "a1b2c3d4")).id).toBe(a);
    expect(await refusal(files.find("org-find", twin))).toBe("FILE_NOT_FOUND");
    expect((await files.find("org-find", twin, { includeDeleted: true })).id).toBe(twin);
    expect(await refusal(files.find("org-find", "a1b2c3d4", { includeDeleted: true }))).toBe("FILE_ID_AMBIGUOUS");
  });

  test("a placeholder is filled once its bytes are stored, or failed; a filled one is never failed", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 2));
    const files = new FileRepository(db, clock);
    const projectId = await tenant(db, "org-place");
    const base = { orgId: "org-place", projectId, folderId: null, mediaType: "document" as const, contentType: "application/octet-stream", size: 0, tags: ["cloud"], uploadedBy: null, sourceUrl: null };
    const filled = idWith("11111111", 1);
    const failed = idWith("22222222", 2);
    await files.createPlaceholder({ ...base, id: filled, filename: "photo" });
    await files.createPlaceholder({ ...base, id: failed, filename: "gone.pdf" });
    expect(await files.byId(filled)).toMatchObject({ media_type: "document", blob_key: null, sha256: null, processing_status: "queued", tags: '["cloud"]' });
    expect(await files.isPlaceholder(filled)).toBe(true);

    clock.advance(5_000);
    await files.placeholderFilled(record(filled, "org-place", projectId, { filename: "photo.jpg", tags: ["cloud", "beach"], description: { status: "skipped", error: "quota", credits: 0 } }));
    expect(await files.isPlaceholder(filled)).toBe(false);
    expect(await files.byId(filled)).toMatchObject({
      media_type: "image", filename: "photo.jpg", blob_key: `orgs/org-place/files/${filled}/original`, sha256: `sha-${filled}`, size_bytes: 1234,
      processing_status: "queued", processing_job_id: `job-${filled}`, description_status: "skipped", description_error: "quota", reserved_credits: 0,
      updated_at: "2031-05-02T00:00:05.000Z",
    });
    // Only a placeholder is failed: the filled file is left as it is.
    await files.placeholderFailed(filled, "the import was cancelled");
    expect((await files.byId(filled))!.processing_status).toBe("queued");

    await files.placeholderFailed(failed, "the download failed: 404 from the drive");
    expect(await files.byId(failed)).toMatchObject({
      processing_status: "failed", processing_error: "the download failed: 404 from the drive",
      processing_completed_at: "2031-05-02T00:00:05.000Z", last_error_at: "2031-05-02T00:00:05.000Z",
    });
    expect(await files.isPlaceholder(failed)).toBe(false);
  });

  test("processing: started, a retried attempt's error, completed with warnings, and queued again", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 3));
    const files = new FileRepository(db, clock);
    const projectId = await tenant(db, "org-proc");
    const id = idWith("33333333", 1);
    await files.create(record(id, "org-proc", projectId));
    // Queued: no new job while one would still run it.
    expect(await files.reprocessQueued(id, "job-2", false)).toBe(false);

    clock.advance(1_000);
    await files.processingStarted(id, 2);
    expect(await files.byId(id)).toMatchObject({ processing_status: "processing", retry_count: 1, processing_started_at: "2031-05-03T00:00:01.000Z" });
    clock.advance(1_000);
    await files.processingEnded(id, "processing", "the model was busy");
    expect(await files.byId(id)).toMatchObject({
      processing_status: "processing", processing_error: "the model was busy", processing_completed_at: null, last_error_at: "2031-05-03T00:00:02.000Z",
    });
    expect(await files.reprocessQueued(id, "job-2", false)).toBe(false);
    clock.advance(1_000);
    await files.processingEnded(id, "completed", null);
    expect(await files.byId(id)).toMatchObject({
      processing_status: "completed", processing_error: null, processing_completed_at: "2031-05-03T00:00:03.000Z", last_error_at: "2031-05-03T00:00:02.000Z",
    });

    clock.advance(1_000);
    expect(await files.reprocessQueued(id, "job-3", false)).toBe(true);
    expect(await files.byId(id)).toMatchObject({
      processing_status: "queued", processing_job_id: "job-3", processing_started_at: null, processing_completed_at: null, retry_count: 0,
    });
    // A job that ended without finishing the file (cancelled) leaves it queued: orphaned, it is queued again.
    expect(await files.reprocessQueued(id, "job-4", false)).toBe(false);
    expect(await files.reprocessQueued(id, "job-4", true)).toBe(true);
    await files.processingEnded(id, "failed", "the file does not decode");
    expect(await files.byId(id)).toMatchObject({ processing_status: "failed", processing_error: "the file does not decode", processing_completed_at: "2031-05-03T00:00:04.000Z" });
    await files.processingEnded(id, "stored", null);
    expect((await files.byId(id))!.processing_status).toBe("stored");

    // A placeholder has no bytes to process again.
    const placeholder = idWith("33333333", 2);
    await files.createPlaceholder({ id: placeholder, orgId: "org-proc", projectId, folderId: null, filename: "x", mediaType: "image", contentType: "image/png", size: 1, tags: [], uploadedBy: null, sourceUrl: null });
    await files.placeholderFailed(placeholder, "gone");
    expect(await files.reprocessQueued(placeholder, "job-5", true)).toBe(false);
  });

  test("the kinds' transitions of the row: edits, placing, images, videos, descriptions, documents' text, links", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 4));
    const files = new FileRepository(db, clock);
    const projectId = await tenant(db, "org-kinds");
    const image = idWith("44444444", 1);
    await files.create(record(image, "org-kinds", projectId, { title: "Old" }));

    await files.edit(image, { title: "New", tags: ["a", "b"], userDescription: "mine" });
    await files.edit(image, {});
    expect(await files.byId(image)).toMatchObject({ title: "New", tags: '["a","b"]', user_description: "mine" });
    await files.imageRendered(image, { width: 640, height: 480, format: "png", takenAt: "2020-01-01T00:00:00.000Z" });
    // A capture date the file already has is kept.
    await files.imageNotRendered(image, "could not decode", "1999-01-01T00:00:00.000Z");
    expect(await files.byId(image)).toMatchObject({ width: 640, height: 480, format: "png", content_created_at: "2020-01-01T00:00:00.000Z", processing_error: "could not decode" });
    await files.visibleTextFound(image, "STOP");
    await files.descriptionStarted(image);
    expect((await files.byId(image))!.description_status).toBe("processing");
    clock.advance(1_000);
    await files.described(image, { text: "A red sign", tags: ["a", "b", "sign"], category: "signage" });
    expect(await files.byId(image)).toMatchObject({
      visible_text: "STOP", upload_description: "A red sign", tags: '["a","b","sign"]', content_category: "signage", description_status: "completed",
      description_generated_at: "2031-05-04T00:00:01.000Z", updated_at: "2031-05-04T00:00:01.000Z",
    });
    await files.descriptionFailed(image, "the captioner failed");
    expect((await files.byId(image))!.description_status).toBe("failed");

    const video = idWith("44444444", 2);
    await files.create(record(video, "org-kinds", projectId, { type: { mediaType: "video", mime: "video/mp4", format: "mp4", documentType: null }, description: { status: "pending", error: null, credits: 2 } }));
    await files.videoProbed(video, { width: 1920, height: 1080, createdAt: "2024-06-01T12:00:00.000Z" });
    await files.descriptionSkipped(video, "over the analysis limits");
    await files.creditsReleased(video);
    expect(await files.byId(video)).toMatchObject({ width: 1920, height: 1080, content_created_at: "2024-06-01T12:00:00.000Z", description_status: "skipped", description_error: "over the analysis limits", reserved_credits: 0 });

    const doc = idWith("44444444", 3);
    await files.create(record(doc, "org-kinds", projectId, { type: { mediaType: "document", mime: "application/pdf", format: "pdf", documentType: "pdf" }, description: null }));
    expect(await files.extractedText(doc)).toBeNull();
    await files.textNotExtracted(doc, "the reader timed out");
    await files.textExtracted(doc, { text: "Chapter one. The whole text.", searchText: "Chapter one." });
    expect(await files.extractedText(doc)).toBe("Chapter one. The whole text.");
    await files.textExtracted(doc, { text: "Second reading.", searchText: "Second" }, { text: "A summary" });
    expect(await files.extractedText(doc)).toBe("Second reading.");
    expect(await files.byId(doc)).toMatchObject({ visible_text: "Second", upload_description: "A summary", processing_error: "the reader timed out" });
    await files.embeddingsWait(doc, "no text model");
    // The first error stays.
    expect((await files.byId(doc))!.processing_error).toBe("the reader timed out");
    await files.edit(doc, { title: null });
    await db.run("UPDATE files SET processing_error = NULL WHERE id = ?", [doc]);
    await files.embeddingsWait(doc, "no text model");
    expect((await files.byId(doc))!.processing_error).toBe("embeddings pending: no text model");

    const link = idWith("44444444", 4);
    await files.createLink({ id: link, orgId: "org-kinds", projectId, folderId: null, url: "https://example.com/story", filename: "example.com/story", title: null, tags: ["news"], uploadedBy: null, processingJobId: "crawl-1" });
    expect(await files.byId(link)).toMatchObject({ media_type: "link", source_url: "https://example.com/story", content_type: "text/html", processing_status: "queued", processing_job_id: "crawl-1", size_bytes: 0 });
    await files.pageRead(link, { title: "The story", description: "What happened", publishedAt: "2031-01-01T00:00:00.000Z", byteLength: 5120 });
    await files.pageRead(link, { title: "Another title", description: "Updated", publishedAt: null, byteLength: 6000 });
    expect(await files.byId(link)).toMatchObject({ title: "The story", upload_description: "Updated", content_created_at: "2031-01-01T00:00:00.000Z", size_bytes: 6000 });
    await files.recrawlQueued(link, "crawl-2");
    expect((await files.byId(link))!.processing_job_id).toBe("crawl-2");
    await files.extractedFrom(image, link, "https://example.com/sign.png");
    expect(await files.byId(image)).toMatchObject({ parent_file_id: link, source_url: "https://example.com/sign.png" });
    clock.advance(1_000);
    await files.touched(link);
    expect((await files.byId(link))!.updated_at).toBe("2031-05-04T00:00:02.000Z");

    await db.run("INSERT INTO folders (id, org_id, project_id, parent_id, name, name_key, created_at, updated_at) VALUES (?, ?, ?, NULL, 'Trips', 'trips', 'x', 'x')", ["folder-kinds", "org-kinds", projectId]);
    await files.place(image, projectId, "folder-kinds");
    expect((await files.byId(image))!.folder_id).toBe("folder-kinds");
  });

  test("soft delete keeps its first time; restore; purge removes only what was deleted before the cutoff", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 5));
    const files = new FileRepository(db, clock);
    const projectId = await tenant(db, "org-trash");
    const old = idWith("55555555", 1);
    const recent = idWith("55555555", 2);
    const live = idWith("55555555", 3);
    for (const id of [old, recent, live]) await files.create(record(id, "org-trash", projectId));

    const first = await files.softDelete(old);
    expect(first).toBe("2031-05-05T00:00:00.000Z");
    clock.advance(1_000);
    await files.softDelete(old);
    expect((await files.byId(old))!.deleted_at).toBe(first);
    clock.advance(60_000);
    await files.softDelete(recent);
    const cutoff = "2031-05-05T00:00:30.000Z";
    // (Other tests' files share the table.)
    const due = (await files.deletedBefore(cutoff, 100)).filter((f) => f.id.startsWith("55555555"));
    expect(due).toEqual([{ id: old, blob_key: `orgs/org-trash/files/${old}/original` }]);

    await files.purge(recent, cutoff);
    await files.purge(live, cutoff);
    await files.purge(old, cutoff);
    expect(await files.byId(old)).toBeNull();
    expect(await files.byId(recent)).not.toBeNull();
    expect(await files.byId(live)).not.toBeNull();

    clock.advance(1_000);
    expect(await files.restore(recent)).toBe("2031-05-05T00:01:02.000Z");
    expect(await files.byId(recent)).toMatchObject({ deleted_at: null, updated_at: "2031-05-05T00:01:02.000Z" });
  });

  test("writes through withTx commit with the caller's transaction, or roll back with it", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 4, 6));
    const files = new FileRepository(db, clock);
    const projectId = await tenant(db, "org-tx");
    const id = idWith("66666666", 1);
    await files.create(record(id, "org-tx", projectId, { title: "Before" }));

    const failure = new Error("the caller's next statement failed");
    await expect(
      db.transaction(async (tx) => {
        const inTx = files.withTx(tx);
        await inTx.edit(id, { title: "During" });
        await inTx.softDelete(id);
        await inTx.create(record(idWith("66666666", 2), "org-tx", projectId));
        await inTx.textExtracted(id, { text: "never", searchText: null });
        // The transaction sees its own writes.
        expect((await inTx.byId(id))!.title).toBe("During");
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await files.byId(id)).toMatchObject({ title: "Before", deleted_at: null });
    expect(await files.byId(idWith("66666666", 2))).toBeNull();
    expect(await files.extractedText(id)).toBeNull();

    await db.transaction(async (tx) => {
      await files.withTx(tx).edit(id, { title: "After" });
      await files.withTx(tx).textExtracted(id, { text: "kept", searchText: "kept" });
    });
    expect((await files.byId(id))!.title).toBe("After");
    expect(await files.extractedText(id)).toBe("kept");
  });
});
