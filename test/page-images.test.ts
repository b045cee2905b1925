/**
 * Pictures of PDF pages (GET /files/{id}/digitization/pages/{n}/image, extension) through real
 * HTTP: a page comes back as a WebP of the asked width (or 1024 px on its long side) holding the
 * page's dark text on white, drawn once and then served from its blob; page numbers, widths, media
 * types and organizations are refused with clear codes; the purge removes the cached pictures.
 * A page past the document reader's limits (its CPU time, its memory) answers 422 with the reason
 * and the server stays up.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { PDFDocument, StandardFonts } from "pdf-lib";
import sharp from "sharp";
import { ManualClock } from "../src/clock.ts";
import { DocumentReader } from "../src/documents/document-reader.ts";
import { DocumentReadError } from "../src/documents/types.ts";
import { purgeDeletedFiles } from "../src/library/file-edits.ts";
import { A4, reportDocx, reportPdf, sampleTxt } from "./support/documents.ts";
import { solid } from "./support/images.ts";
import { processed } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { uploadFile } from "./support/uploads.ts";

const DAY = 86_400_000;
const TIMEOUT = 120_000;
const clock = new ManualClock(Date.now());
let server: TestServer;
let owner: Tenant;
let pdfId: string;

const upload = (tenant: Tenant, bytes: Uint8Array | string, filename: string) => uploadFile(tenant.api, bytes, filename);

/** The page's picture: follows the redirect to the signed URL. */
async function picture(tenant: Tenant, path: string) {
  const res = await tenant.api.get(path);
  expect(res.status, JSON.stringify(res.body)).toBe(302);
  const location = res.headers.get("location")!;
  const blob = await fetch(new URL(location, server.url));
  expect(blob.status).toBe(200);
  return { res, location, contentType: blob.headers.get("content-type"), bytes: Buffer.from(await blob.arrayBuffer()) };
}

/** mediabox_page_images_total by outcome, from GET /metrics. */
async function drawings(): Promise<Record<"rendered" | "cached" | "failed", number>> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const counts = { rendered: 0, cached: 0, failed: 0 };
  for (const match of text.matchAll(/^mediabox_page_images_total\{outcome="(\w+)"\} (\d+)/gm)) counts[match[1] as keyof typeof counts] = Number(match[2]);
  return counts;
}

const storedPictures = (fileId: string) =>
  server.ctx.sql.all<{ blob_key: string; page_number: number; width: number }>("SELECT blob_key, page_number, width FROM document_page_images WHERE file_id = ?", [fileId]);

beforeAll(async () => {
  server = await startTestServer({ clock });
  owner = await server.tenant();
  pdfId = await upload(owner, await reportPdf(), "report.pdf");
  await processed(owner, pdfId);
}, TIMEOUT);
afterAll(() => server.close());

