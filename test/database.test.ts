/**
 * The server's database connection keeps the compiled statements of all the SQL it runs (Bun
 * keeps only the last 20 by default, and the server runs hundreds); migrations that move data keep it.
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { getLoadablePath } from "sqlite-vec";
import { migrate, openDatabase } from "../src/db/database.ts";
import { MIGRATIONS } from "../src/db/migrations/index.ts";
import { systemClock } from "../src/clock.ts";
import { FileRepository } from "../src/files/file-repository.ts";
import { SqliteClient } from "../src/db/sqlite-client.ts";
import { videoAnalysisOf, videoFactsOf } from "../src/video/video-facts.ts";
import { imageFactsOf } from "../src/images/image-facts.ts";
import { documentFactsOf } from "../src/documents/document-facts.ts";
import { crawlOf, findLink } from "../src/links/link-crawls.ts";
import { complianceOf } from "../src/compliance/image-compliance.ts";
import { tempDir } from "./support/server.ts";
import { defaultProjectOf, insertTenantRows } from "./support/rows.ts";

const dir = tempDir("mediabox-database-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A database as the release before migration `version` left it (openDatabase's pragmas, the
 * migrations before it), with one organization and its default project to put files in.
 */
async function databaseBefore(version: number, name: string) {
  const db = new Database(join(dir, `${name}.db`));
  db.loadExtension(getLoadablePath());
  db.run("PRAGMA foreign_keys = ON"); // as openDatabase sets it
  migrate(db, MIGRATIONS.filter((m) => m.version < version));
  const sql = new SqliteClient(db);
  const org = (await insertTenantRows(sql, systemClock, { name, tier: "PROFESSIONAL" })).orgId;
  return { db, org, project: await defaultProjectOf(sql, org) };
}

/** The files row no longer has these columns (a migration moved them to a kind's table). */
function expectColumnsGone(db: Database, gone: string[]): void {
  const columns = db.query<{ name: string }, []>("PRAGMA table_info(files)").all().map((c) => c.name);
  expect(columns.filter((name) => gone.includes(name))).toEqual([]);
}

test("a statement stays compiled while hundreds of others run", () => {
  const db = openDatabase(join(dir, "mediabox.db"));
  const sql = "SELECT id FROM files WHERE id = ?";
  const first = db.query(sql);
  for (let i = 0; i < 300; i++) db.query(`SELECT ${i} AS n FROM files WHERE id = ?`).get("x");
  expect(db.query(sql)).toBe(first);
  db.close();
});

test("migration 18 moves documents' whole text out of their rows, keeping every text", async () => {
  const db = new Database(join(dir, "document-texts.db"));
  try {
    db.loadExtension(getLoadablePath());
    db.run("PRAGMA foreign_keys = ON"); // as openDatabase sets it
    migrate(db, MIGRATIONS.filter((m) => m.version < 18));
    const sql = new SqliteClient(db);
    const org = (await insertTenantRows(sql, systemClock, { name: "migrating", tier: "PROFESSIONAL" })).orgId;
    const project = await defaultProjectOf(sql, org);
    const insert = db.query(
      "INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, extracted_text) VALUES (?, ?, ?, ?, ?, 'x', 'x', ?)",
    );
    const book = "Chapter one. ".repeat(50_000);
    insert.run("doc-1", org, project, "document", "book.pdf", book);
    insert.run("doc-2", org, project, "document", "pending.pdf", null);
    insert.run("img-1", org, project, "image", "photo.jpg", null);

    migrate(db, MIGRATIONS);
    expectColumnsGone(db, ["extracted_text"]);
    const files = new FileRepository(new SqliteClient(db), systemClock);
    expect(await files.extractedText("doc-1")).toBe(book);
    expect(await files.extractedText("doc-2")).toBeNull();
    expect(await files.extractedText("img-1")).toBeNull();
    // The text goes with its file.
    db.run("DELETE FROM files WHERE id = 'doc-1'");
    expect(db.query("SELECT count(*) AS n FROM document_texts").get()).toEqual({ n: 0 });
  } finally {
    db.close();
  }
});

