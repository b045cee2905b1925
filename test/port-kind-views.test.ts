/**
 * The media kinds' read side on the data-access port (docs/scale-out.md, "Kinds' views") behaves
 * the same on SQLite and on PostgreSQL, over rows inserted directly: the summaries a listing page
 * asks of each kind (images, videos, documents, links), read each of the kind's tables once for
 * the page, whatever its size; the details (extractions, OCR lines, descriptions, camera facts,
 * keyframes, tag suggestions); the facts readers one file at a time and for many; the documents'
 * digitization and processing-status views. The HTTP sides are tested where they were (images,
 * videos, documents, links, exports, library...). The PostgreSQL half skips, saying why, where no
 * server binary is found.
 */
import { describe, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import type { SqlClient, SqlValue } from "../src/db/sql-client.ts";
import { cameraFactsOf, cameraFactsOfFiles } from "../src/camera/camera-facts.ts";
import { complianceOf, complianceOfFiles } from "../src/compliance/image-compliance.ts";
import { documentFactsOf, documentFactsOfFiles } from "../src/documents/document-facts.ts";
import { digitization, digitizationStatusView, documentDetailFields, documentSummaries, processingStatus } from "../src/documents/document-views.ts";
import { getExtraction, listExtractions } from "../src/extractions/extractions.ts";
import { FileRepository, type NewFileRecord } from "../src/files/file-repository.ts";
import type { FileRow } from "../src/files/file.ts";
import { FileUrls } from "../src/files/file-urls.ts";
import { openSuggestions } from "../src/files/tag-suggestions.ts";
import { imageFactsOf, imageFactsOfFiles } from "../src/images/image-facts.ts";
import { findingsOf } from "../src/images/image-findings.ts";
import { analyzeView, cameraDetailFields, imageDetailFields, imageSummaries } from "../src/images/image-views.ts";
import { crawlOf, crawlsOfFiles } from "../src/links/link-crawls.ts";
import { linkSummaries } from "../src/links/link-views.ts";
import { linkImages } from "../src/links/page-images.ts";
import type { BlobStore } from "../src/storage/blob-store.ts";
import { keyframesOf } from "../src/video/keyframe-store.ts";
import { videoAnalysisOf, videoFactsOf, videoFactsOfFiles } from "../src/video/video-facts.ts";
import { videoDetailFields, videoSummaries } from "../src/video/video-views.ts";
import { portEngines } from "./support/port-engines.ts";

const { engines } = portEngines("kind_views");

/** Signs a key as the origin plus the key (the views only pass the URLs on). */
const blobs = { presignGet: async (key: string) => `https://blobs.test/${key}` } as unknown as BlobStore;

/** Counts the statements a view sends through the port. */
function counted(sql: SqlClient): { sql: SqlClient; reads: () => number } {
  let reads = 0;
  const wrapped = Object.create(sql) as SqlClient;
  wrapped.all = <T>(text: string, params?: readonly SqlValue[]) => ((reads += 1), sql.all<T>(text, params));
  wrapped.one = <T>(text: string, params?: readonly SqlValue[]) => ((reads += 1), sql.one<T>(text, params));
  return { sql: wrapped, reads: () => reads };
}

async function tenant(db: SqlClient, orgId: string): Promise<string> {
  const projectId = `${orgId}-default`;
  await db.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, 'STARTER', 'x') ON CONFLICT DO NOTHING", [orgId, orgId, orgId]);
  await db.run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES (?, ?, 'Default', 'default', 1, 'x', 'x') ON CONFLICT DO NOTHING", [projectId, orgId]);
  return projectId;
}

const MEDIA = {
  image: { mediaType: "image", mime: "image/jpeg", format: "jpeg", documentType: null },
  video: { mediaType: "video", mime: "video/mp4", format: "mp4", documentType: null },
  document: { mediaType: "document", mime: "application/pdf", format: "pdf", documentType: "pdf" },
  link: { mediaType: "link", mime: "text/html", format: "html", documentType: null },
} as const;

