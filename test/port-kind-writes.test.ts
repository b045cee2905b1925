/**
 * The media kinds' writers on the data-access port behave the same on SQLite and on PostgreSQL:
 * image facts, findings and compliance, camera facts, extractions and their review, video facts
 * document facts (with the file's updated_at), link crawls (a recrawl
 * refused while one is pending unless orphaned), tag suggestions (dismissals kept), descriptions,
 * a document's pages, text, summary and chunks stored (and stored again), its chunks' vectors
 * committed with their marks or not at all; and writes made in a port transaction that rolls back leave nothing, the file's updated_at
 * included. The pipelines' HTTP tests (images, documents, videos, links, ...) are where they were.
 * The PostgreSQL half skips, saying why, where no server binary is found.
 */
import { describe, expect, test } from "bun:test";
import { storeCameraFacts, noCameraFacts } from "../src/camera/camera-facts.ts";
import { ManualClock } from "../src/clock.ts";
import { complianceChecked, complianceRequested } from "../src/compliance/image-compliance.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import {
  chunksStored, embeddingEnded, embeddingsOfOtherModelsPending, embeddingStarted, textExtractionFailed, textExtractionStarted, textPending, textRead,
} from "../src/documents/document-facts.ts";
import { reviewExtraction, saveExtraction } from "../src/extractions/extractions.ts";
import { FileRepository } from "../src/files/file-repository.ts";
import { dismissSuggestion, replaceSuggestions } from "../src/files/tag-suggestions.ts";
import { embeddingModelOf, imageEmbedded, variantsFailed, variantsPending, variantsRendered, variantsStarted } from "../src/images/image-facts.ts";
import { storeFindings } from "../src/images/image-findings.ts";
import { crawlCreated, crawled, crawlEnded, crawlRequeued, crawlStarted, faviconStored, pageMetadataStored, snapshotStored } from "../src/links/link-crawls.ts";
import { replaceDescriptions, replaceDescriptionsOf } from "../src/processing/descriptions.ts";
import { analysisEnded, analysisPending, storeVideoFacts } from "../src/video/video-facts.ts";
import { storeDocument, storeVectors } from "../src/documents/document-pipeline.ts";
import type { Chunk, DocumentContent } from "../src/documents/types.ts";
import { PgVectorIndex } from "../src/vectors/pgvector-index.ts";
import { SqliteVectorSpaces } from "../src/vectors/sqlite-vector-spaces.ts";
import { portEngines, refusal } from "./support/port-engines.ts";
import { findPostgres } from "./support/postgres.ts";

const { engines, sqlite } = portEngines("kind_writes");

/** Whether the PostgreSQL found has pgvector. */
const pgvector = (() => {
  const found = findPostgres();
  return !("missing" in found) && found.vector;
})();

const ORG = "org-kinds";
const STARTED = Date.UTC(2032, 2, 1);
const iso = (ms: number) => new Date(ms).toISOString();

async function tenant(db: SqlClient): Promise<void> {
  await db.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, 'STARTER', 'x') ON CONFLICT DO NOTHING", [ORG, ORG, ORG]);
  await db.run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES (?, ?, 'Default', 'default', 1, 'x', 'x') ON CONFLICT DO NOTHING", [`${ORG}-p`, ORG]);
}

/** A file of the kind, its updated_at 'x' (so a write that moves it shows). */
async function file(db: SqlClient, id: string, mediaType: string): Promise<void> {
  await tenant(db);
  await db.run(
    "INSERT INTO files (id, org_id, project_id, media_type, filename, tags, created_at, updated_at) VALUES (?, ?, ?, ?, ?, '[]', 'x', 'x')",
    [id, ORG, `${ORG}-p`, mediaType, `${id}.bin`],
  );
}

const updatedAt = async (db: SqlClient, id: string) => (await db.one<{ updated_at: string }>("SELECT updated_at FROM files WHERE id = ?", [id]))!.updated_at;