test("migration 30 drops the media type CHECK and keeps every row, child row, index, trigger and search entry", async () => {
  const { db, org, project } = await databaseBefore(30, "open-media-types");
  try {
    const insert = db.query(
      "INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, title) VALUES (?, ?, ?, ?, ?, 'x', 'x', ?)",
    );
    insert.run("doc-1", org, project, "document", "report.pdf", "Quarterly harbour report");
    insert.run("img-1", org, project, "image", "photo.jpg", null);
    expect(() => insert.run("aud-1", org, project, "audio", "song.wav", null)).toThrow(/CHECK/);
    db.run("INSERT INTO tag_suggestions (file_id, phrase, rank) VALUES ('doc-1', 'harbour', 1)");
    db.run("INSERT INTO document_texts (file_id, text) VALUES ('doc-1', 'the whole text')");
    const before = db.query("SELECT id, search_rowid, rowid FROM files ORDER BY id").all();
    const indexes = () => db.query("SELECT name FROM sqlite_schema WHERE tbl_name = 'files' AND type IN ('index', 'trigger') ORDER BY name").all();
    const dependents = indexes();

    migrate(db, MIGRATIONS.filter((m) => m.version <= 30));
    expect(db.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()?.foreign_keys).toBe(1);
    expect(db.query("SELECT id, search_rowid, rowid FROM files ORDER BY id").all()).toEqual(before);
    expect(indexes()).toEqual(dependents);
    expect(db.query("SELECT phrase FROM tag_suggestions WHERE file_id = 'doc-1'").all()).toEqual([{ phrase: "harbour" }]);
    expect(db.query("SELECT count(*) AS n FROM document_texts").get()).toEqual({ n: 1 });
    // A registered kind's type is stored; the search triggers work on the rebuilt table.
    insert.run("aud-1", org, project, "audio", "song.wav", "Harbour song");
    const found = db.query("SELECT f.id FROM files_fts JOIN files f ON f.search_rowid = files_fts.rowid WHERE files_fts MATCH 'harbour' ORDER BY f.id").all();
    expect(found).toEqual([{ id: "aud-1" }, { id: "doc-1" }]);
    // Children still follow their file.
    db.run("DELETE FROM files WHERE id = 'doc-1'");
    expect(db.query("SELECT count(*) AS n FROM tag_suggestions").get()).toEqual({ n: 0 });
    expect(db.query("SELECT count(*) AS n FROM document_texts").get()).toEqual({ n: 0 });
    expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  } finally {
    db.close();
  }
});