test("a PDF page comes back as a WebP of the asked width with its dark text on white, drawn once then served from its blob", async () => {
  const before = await drawings();
  const first = await picture(owner, `/files/${pdfId}/digitization/pages/2/image?width=600`);
  expect(first.contentType).toBe("image/webp");
  expect(first.res.headers.get("cache-control")).toMatch(/^private, max-age=\d+$/);
  const meta = await sharp(first.bytes).metadata();
  expect(meta.format).toBe("webp");
  expect(meta.width).toBe(600);
  expect(meta.height).toBe(Math.round((600 * A4.height) / A4.width));
  const stats = await sharp(first.bytes).greyscale().stats();
  // Mostly white paper, with black text ("2. Findings" and its paragraph) on it.
  expect(stats.channels[0]!.mean).toBeGreaterThan(200);
  expect(stats.channels[0]!.min).toBeLessThan(60);
  // The text sits where the digitization says: the heading's box holds dark pixels.
  const page = (await owner.api.get(`/files/${pdfId}/digitization/pages/2`)).body;
  const heading = page.elements.find((e: { type: string }) => e.type === "heading").bounding_box;
  const region = {
    left: Math.floor(heading.x * 600),
    top: Math.floor(heading.y * meta.height!),
    width: Math.max(1, Math.ceil(heading.w * 600)),
    height: Math.max(1, Math.ceil(heading.h * meta.height!)),
  };
  const inBox = await sharp(await sharp(first.bytes).extract(region).png().toBuffer()).greyscale().stats();
  expect(inBox.channels[0]!.min).toBeLessThan(60);
  expect(inBox.channels[0]!.mean).toBeLessThan(stats.channels[0]!.mean);

  const stored = await storedPictures(pdfId);
  expect(stored).toEqual([{ blob_key: expect.stringContaining(`/files/${pdfId}/pages/2-w600.webp`), page_number: 2, width: 600 }]);
  expect(await server.ctx.blobs.size(stored[0]!.blob_key)).toBe(first.bytes.length);
  const afterFirst = await drawings();
  expect(afterFirst.rendered).toBe(before.rendered + 1);

  const second = await picture(owner, `/files/${pdfId}/digitization/pages/2/image?width=600`);
  expect(second.bytes.equals(first.bytes)).toBe(true);
  const afterSecond = await drawings();
  expect(afterSecond.rendered).toBe(afterFirst.rendered);
  expect(afterSecond.cached).toBe(afterFirst.cached + 1);

  // redirect=false: the signed URL and the picture's size as JSON, for clients that cannot follow the redirect with their key.
  const asJson = await owner.api.get(`/files/${pdfId}/digitization/pages/2/image?width=600&redirect=false`);
  expect(asJson.status).toBe(200);
  expect(asJson.body).toEqual({ url: expect.any(String), width: 600, height: meta.height, content_type: "image/webp", expires_in_seconds: 3600 });
  const viaJson = await fetch(new URL(asJson.body.url, server.url));
  expect(Buffer.from(await viaJson.arrayBuffer()).equals(first.bytes)).toBe(true);
  expect((await drawings()).rendered).toBe(afterFirst.rendered);
  expect((await owner.api.get(`/files/${pdfId}/digitization/pages/2/image?redirect=maybe`)).status).toBe(400);

  // Without a width the long side is 1024 px; a view-only key may ask.
  const standard = await picture({ ...owner, api: await owner.keyWith(["view"]) }, `/files/${pdfId}/digitization/pages/1/image`);
  const standardMeta = await sharp(standard.bytes).metadata();
  expect(standardMeta.height).toBe(1024);
  expect(standardMeta.width).toBe(Math.round((1024 * A4.width) / A4.height));
}, TIMEOUT);

test("requests racing for one undrawn page share one drawing", async () => {
  const before = await drawings();
  const pictures = await Promise.all([1, 2, 3, 4].map(() => picture(owner, `/files/${pdfId}/digitization/pages/1/image?width=300`)));
  for (const p of pictures) expect(p.bytes.equals(pictures[0]!.bytes)).toBe(true);
  const after = await drawings();
  expect(after.rendered).toBe(before.rendered + 1);
  expect((await storedPictures(pdfId)).filter((row) => row.page_number === 1 && row.width === 300)).toHaveLength(1);
}, TIMEOUT);

test("page numbers, widths, media types and organizations are refused with clear codes", async () => {
  const at = (path: string) => owner.api.get(`/files/${pdfId}/digitization/pages/${path}`);
  const past = await at("3/image");
  expect([past.status, past.body.code, past.body.detail]).toEqual([404, "PAGE_NOT_FOUND", `document ${pdfId} has 2 pages; there is no page 3`]);
  // Pages count from 1, as on the page's digitization route: 0 and below are malformed (400).
  for (const path of ["0/image", "-1/image", "two/image", "1.5/image"]) {
    const res = await at(path);
    expect(res.status, path).toBe(400);
    expect(res.body.detail).toContain("page_number");
  }
  for (const width of ["10", "5000", "wide", "300.5"]) {
    const res = await at(`1/image?width=${width}`);
    expect(res.status, width).toBe(400);
    expect(res.body.code).toBe("VALIDATION_ERROR");
    expect(res.body.detail).toContain("width: must be an integer from 64 to 2048");
  }

  const docx = await upload(owner, await reportDocx(), "report.docx");
  const txt = await upload(owner, sampleTxt(), "notes.txt");
  for (const [id, kind] of [[docx, "DOCX"], [txt, "TXT"]] as const) {
    await processed(owner, id);
    const res = await owner.api.get(`/files/${id}/digitization/pages/1/image`);
    expect(res.status, kind).toBe(404);
    expect(res.body.code).toBe("NO_PAGE_IMAGES");
    expect(res.body.detail).toBe(`file ${id} is a ${kind} document: its pages are logical (cut from its text), so there are no page images; only PDF pages are drawn`);
  }

  const image = await upload(owner, await solid(64, 64, [200, 30, 30]), "red.png");
  const wrongType = await owner.api.get(`/files/${image}/digitization/pages/1/image`);
  expect(wrongType.status).toBe(400);
  expect(wrongType.body.code).toBe("WRONG_MEDIA_TYPE");

  const other = await server.tenant();
  const foreign = await other.api.get(`/files/${pdfId}/digitization/pages/1/image`);
  expect(foreign.status).toBe(404);
  expect(foreign.body.code).toBe("FILE_NOT_FOUND");
  expect((await server.anonymous().get(`/files/${pdfId}/digitization/pages/1/image`)).status).toBe(401);
}, TIMEOUT);