describe.each(engines)("the kinds' writers on $name", ({ client }) => {
  const setup = () => {
    const db = client();
    const clock = new ManualClock(STARTED);
    return { db, clock, files: new FileRepository(db, clock) };
  };

  test("image facts: pending, started (the file's updated_at moves), rendered, failed, embedded", async () => {
    const { db, clock, files } = setup();
    await file(db, "img-facts", "image");
    const facts = async () => db.one("SELECT variant_status, variant_count, blur_hash, embedding_model FROM image_facts WHERE file_id = ?", ["img-facts"]);
    await variantsPending(db, "img-facts");
    expect(await facts()).toEqual({ variant_status: "pending", variant_count: 0, blur_hash: null, embedding_model: null });
    expect(await updatedAt(db, "img-facts")).toBe("x");
    await variantsStarted(db, files, "img-facts");
    expect(await facts()).toMatchObject({ variant_status: "processing" });
    expect(await updatedAt(db, "img-facts")).toBe(iso(STARTED));
    clock.advance(1_000);
    await variantsRendered(db, "img-facts", { count: 4, blurHash: "LEHV6nWB" });
    await imageEmbedded(db, "img-facts", "clip-test");
    expect(await facts()).toEqual({ variant_status: "completed", variant_count: 4, blur_hash: "LEHV6nWB", embedding_model: "clip-test" });
    expect(await embeddingModelOf(db, "img-facts")).toBe("clip-test");
    await variantsFailed(db, "img-facts");
    expect(await facts()).toMatchObject({ variant_status: "failed", variant_count: 4, embedding_model: "clip-test" });
  });

  test("an image's findings replace the earlier ones; its compliance check is asked, then judged", async () => {
    const { db, clock } = setup();
    await file(db, "img-find", "image");
    await storeFindings(db, clock, "img-find", { objects: [{ label: "dog", score: 0.9, box: [0, 0, 1, 1] } as never], faces: 1, people: 2, colours: ["red"] });
    clock.advance(5_000);
    await storeFindings(db, clock, "img-find", { objects: [], faces: 0, people: 0, colours: ["blue", "green"] });
    expect(await db.all("SELECT objects, faces, people, colours, found_at FROM image_findings WHERE file_id = ?", ["img-find"])).toEqual([
      { objects: "[]", faces: 0, people: 0, colours: '["blue","green"]', found_at: iso(STARTED + 5_000) },
    ]);

    await complianceRequested(db, "img-find", { type: "mls", standard: "default", imageType: null });
    expect(await db.one("SELECT type, standard, image_type, status FROM image_compliance WHERE file_id = ?", ["img-find"])).toEqual({ type: "mls", standard: "default", image_type: null, status: null });
    await complianceChecked(db, "img-find", "fail");
    expect((await db.one<{ status: string }>("SELECT status FROM image_compliance WHERE file_id = ?", ["img-find"]))!.status).toBe("fail");
  });

  test("camera facts: stored with the place named, replaced whole, removed when the metadata says nothing", async () => {
    const { db } = setup();
    await file(db, "cam", "image");
    // Oslo; (0, 0) is no place, and neither is an altitude without one.
    await storeCameraFacts(db, ORG, "cam", { ...noCameraFacts(), make: "Canon", model: "EOS R5", iso: 200, fNumber: 2.8, latitude: 59.9139, longitude: 10.7522, altitudeM: 12 });
    const row = await db.one<Record<string, unknown>>("SELECT org_id, make, model, iso, f_number, latitude, longitude, altitude_m, country_code FROM camera_facts WHERE file_id = ?", ["cam"]);
    expect(row).toEqual({ org_id: ORG, make: "Canon", model: "EOS R5", iso: 200, f_number: 2.8, latitude: 59.9139, longitude: 10.7522, altitude_m: 12, country_code: "NO" });
    await storeCameraFacts(db, ORG, "cam", { ...noCameraFacts(), make: "Nikon", latitude: 0, longitude: 0, altitudeM: 40 });
    expect(await db.one("SELECT make, model, iso, latitude, altitude_m, country_code FROM camera_facts WHERE file_id = ?", ["cam"])).toEqual({
      make: "Nikon", model: null, iso: null, latitude: null, altitude_m: null, country_code: null,
    });
    await storeCameraFacts(db, ORG, "cam", { ...noCameraFacts(), takenAt: "2031-01-01T00:00:00.000Z" });
    expect(await db.one("SELECT file_id FROM camera_facts WHERE file_id = ?", ["cam"])).toBeNull();
  });

  test("extractions: saved again keeps the review's corrections; reviews merge; an extraction that is not there is refused", async () => {
    const { db, clock } = setup();
    await file(db, "ext", "image");
    await saveExtraction(db, clock, "ext", "text_regions", "ocr-a", { regions: [{ text: "EXIT" }, { text: "OPEN" }] });
    clock.advance(1_000);
    const first = await reviewExtraction(db, clock, "ext", "text_regions", { item_reviews: { "regions.1": "rejected" }, field_edits: {} });
    expect(first).toEqual({ corrections: { item_reviews: { "regions.1": "rejected" }, field_edits: {} }, updated_at: iso(STARTED + 1_000) });
    const second = await reviewExtraction(db, clock, "ext", "text_regions", { item_reviews: {}, field_edits: { "regions.0.text": "EXIT 3" } });
    expect(second.corrections).toEqual({ item_reviews: { "regions.1": "rejected" }, field_edits: { "regions.0.text": "EXIT 3" } });
    clock.advance(1_000);
    await saveExtraction(db, clock, "ext", "text_regions", "ocr-b", { regions: [{ text: "EXIT" }, { text: "CLOSED" }] });
    const row = await db.one<{ source: string; data: string; corrections: string; created_at: string; updated_at: string; reviewed_at: string }>(
      "SELECT source, data, corrections, created_at, updated_at, reviewed_at FROM file_extractions WHERE file_id = ? AND domain = ?",
      ["ext", "text_regions"],
    );
    expect(row).toMatchObject({ source: "ocr-b", created_at: iso(STARTED), updated_at: iso(STARTED + 2_000), reviewed_at: iso(STARTED + 1_000) });
    expect(JSON.parse(row!.data)).toEqual({ regions: [{ text: "EXIT" }, { text: "CLOSED" }] });
    expect(JSON.parse(row!.corrections)).toEqual(second.corrections);
    expect(await refusal(reviewExtraction(db, clock, "ext", "mls_compliance", { item_reviews: {}, field_edits: {} }))).toBe("EXTRACTION_NOT_FOUND");
    // A review naming an item the extraction lacks changes nothing.
    expect(await refusal(reviewExtraction(db, clock, "ext", "text_regions", { item_reviews: { "regions.7": "confirmed" }, field_edits: {} }))).toBe("VALIDATION_ERROR");
    expect(JSON.parse((await db.one<{ corrections: string }>("SELECT corrections FROM file_extractions WHERE file_id = ?", ["ext"]))!.corrections)).toEqual(second.corrections);
  });

  test("video facts: pending, probed (processing), ended with its error and the file's updated_at", async () => {
    const { db, files } = setup();
    await file(db, "vid", "video");
    const facts = async () => db.one("SELECT duration_seconds, frame_rate, codec, container, has_audio, bit_rate, analysis_status, analysis_error FROM video_facts WHERE file_id = ?", ["vid"]);
    await analysisPending(db, "vid");
    expect(await facts()).toMatchObject({ duration_seconds: null, analysis_status: "pending", analysis_error: null });
    await storeVideoFacts(db, "vid", { durationSeconds: 12.5, frameRate: 29.97, codec: "h264", container: "mp4", hasAudio: false, bitRate: 800_000 });
    expect(await facts()).toEqual({ duration_seconds: 12.5, frame_rate: 29.97, codec: "h264", container: "mp4", has_audio: 0, bit_rate: 800_000, analysis_status: "processing", analysis_error: null });
    expect(await updatedAt(db, "vid")).toBe("x");
    await analysisEnded(db, files, "vid", "failed", "ffmpeg exited with 1");
    expect(await facts()).toMatchObject({ duration_seconds: 12.5, analysis_status: "failed", analysis_error: "ffmpeg exited with 1" });
    expect(await updatedAt(db, "vid")).toBe(iso(STARTED));
    await analysisPending(db, "vid");
    expect(await facts()).toMatchObject({ codec: "h264", analysis_status: "pending", analysis_error: null });
  });

  test("document facts: reading and embedding states with the file's updated_at; chunks of another model go back to pending", async () => {
    const { db, clock, files } = setup();
    await file(db, "doc", "document");
    const facts = async () => db.one("SELECT text_extraction_status, digitization_status, page_count, language, chunk_count, embedding_status FROM document_facts WHERE file_id = ?", ["doc"]);
    await textPending(db, "doc");
    expect(await facts()).toEqual({ text_extraction_status: "pending", digitization_status: null, page_count: null, language: null, chunk_count: 0, embedding_status: null });
    await textExtractionStarted(db, files, "doc");
    expect(await facts()).toMatchObject({ text_extraction_status: "processing", digitization_status: "processing" });
    expect(await updatedAt(db, "doc")).toBe(iso(STARTED));
    await textExtractionFailed(db, files, "doc", false);
    expect(await facts()).toMatchObject({ text_extraction_status: "pending", digitization_status: "pending" });
    await textRead(db, "doc", { pageCount: 3, language: "en", digitization: "completed" });
    clock.advance(1_000);
    await chunksStored(db, files, "doc", 2);
    expect(await facts()).toEqual({ text_extraction_status: "completed", digitization_status: "completed", page_count: 3, language: "en", chunk_count: 2, embedding_status: "pending" });
    expect(await updatedAt(db, "doc")).toBe(iso(STARTED + 1_000));
    await embeddingStarted(db, files, "doc");
    await embeddingEnded(db, files, "doc", "completed");
    expect(await facts()).toMatchObject({ embedding_status: "completed" });

    // Two chunks, one embedded by the old model: the document goes back to pending; one by the current model alone does not.
    await file(db, "doc-current", "document");
    await chunksStored(db, files, "doc-current", 1);
    await embeddingEnded(db, files, "doc-current", "completed");
    const chunk = (id: string, fileId: string, index: number, model: string | null) =>
      db.run(
        "INSERT INTO document_chunks (id, file_id, org_id, chunk_index, content, page_numbers, heading_hierarchy, token_count, chunk_type, embedding_status, embedding_model) VALUES (?, ?, ?, ?, 'text', '[1]', '[]', 1, 'paragraph', ?, ?)",
        [id, fileId, ORG, index, model ? "completed" : "pending", model],
      );
    await chunk("doc:0", "doc", 0, "old-model");
    await chunk("doc:1", "doc", 1, null);
    await chunk("doc-current:0", "doc-current", 0, "new-model");
    clock.advance(1_000);
    await embeddingsOfOtherModelsPending(db, files, "new-model");
    expect(await facts()).toMatchObject({ embedding_status: "pending" });
    expect(await updatedAt(db, "doc")).toBe(iso(STARTED + 2_000));
    expect((await db.one<{ embedding_status: string }>("SELECT embedding_status FROM document_facts WHERE file_id = ?", ["doc-current"]))!.embedding_status).toBe("completed");
  });

  test("link crawls: created pending, requeued only once it ended (or orphaned), each step moving the file's updated_at", async () => {
    const { db, clock, files } = setup();
    await file(db, "link", "link");
    const crawl = async () => db.one<Record<string, unknown>>("SELECT url_key, domain, extract_images, status, error, crawled_at, og_metadata, favicon_blob_key, favicon_content_type, snapshot_blob_key FROM link_crawls WHERE file_id = ?", ["link"]);
    await db.transaction((tx) => crawlCreated(tx, "link", { urlKey: "example.org/a", domain: "example.org", extractImages: false }));
    expect(await crawl()).toMatchObject({ url_key: "example.org/a", domain: "example.org", extract_images: 0, status: "pending", error: null });
    expect(await crawlRequeued(db, "link", false)).toBe(false);
    await crawlStarted(db, files, "link");
    expect(await crawlRequeued(db, "link", false)).toBe(false);
    expect(await updatedAt(db, "link")).toBe(iso(STARTED));
    clock.advance(1_000);
    await crawlEnded(db, files, "link", "failed", "the page could not be read: 503");
    expect(await crawl()).toMatchObject({ status: "failed", error: "the page could not be read: 503" });
    expect(await updatedAt(db, "link")).toBe(iso(STARTED + 1_000));
    expect(await crawlRequeued(db, "link", false)).toBe(true);
    expect(await crawl()).toMatchObject({ status: "pending", error: null });
    // Its job ended without finishing the crawl (cancelled): nothing else will move it on.
    expect(await crawlRequeued(db, "link", true)).toBe(true);
    await crawlStarted(db, files, "link");
    await pageMetadataStored(db, files, "link", '{"title":"A"}');
    await faviconStored(db, files, "link", "icons/link", "image/png");
    await snapshotStored(db, files, "link", "snapshots/link");
    clock.advance(1_000);
    await crawled(db, files, "link", iso(STARTED + 2_000));
    expect(await crawl()).toEqual({
      url_key: "example.org/a", domain: "example.org", extract_images: 0, status: "completed", error: null, crawled_at: iso(STARTED + 2_000),
      og_metadata: '{"title":"A"}', favicon_blob_key: "icons/link", favicon_content_type: "image/png", snapshot_blob_key: "snapshots/link",
    });
    expect(await updatedAt(db, "link")).toBe(iso(STARTED + 2_000));
  });

  test("tag suggestions: a new reading replaces them, a dismissal of a phrase found again is kept; descriptions are replaced by model", async () => {
    const { db, clock } = setup();
    await file(db, "sugg", "document");
    const open = async () => (await db.all<{ phrase: string }>("SELECT phrase FROM tag_suggestions WHERE file_id = ? AND dismissed = 0 ORDER BY rank", ["sugg"])).map((r) => r.phrase);
    await replaceSuggestions(db, "sugg", ["invoice", "late payment", "invoice"]);
    expect(await open()).toEqual(["invoice", "late payment"]);
    expect(await dismissSuggestion(db, "sugg", "Late Payment")).toBe(true);
    expect(await dismissSuggestion(db, "sugg", "late payment")).toBe(false);
    await replaceSuggestions(db, "sugg", ["late payment", "due date"]);
    expect(await open()).toEqual(["due date"]);
    expect(await db.all("SELECT phrase, rank, dismissed FROM tag_suggestions WHERE file_id = ? ORDER BY rank", ["sugg"])).toEqual([
      { phrase: "late payment", rank: 0, dismissed: 1 },
      { phrase: "due date", rank: 1, dismissed: 0 },
    ]);

    const described = async () => db.all("SELECT model, kind, text FROM file_descriptions WHERE file_id = ? ORDER BY model, kind", ["sugg"]);
    await replaceDescriptions(db, clock, "sugg", [{ model: "captioner", kind: "caption", text: "a page" }, { model: "summary", kind: "summary", text: "an invoice" }]);
    await replaceDescriptionsOf(db, clock, "sugg", [{ model: "summary", kind: "summary", text: "an overdue invoice" }]);
    expect(await described()).toEqual([
      { model: "captioner", kind: "caption", text: "a page" },
      { model: "summary", kind: "summary", text: "an overdue invoice" },
    ]);
    await replaceDescriptions(db, clock, "sugg", [{ model: "summary", kind: "summary", text: "gone" }]);
    expect(await described()).toEqual([{ model: "summary", kind: "summary", text: "gone" }]);
  });

  test("writes in a port transaction that rolls back leave nothing, the file's updated_at included; committed ones stay", async () => {
    const { db, clock, files } = setup();
    await file(db, "rb-img", "image");
    await file(db, "rb-doc", "document");
    await file(db, "rb-link", "link");
    await file(db, "rb-vid", "video");
    await expect(
      db.transaction(async (tx) => {
        await variantsPending(tx, "rb-img");
        await variantsStarted(tx, files, "rb-img");
        await saveExtraction(tx, clock, "rb-img", "text_regions", "ocr", { regions: [] });
        await complianceRequested(tx, "rb-img", { type: "mls", standard: "default", imageType: "main" });
        await textPending(tx, "rb-doc");
        await chunksStored(tx, files, "rb-doc", 3);
        await replaceSuggestions(tx, "rb-doc", ["one"]);
        await replaceDescriptions(tx, clock, "rb-doc", [{ model: "m", kind: "summary", text: "t" }]);
        await crawlCreated(tx, "rb-link", { urlKey: "example.org/rb", domain: "example.org", extractImages: true });
        await crawlStarted(tx, files, "rb-link");
        await analysisPending(tx, "rb-vid");
        await analysisEnded(tx, files, "rb-vid", "completed", null);
        throw new Error("the stage failed after its writes");
      }),
    ).rejects.toThrow("the stage failed after its writes");
    for (const table of ["image_facts", "file_extractions", "image_compliance", "document_facts", "tag_suggestions", "file_descriptions", "link_crawls", "video_facts"]) {
      expect(await db.all(`SELECT file_id FROM ${table} WHERE file_id IN ('rb-img', 'rb-doc', 'rb-link', 'rb-vid')`)).toEqual([]);
    }
    for (const id of ["rb-img", "rb-doc", "rb-link", "rb-vid"]) expect(await updatedAt(db, id)).toBe("x");

    await db.transaction(async (tx) => {
      await variantsStarted(tx, files, "rb-img");
      await crawlCreated(tx, "rb-link", { urlKey: "example.org/rb", domain: "example.org", extractImages: true });
      await crawlStarted(tx, files, "rb-link");
    });
    expect((await db.one<{ variant_status: string }>("SELECT variant_status FROM image_facts WHERE file_id = ?", ["rb-img"]))!.variant_status).toBe("processing");
    expect((await db.one<{ status: string }>("SELECT status FROM link_crawls WHERE file_id = ?", ["rb-link"]))!.status).toBe("crawling");
    expect(await updatedAt(db, "rb-img")).toBe(iso(STARTED));
  });

  const doc = (pages: string[]): DocumentContent => ({
    document_type: "markdown" as DocumentContent["document_type"],
    page_count: pages.length,
    pages: pages.map((text, i) => ({ page_number: i + 1, status: "completed", error_message: null, ocr: false, text, elements: [] })),
    text: pages.join("\n\n"),
    metadata: { title: null, author: null },
  });
  const chunks = (texts: string[]): Chunk[] =>
    texts.map((content, i) => ({ chunk_index: i, content, page_numbers: [i + 1], heading_hierarchy: ["Notes"], token_count: 3, chunk_type: "text" }));

  test("a document is stored: pages, text, summary, facts, suggestions and chunks; stored again, it replaces them", async () => {
    const { db, clock, files } = setup();
    await file(db, "store-doc", "document");
    const row = (await files.byId("store-doc"))!;
    await storeDocument({ sql: db, clock, files }, row, doc(["alpha beta", "gamma delta"]), chunks(["alpha beta", "gamma delta"]), { text: "About alpha.", keyphrases: ["alpha"] });
    expect(await db.all("SELECT page_number, status, ocr, text FROM document_pages WHERE file_id = ? ORDER BY page_number", ["store-doc"])).toEqual([
      { page_number: 1, status: "completed", ocr: 0, text: "alpha beta" },
      { page_number: 2, status: "completed", ocr: 0, text: "gamma delta" },
    ]);
    expect(await db.all("SELECT id, chunk_index, content, page_numbers, heading_hierarchy, embedding_status FROM document_chunks WHERE file_id = ? ORDER BY chunk_index", ["store-doc"])).toEqual([
      { id: "store-doc:0", chunk_index: 0, content: "alpha beta", page_numbers: "[1]", heading_hierarchy: '["Notes"]', embedding_status: "pending" },
      { id: "store-doc:1", chunk_index: 1, content: "gamma delta", page_numbers: "[2]", heading_hierarchy: '["Notes"]', embedding_status: "pending" },
    ]);
    expect(await db.one("SELECT text_extraction_status, page_count, chunk_count, embedding_status FROM document_facts WHERE file_id = ?", ["store-doc"])).toEqual({
      text_extraction_status: "completed", page_count: 2, chunk_count: 2, embedding_status: "pending",
    });
    expect(await files.extractedText("store-doc")).toBe("alpha beta\n\ngamma delta");
    expect(await db.all("SELECT model, text FROM file_descriptions WHERE file_id = ?", ["store-doc"])).toEqual([{ model: "mediabox extractive summary (no language model)", text: "About alpha." }]);
    expect(await db.all("SELECT phrase FROM tag_suggestions WHERE file_id = ?", ["store-doc"])).toEqual([{ phrase: "alpha" }]);
    expect(await updatedAt(db, "store-doc")).toBe(iso(STARTED));

    await storeDocument({ sql: db, clock, files }, row, doc(["epsilon"]), chunks(["epsilon"]));
    expect(await db.all("SELECT page_number, text FROM document_pages WHERE file_id = ?", ["store-doc"])).toEqual([{ page_number: 1, text: "epsilon" }]);
    expect(await db.all("SELECT id, content FROM document_chunks WHERE file_id = ?", ["store-doc"])).toEqual([{ id: "store-doc:0", content: "epsilon" }]);
    expect(await db.one("SELECT page_count, chunk_count FROM document_facts WHERE file_id = ?", ["store-doc"])).toEqual({ page_count: 1, chunk_count: 1 });
  });

  test("a document's chunk vectors commit with their marks and the document's state, or not at all", async () => {
    if (client().dialect.name === "postgres" && !pgvector) return;
    const { db, clock, files } = setup();
    const spaces = client().dialect.name === "sqlite" ? new SqliteVectorSpaces(sqlite(), clock) : new PgVectorIndex(db, clock);
    const space = await spaces.open("text", "kind-writes-model", 4);
    await file(db, "vec-doc", "document");
    const row = (await files.byId("vec-doc"))!;
    await storeDocument({ sql: db, clock, files }, row, doc(["one", "two"]), chunks(["one", "two"]));
    const ctx = { sql: db, files, embedder: { modelId: "kind-writes-model" } } as unknown as Parameters<typeof storeVectors>[0];
    const ids = ["vec-doc:0", "vec-doc:1"];
    const vectors = [Float32Array.from([1, 0, 0, 0]), Float32Array.from([0, 1, 0, 0])];
    const marks = async () => db.all("SELECT id, embedding_status, embedding_model FROM document_chunks WHERE file_id = ? ORDER BY chunk_index", ["vec-doc"]);

    // The document's state fails to be written after the vectors and the marks: none of them stays.
    const failing = Object.assign(Object.create(files) as FileRepository, {
      withTx: (tx: SqlClient) => Object.assign(files.withTx(tx), { touched: async () => { throw new Error("the row could not be written"); } }),
    });
    await expect(storeVectors({ ...ctx, files: failing }, row, space, ids, vectors, true)).rejects.toThrow("the row could not be written");
    expect((await space.vectorsOf(ids)).size).toBe(0);
    expect(await marks()).toEqual(ids.map((id) => ({ id, embedding_status: "pending", embedding_model: null })));
    expect((await db.one<{ embedding_status: string }>("SELECT embedding_status FROM document_facts WHERE file_id = ?", ["vec-doc"]))!.embedding_status).toBe("pending");

    await storeVectors(ctx, row, space, ids, vectors, true);
    expect([...(await space.vectorsOf(ids)).keys()].sort()).toEqual(ids);
    expect(await marks()).toEqual(ids.map((id) => ({ id, embedding_status: "completed", embedding_model: "kind-writes-model" })));
    expect((await db.one<{ embedding_status: string }>("SELECT embedding_status FROM document_facts WHERE file_id = ?", ["vec-doc"]))!.embedding_status).toBe("completed");
  });
});