test("migration 31 moves a video's stream facts out of the files row into video_facts", async () => {
  const { db, org, project } = await databaseBefore(31, "video-facts");
  try {
    const insert = db.query(
      `INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, width, height, duration_seconds, frame_rate,
         video_codec, video_container, has_audio, bit_rate) VALUES (?, ?, ?, ?, ?, 'x', 'x', ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    insert.run("vid-1", org, project, "video", "clip.mp4", 320, 240, 12.5, 25, "h264", "mp4", 1, 480_000);
    insert.run("vid-2", org, project, "video", "silent.webm", 640, 360, 3, 24, "vp9", "webm", 0, null);
    insert.run("vid-3", org, project, "video", "queued.mov", null, null, null, null, null, null, null, null);
    insert.run("img-1", org, project, "image", "photo.jpg", 800, 600, null, null, null, null, null, null);

    migrate(db, MIGRATIONS);
    expectColumnsGone(db, ["duration_seconds", "frame_rate", "video_codec", "video_container", "has_audio", "bit_rate"]);
    expect(await videoFactsOf(new SqliteClient(db), "vid-1")).toEqual({ durationSeconds: 12.5, frameRate: 25, codec: "h264", container: "mp4", hasAudio: true, bitRate: 480_000 });
    expect(await videoFactsOf(new SqliteClient(db), "vid-2")).toEqual({ durationSeconds: 3, frameRate: 24, codec: "vp9", container: "webm", hasAudio: false, bitRate: null });
    // Not probed yet, and not a video: no facts.
    expect(await videoFactsOf(new SqliteClient(db), "vid-3")).toBeNull();
    expect(await videoFactsOf(new SqliteClient(db), "img-1")).toBeNull();
    // The row keeps what images have too.
    expect(db.query("SELECT width, height FROM files WHERE id = 'vid-1'").get()).toEqual({ width: 320, height: 240 });
    db.run("DELETE FROM files WHERE id = 'vid-1'");
    expect(db.query("SELECT file_id FROM video_facts").all()).toEqual([{ file_id: "vid-2" }]);
  } finally {
    db.close();
  }
});

test("migration 33 moves a link's crawl out of the files row into link_crawls", async () => {
  const { db, org, project } = await databaseBefore(33, "link-crawls");
  try {
    const insert = db.query(
      `INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, source_url, link_url_key, domain, og_metadata,
         favicon_blob_key, favicon_content_type, snapshot_blob_key, crawl_status, crawl_error, extract_images, crawled_at)
       VALUES (?, ?, ?, ?, ?, 'x', 'x', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    insert.run("lnk-1", org, project, "link", "example.com/a", "https://example.com/a", "https://example.com/a", "example.com", '{"og:title":"A"}',
      "k/favicon", "image/png", "k/snapshot.html", "completed", null, 1, "2026-01-01T00:00:00.000Z");
    insert.run("lnk-2", org, project, "link", "example.org", "https://example.org/", "https://example.org/", "example.org", null, null, null, null, "blocked", "robots.txt forbids it", 0, null);
    insert.run("img-1", org, project, "image", "photo.jpg", null, null, null, null, null, null, null, null, null, null, null);

    migrate(db, MIGRATIONS);
    expectColumnsGone(db, ["link_url_key", "domain", "og_metadata", "favicon_blob_key", "favicon_content_type", "snapshot_blob_key", "crawl_status", "crawl_error", "extract_images", "crawled_at"]);
    expect(await crawlOf(new SqliteClient(db), "lnk-1")).toEqual({
      urlKey: "https://example.com/a", domain: "example.com", extractImages: true, status: "completed", error: null, crawledAt: "2026-01-01T00:00:00.000Z",
      ogMetadata: '{"og:title":"A"}', faviconBlobKey: "k/favicon", faviconContentType: "image/png", snapshotBlobKey: "k/snapshot.html",
    });
    expect(await crawlOf(new SqliteClient(db), "lnk-2")).toMatchObject({ domain: "example.org", extractImages: false, status: "blocked", error: "robots.txt forbids it", snapshotBlobKey: null });
    expect(await crawlOf(new SqliteClient(db), "img-1")).toBeNull();
    // A second save of the page still finds the first.
    expect((await findLink(new SqliteClient(db), org, "https://example.com/a"))?.id).toBe("lnk-1");
    db.run("DELETE FROM files WHERE id = 'lnk-1'");
    expect(db.query("SELECT file_id FROM link_crawls").all()).toEqual([{ file_id: "lnk-2" }]);
  } finally {
    db.close();
  }
});

test("migration 35 moves a photo's compliance request and verdict out of the files row into image_compliance", async () => {
  const { db, org, project } = await databaseBefore(35, "image-compliance");
  try {
    const insert = db.query(
      `INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, compliance_type, compliance_standard, compliance_image_type, compliance_status)
       VALUES (?, ?, ?, 'image', ?, 'x', 'x', ?, ?, ?, ?)`,
    );
    insert.run("img-1", org, project, "front.jpg", "mls", "RESO", "main", "pass");
    insert.run("img-2", org, project, "kitchen.jpg", "mls", "RESO", null, null);
    insert.run("img-3", org, project, "plain.jpg", null, null, null, null);

    migrate(db, MIGRATIONS);
    expectColumnsGone(db, ["compliance_type", "compliance_standard", "compliance_image_type", "compliance_status"]);
    expect(await complianceOf(new SqliteClient(db), "img-1")).toEqual({ type: "mls", standard: "RESO", imageType: "main", status: "pass" });
    expect(await complianceOf(new SqliteClient(db), "img-2")).toEqual({ type: "mls", standard: "RESO", imageType: null, status: null });
    expect(await complianceOf(new SqliteClient(db), "img-3")).toBeNull();
    db.run("DELETE FROM files WHERE id = 'img-1'");
    expect(db.query("SELECT file_id FROM image_compliance").all()).toEqual([{ file_id: "img-2" }]);
  } finally {
    db.close();
  }
});

test("migration 38 moves an image's rendering and embedding model into image_facts, a video's analysis into video_facts", async () => {
  const { db, org, project } = await databaseBefore(38, "image-facts");
  try {
    const insert = db.query(
      `INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, width, height, variant_status, variant_count, blur_hash,
         image_embedding_model, analysis_status, analysis_error) VALUES (?, ?, ?, ?, ?, 'x', 'x', ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    insert.run("img-1", org, project, "image", "photo.jpg", 800, 600, "completed", 4, "LKO2?U%2Tw=w", "clip:vit-b32", null, null);
    insert.run("img-2", org, project, "image", "broken.png", null, null, "failed", 0, null, null, null, null);
    insert.run("vid-1", org, project, "video", "clip.mp4", 320, 240, "completed", 4, "L00000fQfQfQ", "clip:vit-b32", "skipped", "the video is 900 s long");
    insert.run("vid-2", org, project, "video", "queued.mov", null, null, "pending", 0, null, null, "pending", null);
    insert.run("doc-1", org, project, "document", "notes.txt", null, null, null, 0, null, null, null, null);
    // vid-1 was probed (migration 31's table); vid-2 not yet.
    db.query("INSERT INTO video_facts (file_id, duration_seconds, codec) VALUES ('vid-1', 900, 'h264')").run();

    migrate(db, MIGRATIONS);
    expectColumnsGone(db, ["variant_status", "variant_count", "blur_hash", "image_embedding_model", "analysis_status", "analysis_error"]);
    expect(await imageFactsOf(new SqliteClient(db), "img-1")).toEqual({ variantStatus: "completed", variantCount: 4, blurHash: "LKO2?U%2Tw=w", embeddingModel: "clip:vit-b32" });
    expect(await imageFactsOf(new SqliteClient(db), "img-2")).toEqual({ variantStatus: "failed", variantCount: 0, blurHash: null, embeddingModel: null });
    expect(await imageFactsOf(new SqliteClient(db), "vid-1")).toEqual({ variantStatus: "completed", variantCount: 4, blurHash: "L00000fQfQfQ", embeddingModel: "clip:vit-b32" });
    expect((await imageFactsOf(new SqliteClient(db), "vid-2")).variantStatus).toBe("pending");
    // A document has no image facts: no row, the defaults the row had.
    expect(db.query("SELECT file_id FROM image_facts WHERE file_id = 'doc-1'").get()).toBeNull();
    expect(await imageFactsOf(new SqliteClient(db), "doc-1")).toEqual({ variantStatus: null, variantCount: 0, blurHash: null, embeddingModel: null });
    // The analysis joins the probe's facts, or starts the video's row.
    expect(await videoAnalysisOf(new SqliteClient(db), "vid-1")).toEqual({ status: "skipped", error: "the video is 900 s long" });
    expect(await videoFactsOf(new SqliteClient(db), "vid-1")).toMatchObject({ durationSeconds: 900, codec: "h264" });
    expect(await videoAnalysisOf(new SqliteClient(db), "vid-2")).toEqual({ status: "pending", error: null });
    expect(await videoAnalysisOf(new SqliteClient(db), "img-1")).toEqual({ status: null, error: null });
    // The row keeps the content's size.
    expect(db.query("SELECT width, height FROM files WHERE id = 'img-1'").get()).toEqual({ width: 800, height: 600 });
    db.run("DELETE FROM files WHERE id IN ('img-1', 'vid-1')");
    expect(db.query("SELECT file_id FROM image_facts ORDER BY file_id").all()).toEqual([{ file_id: "img-2" }, { file_id: "vid-2" }]);
    expect(db.query("SELECT file_id FROM video_facts").all()).toEqual([{ file_id: "vid-2" }]);
  } finally {
    db.close();
  }
});

test("migration 39 moves a document's reading and chunk states into document_facts", async () => {
  const { db, org, project } = await databaseBefore(39, "document-facts");
  try {
    const insert = db.query(
      `INSERT INTO files (id, org_id, project_id, media_type, filename, created_at, updated_at, visible_text, text_extraction_status, digitization_status,
         page_count, document_language, chunk_count, embedding_status) VALUES (?, ?, ?, ?, ?, 'x', 'x', ?, ?, ?, ?, ?, ?, ?)`,
    );
    insert.run("doc-1", org, project, "document", "report.pdf", "Quarterly report", "completed", "completed", 12, "en", 30, "completed");
    insert.run("doc-2", org, project, "document", "queued.docx", null, "pending", null, null, null, 0, null);
    insert.run("lnk-1", org, project, "link", "example.com", "An article", "completed", "completed", 1, "de", 3, "processing");
    insert.run("img-1", org, project, "image", "photo.jpg", "STOP", null, null, null, null, 0, null);

    migrate(db, MIGRATIONS);
    expectColumnsGone(db, ["text_extraction_status", "digitization_status", "page_count", "document_language", "chunk_count", "embedding_status"]);
    expect(await documentFactsOf(new SqliteClient(db), "doc-1")).toEqual({
      textExtractionStatus: "completed", digitizationStatus: "completed", pageCount: 12, language: "en", chunkCount: 30, embeddingStatus: "completed",
    });
    expect(await documentFactsOf(new SqliteClient(db), "doc-2")).toEqual({ textExtractionStatus: "pending", digitizationStatus: null, pageCount: null, language: null, chunkCount: 0, embeddingStatus: null });
    // A link's article went through the same reading.
    expect(await documentFactsOf(new SqliteClient(db), "lnk-1")).toMatchObject({ pageCount: 1, language: "de", chunkCount: 3, embeddingStatus: "processing" });
    // An image has no row: the defaults the row had.
    expect(db.query("SELECT file_id FROM document_facts WHERE file_id = 'img-1'").get()).toBeNull();
    expect(await documentFactsOf(new SqliteClient(db), "img-1")).toEqual({ textExtractionStatus: null, digitizationStatus: null, pageCount: null, language: null, chunkCount: 0, embeddingStatus: null });
    // The searchable text stays on the row (the library's search index reads it there).
    expect(db.query("SELECT visible_text FROM files WHERE id = 'doc-1'").get()).toEqual({ visible_text: "Quarterly report" });
    db.run("DELETE FROM files WHERE id = 'doc-1'");
    expect(db.query("SELECT file_id FROM document_facts ORDER BY file_id").all()).toEqual([{ file_id: "doc-2" }, { file_id: "lnk-1" }]);
  } finally {
    db.close();
  }
});