/** One page of 600 overprinted lines of 2-point text: small to store and quick to read, seconds of CPU to draw at 2048 px. */
async function denselyPrintedPdf(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage([A4.width, A4.height]);
  const line = "The quick brown fox jumps over the lazy dog while the pump gasket is replaced again. ".repeat(3);
  for (let i = 0; i < 600; i++) page.drawText(line, { x: 5 + (i % 7), y: 5 + ((i * 0.2) % 830), size: 2, font });
  return pdf.save();
}

test("a page past the reader's limits answers 422 with the reason; the server stays up and draws the next page", async () => {
  const dense = await denselyPrintedPdf();
  // The reader's own contract: a render past its CPU-time limit kills the child and says so (the
  // dense page takes seconds of CPU at 2048 px; a plain page under half a second).
  const strict = new DocumentReader({ memoryBudgetBytes: 1024 * 1024 * 1024, timeLimitMs: 1_000, pollMs: 20, ocr: { recognize: async () => ({ text: "", regions: [] }) } });
  try {
    const stopped = await strict.render(dense, 1, 2048).catch((e: Error) => e);
    expect(stopped).toBeInstanceOf(DocumentReadError);
    expect((stopped as Error).message).toBe("drawing the page took longer than 1 s, so it was stopped");
  } finally {
    await strict.close();
  }
  // A page the file lacks is the file's answer too (the route checks page_count before asking).
  const missing = await server.ctx.documentReader.render(dense, 9, 64).catch((e: Error) => e);
  expect(missing).toBeInstanceOf(DocumentReadError);
  expect((missing as Error).message).toBe("the PDF has 1 page; there is no page 9");

  // Through HTTP: the server's reader swapped for one whose memory budget its child is already
  // past (the watchdog stops it before it draws anything), for a page and width never drawn.
  const serving = server.ctx.documentReader;
  const starved = new DocumentReader({ memoryBudgetBytes: 16 * 1024 * 1024, pollMs: 20, ocr: { recognize: async () => ({ text: "", regions: [] }) } });
  server.ctx.documentReader = starved;
  const failedBefore = (await drawings()).failed;
  try {
    const res = await owner.api.get(`/files/${pdfId}/digitization/pages/1/image?width=700`);
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.code).toBe("PAGE_RENDER_FAILED");
    expect(res.body.detail).toBe(
      `page 1 of document ${pdfId}: drawing the page needed more than 16 MB of memory (the limit set by MEDIABOX_DOCUMENT_MEMORY_MB), so it was stopped`,
    );
    expect((await storedPictures(pdfId)).filter((r) => r.width === 700)).toEqual([]);
    expect((await drawings()).failed).toBe(failedBefore + 1);
  } finally {
    server.ctx.documentReader = serving;
    await starved.close();
  }
  expect((await owner.api.get("/healthz")).status).toBe(200);
  const next = await picture(owner, `/files/${pdfId}/digitization/pages/1/image?width=700`);
  expect((await sharp(next.bytes).metadata()).width).toBe(700);
}, TIMEOUT);

test("the purge removes a file's page pictures with it", async () => {
  const id = await upload(owner, await reportPdf(), "purged.pdf");
  await processed(owner, id);
  await picture(owner, `/files/${id}/digitization/pages/1/image?width=300`);
  await picture(owner, `/files/${id}/digitization/pages/2/image`);
  const keys = (await storedPictures(id)).map((r) => r.blob_key);
  expect(keys).toHaveLength(2);
  for (const key of keys) expect(await server.ctx.blobs.size(key)).toBeGreaterThan(0);

  expect((await owner.api.request("DELETE", `/files/${id}`)).status).toBeLessThan(300);
  clock.advance(31 * DAY);
  expect(await purgeDeletedFiles(server.ctx)).toBeGreaterThanOrEqual(1);
  for (const key of keys) expect(await server.ctx.blobs.size(key)).toBeNull();
  expect(await storedPictures(id)).toEqual([]);
  expect((await owner.api.get(`/files/${id}/digitization/pages/1/image`)).status).toBe(404);
}, TIMEOUT);