let serial = 0;
/** Records a file of `type` in the organization and returns its row. */
async function file(files: FileRepository, orgId: string, projectId: string, type: keyof typeof MEDIA, tags: string[] = []): Promise<FileRow> {
  serial += 1;
  const id = `${String(serial).padStart(8, "0")}-0000-4000-8000-${String(serial).padStart(12, "0")}`;
  const record: NewFileRecord = {
    id, orgId, projectId, folderId: null, filename: `${type}-${serial}`, size: 100, sha256: `sha-${id}`, type: MEDIA[type] as NewFileRecord["type"],
    blobKey: `orgs/${orgId}/files/${id}/original`, uploadMethod: "streaming", sessionId: null, uploadedBy: null, processingJobId: `job-${id}`,
    title: null, tags, storageTarget: "default", autoDescribe: false, contentCategory: "general", customSchemaId: null,
    description: null,
  };
  await files.create(record);
  return (await files.byId(id))!;
}

async function variant(db: SqlClient, fileId: string, type: string) {
  await db.run("INSERT INTO image_variants (file_id, variant_type, blob_key, width, height, size_bytes, content_type, created_at) VALUES (?, ?, ?, 10, 10, 10, 'image/webp', 'x')", [
    fileId, type, `v/${fileId}/${type}`,
  ]);
}

describe.each(engines)("the kinds' views on $name", ({ client }) => {
  test("a page of images reads the variants, image facts and compliance checks once, whatever its size; the readers agree one at a time", async () => {
    const db = client();
    const files = new FileRepository(db, new ManualClock(Date.UTC(2031, 0, 1)));
    const projectId = await tenant(db, "org-images");
    const rows: FileRow[] = [];
    for (let i = 0; i < 30; i++) rows.push(await file(files, "org-images", projectId, "image"));
    const [rendered, checked] = [rows[0]!, rows[1]!];
    await variant(db, rendered.id, "small_256");
    await variant(db, rendered.id, "large_1024");
    await db.run("INSERT INTO image_facts (file_id, variant_status, variant_count, blur_hash, embedding_model) VALUES (?, 'completed', 2, 'LKO2', 'clip:b32')", [rendered.id]);
    await db.run("INSERT INTO image_compliance (file_id, type, standard, image_type, status) VALUES (?, 'mls', 'RESO', 'main', 'pass')", [checked.id]);

    const reads = counted(db);
    const urls = new FileUrls({ sql: reads.sql, blobs, files }, "https://box.test");
    const page = await imageSummaries(rows, urls);
    expect(reads.reads()).toBe(3);
    expect(page).toHaveLength(30);
    expect(page[0]).toMatchObject({
      thumbnail_url: `https://blobs.test/v/${rendered.id}/small_256`, medium_url: null, full_url: `https://blobs.test/v/${rendered.id}/large_1024`,
      original_url: `https://blobs.test/${rendered.blob_key}`, variant_status: "completed", variant_count: 2, blur_hash: "LKO2", compliance_status: null, similar_available: true,
    });
    expect(page[1]).toMatchObject({ thumbnail_url: null, variant_status: null, variant_count: 0, blur_hash: null, compliance_status: "pass", similar_available: false });

    expect(await imageFactsOf(db, rendered.id)).toEqual({ variantStatus: "completed", variantCount: 2, blurHash: "LKO2", embeddingModel: "clip:b32" });
    expect(await imageFactsOf(db, checked.id)).toEqual({ variantStatus: null, variantCount: 0, blurHash: null, embeddingModel: null });
    const many = await imageFactsOfFiles(db, [rendered.id, checked.id]);
    expect([...many.keys()]).toEqual([rendered.id, checked.id]);
    expect(many.get(rendered.id)).toEqual(await imageFactsOf(db, rendered.id));
    expect(await complianceOf(db, checked.id)).toEqual({ type: "mls", standard: "RESO", imageType: "main", status: "pass" });
    expect(await complianceOf(db, rendered.id)).toBeNull();
    expect([...(await complianceOfFiles(db, [rendered.id, checked.id])).keys()]).toEqual([checked.id]);
    expect(await imageFactsOfFiles(db, [])).toEqual(new Map());
  });

  test("an image's detail: OCR lines as reviewed, descriptions in order, extractions, camera facts; its findings", async () => {
    const db = client();
    const files = new FileRepository(db, new ManualClock(Date.UTC(2031, 0, 1)));
    const projectId = await tenant(db, "org-detail");
    const photo = await file(files, "org-detail", projectId, "image");
    const plain = await file(files, "org-detail", projectId, "image");
    await db.run("INSERT INTO file_extractions (file_id, domain, data, source, corrections, created_at, updated_at) VALUES (?, 'text_regions', ?, 'ocr', ?, 'a', 'b')", [
      photo.id, JSON.stringify({ regions: [{ text: "EXIT" }, { text: "typo" }] }), JSON.stringify({ item_reviews: { "regions.1": "rejected" }, field_edits: {} }),
    ]);
    await db.run("INSERT INTO file_extractions (file_id, domain, data, source, created_at, updated_at) VALUES (?, 'invoice', '{\"total\":12}', 'schema', 'a', 'a')", [photo.id]);
    await db.run("INSERT INTO file_descriptions (id, file_id, model, kind, text, created_at) VALUES ('d2', ?, 'm', 'short', 'later', '2031-01-02'), ('d1', ?, 'm', 'full', 'first', '2031-01-01')", [photo.id, photo.id]);
    await db.run("INSERT INTO camera_facts (file_id, org_id, make, model, f_number, iso, latitude, longitude, country_code, city) VALUES (?, 'org-detail', 'Canon', 'R5', 2.8, 400, 48.2, 16.37, 'AT', 'Vienna')", [photo.id]);
    await db.run("INSERT INTO image_findings (file_id, objects, faces, people, colours, found_at) VALUES (?, ?, 1, 2, '[\"#fff\"]', 'x')", [photo.id, JSON.stringify([{ label: "person", score: 0.9 }])]);

    const extractions = await listExtractions(db, photo.id);
    expect(extractions.map((e) => e.domain)).toEqual(["invoice", "text_regions"]);
    expect((await getExtraction(db, photo.id, "invoice"))?.data).toEqual({ total: 12 });
    expect(await getExtraction(db, plain.id, "invoice")).toBeNull();
    const detail = await imageDetailFields(db, photo);
    expect(detail.text_regions).toEqual([{ text: "EXIT" }]);
    expect(detail.full_descriptions.map((d) => d.id)).toEqual(["d1", "d2"]);
    expect(await imageDetailFields(db, plain)).toEqual({ text_regions: [], full_descriptions: [], extractions: [] });
    expect((await analyzeView(db, photo, "completed", performance.now())).text_regions as unknown[]).toEqual([{ text: "EXIT" }]);

    const camera = await cameraDetailFields(db, photo.id);
    expect(camera.camera).toMatchObject({ make: "Canon", model: "R5", f_number: 2.8, iso: 400, lens: null });
    expect(camera.location).toMatchObject({ latitude: 48.2, longitude: 16.37, country_code: "AT", city: "Vienna", region: null });
    expect(await cameraDetailFields(db, plain.id)).toEqual({ camera: null, location: null });
    expect((await cameraFactsOfFiles(db, [photo.id, plain.id])).get(photo.id)).toEqual((await cameraFactsOf(db, photo.id))!);
    expect((await cameraFactsOfFiles(db, [plain.id])).size).toBe(0);
    expect(await findingsOf(db, photo.id)).toEqual({ objects: [{ label: "person", score: 0.9 }], faces: 1, people: 2, colours: ["#fff"] });
    expect(await findingsOf(db, plain.id)).toBeNull();
  });

  test("videos: a page reads the poster variants, the probe's facts and the image facts once; the detail lists the keyframes in order", async () => {
    const db = client();
    const files = new FileRepository(db, new ManualClock(Date.UTC(2031, 0, 1)));
    const projectId = await tenant(db, "org-videos");
    const [probed, queued] = [await file(files, "org-videos", projectId, "video"), await file(files, "org-videos", projectId, "video")];
    await db.run("INSERT INTO video_facts (file_id, duration_seconds, frame_rate, codec, container, has_audio, bit_rate, analysis_status, analysis_error) VALUES (?, 12.5, 25, 'h264', 'mp4', 1, 480000, 'skipped', 'too long')", [probed.id]);
    await db.run("INSERT INTO video_facts (file_id, analysis_status) VALUES (?, 'pending')", [queued.id]);
    await db.run("INSERT INTO image_facts (file_id, variant_status, variant_count, blur_hash) VALUES (?, 'completed', 1, 'L00')", [probed.id]);
    await variant(db, probed.id, "medium_750");
    for (const index of [1, 0]) {
      await db.run("INSERT INTO video_keyframes (file_id, frame_index, time_seconds, blob_key, width, height, is_poster, visible_text, objects, faces) VALUES (?, ?, ?, ?, 64, 36, ?, ?, ?, ?)", [
        probed.id, index, index * 2.5, `k/${index}`, index === 0 ? 1 : 0, index === 1 ? "SALE" : null, index === 1 ? '[{"label":"car","score":0.8}]' : null, index === 1 ? 0 : null,
      ]);
    }

    const reads = counted(db);
    const urls = new FileUrls({ sql: reads.sql, blobs, files }, "https://box.test");
    const [first, second] = await videoSummaries([probed, queued], urls);
    expect(reads.reads()).toBe(3);
    expect(first).toMatchObject({
      duration_seconds: 12.5, frame_rate: 25, video_codec: "h264", container: "mp4", has_audio: true, bit_rate: 480000, analysis_status: "skipped", analysis_error: "too long",
      medium_url: `https://blobs.test/v/${probed.id}/medium_750`, thumbnail_url: null, blur_hash: "L00", similar_available: false,
    });
    expect(second).toMatchObject({ duration_seconds: null, has_audio: null, analysis_status: "pending", analysis_error: null, blur_hash: null });
    expect(await videoFactsOf(db, queued.id)).toEqual({ durationSeconds: null, frameRate: null, codec: null, container: null, hasAudio: null, bitRate: null });
    expect(await videoFactsOf(db, "no-such-file")).toBeNull();
    expect(await videoAnalysisOf(db, probed.id)).toEqual({ status: "skipped", error: "too long" });
    expect((await videoFactsOfFiles(db, [probed.id])).get(probed.id)?.facts).toEqual(await videoFactsOf(db, probed.id));

    const frames = await keyframesOf(db, probed.id);
    expect(frames.map((f) => [f.index, f.timeSeconds, f.isPoster])).toEqual([[0, 0, true], [1, 2.5, false]]);
    const detail = await videoDetailFields(probed, urls);
    expect(detail.keyframes[1]).toMatchObject({ index: 1, url: "https://blobs.test/k/1", visible_text: "SALE", objects: [{ label: "car", score: 0.8 }], faces: 0 });
  });

  test("documents: a page reads the facts once; the detail's open suggestions, the digitization and the processing status", async () => {
    const db = client();
    const files = new FileRepository(db, new ManualClock(Date.UTC(2031, 0, 1)));
    const projectId = await tenant(db, "org-docs");
    const [read, waiting] = [await file(files, "org-docs", projectId, "document", ["Invoice"]), await file(files, "org-docs", projectId, "document")];
    await db.run("INSERT INTO document_facts (file_id, text_extraction_status, digitization_status, page_count, language, chunk_count, embedding_status) VALUES (?, 'completed', 'completed', 2, 'en', 3, 'processing')", [read.id]);
    await db.run("INSERT INTO document_pages (file_id, page_number, status, ocr, elements) VALUES (?, 2, 'failed', 0, '[]'), (?, 1, 'completed', 1, ?)", [read.id, read.id, JSON.stringify([{ type: "paragraph" }])]);
    await db.run("INSERT INTO tag_suggestions (file_id, phrase, rank, dismissed) VALUES (?, 'late fees', 1, 0), (?, 'invoice', 0, 0), (?, 'vat', 2, 1)", [read.id, read.id, read.id]);
    await db.run("INSERT INTO file_stage_runs (file_id, stage, status, duration_ms, error, finished_at) VALUES (?, 'chunks', 'completed', 1.26, NULL, '2031-01-01T00:00:02Z'), (?, 'extraction', 'completed', 10, NULL, '2031-01-01T00:00:01Z')", [read.id, read.id]);

    const reads = counted(db);
    const urls = new FileUrls({ sql: reads.sql, blobs, files }, "https://box.test");
    const page = await documentSummaries([read, waiting], urls);
    expect(reads.reads()).toBe(1);
    expect(page[0]).toEqual({ document_type: "pdf", page_count: 2, chunk_count: 3, text_extraction_status: "completed", document_url: `https://blobs.test/${read.blob_key}` });
    expect(page[1]).toMatchObject({ page_count: null, chunk_count: 0, text_extraction_status: null });
    expect(await documentFactsOf(db, read.id)).toMatchObject({ language: "en", embeddingStatus: "processing" });
    expect((await documentFactsOfFiles(db, [read.id, waiting.id])).get(waiting.id)).toEqual(await documentFactsOf(db, waiting.id));

    // "invoice" is already a tag (in another case), "vat" was dismissed.
    expect(await openSuggestions(db, read.id, ["Invoice"])).toEqual(["late fees"]);
    expect((await documentDetailFields(read, urls)).suggested_tags).toEqual(["late fees"]);
    const digitized = await digitization(db, read);
    expect(digitized).toMatchObject({ status: "completed", total_pages: 2, completed_pages: 1, failed_pages: 1 });
    expect(digitized.pages.map((p) => [p.page_number, p.ocr, p.element_count])).toEqual([[1, true, 1], [2, false, 0]]);
    expect(await digitizationStatusView(db, read)).toMatchObject({ total_pages: 2, page_statuses: { "1": "completed", "2": "failed" } });
    const status = await processingStatus(db, read);
    expect(status).toMatchObject({ text_extraction_status: "completed", embedding_status: "processing", variant_status: null, page_count: 2, chunk_count: 3 });
    expect(status.stages.map((s) => [s.stage, s.duration_ms])).toEqual([["extraction", 10], ["chunks", 1.3]]);
  });

  test("links: a page reads the crawls, the links' live images and their variants and facts once", async () => {
    const db = client();
    const files = new FileRepository(db, new ManualClock(Date.UTC(2031, 0, 1)));
    const projectId = await tenant(db, "org-links");
    const [crawled, pending] = [await file(files, "org-links", projectId, "link"), await file(files, "org-links", projectId, "link")];
    const [kept, gone] = [await file(files, "org-links", projectId, "image"), await file(files, "org-links", projectId, "image")];
    await db.run(
      "INSERT INTO link_crawls (file_id, url_key, domain, extract_images, status, crawled_at, og_metadata, favicon_blob_key, favicon_content_type, snapshot_blob_key) VALUES (?, 'k', 'example.org', 1, 'completed', 't', ?, 'fav', 'image/png', 'snap')",
      [crawled.id, JSON.stringify({ site_name: "Example" })],
    );
    await db.run("INSERT INTO link_crawls (file_id, domain, extract_images, status) VALUES (?, 'example.net', 0, 'pending')", [pending.id]);
    await db.run("INSERT INTO link_images (link_file_id, position, image_file_id, source_url) VALUES (?, 1, ?, 'https://example.org/b.png'), (?, 0, ?, 'https://example.org/a.png')", [
      crawled.id, gone.id, crawled.id, kept.id,
    ]);
    await files.softDelete(gone.id);
    await variant(db, kept.id, "small_256");
    await db.run("INSERT INTO image_facts (file_id, variant_status) VALUES (?, 'completed')", [kept.id]);

    const reads = counted(db);
    const urls = new FileUrls({ sql: reads.sql, blobs, files }, "https://box.test");
    const [first, second] = await linkSummaries([crawled, pending], urls);
    expect(reads.reads()).toBe(4);
    expect(first).toMatchObject({
      domain: "example.org", og_metadata: { site_name: "Example" }, favicon_url: "https://blobs.test/fav", crawl_status: "completed", snapshot_available: true,
      extracted_images: [{ id: kept.id, source_url: "https://example.org/a.png", thumbnail_url: `https://blobs.test/v/${kept.id}/small_256`, medium_url: null, variant_status: "completed" }],
      extracted_images_count: 1, thumbnail_url: `https://blobs.test/v/${kept.id}/small_256`,
    });
    expect(second).toMatchObject({ domain: "example.net", favicon_url: null, snapshot_available: false, extracted_images: [], thumbnail_url: null });
    expect(await crawlOf(db, pending.id)).toMatchObject({ domain: "example.net", extractImages: false, status: "pending", urlKey: null });
    expect(await crawlOf(db, kept.id)).toBeNull();
    expect([...(await crawlsOfFiles(db, [crawled.id, kept.id])).keys()]).toEqual([crawled.id]);
    expect((await linkImages(db, crawled.id)).map((i) => i.file.id)).toEqual([kept.id]);
  });
});
