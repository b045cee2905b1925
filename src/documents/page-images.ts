/**
 * Pictures of PDF pages (the dashboard draws a document's elements over them): the
 * `document_page_images` table and its WebP blobs, one per page and width. A page is drawn by the
 * document reader's child process (render-page.ts, under its memory and CPU limits) the first
 * time it is asked for, then served from its blob; the purge removes them with the file.
 * Written here alone.
 */
import { isoAt } from "../clock.ts";
import type { DocumentDeps } from "./deps.ts";
import { ApiError, errorMessage } from "../errors.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { pageImageBlobKey } from "../files/blob-keys.ts";
import type { FileRow } from "../files/file.ts";
import { readObject } from "../storage/blob-store.ts";
import { DocumentReadError } from "./types.ts";
import { documentFactsOf } from "./document-facts.ts";

export const PAGE_IMAGE_CONTENT_TYPE = "image/webp";
/** Widths a client may ask for, in pixels. */
export const PAGE_IMAGE_WIDTHS = { min: 64, max: 2048 } as const;

export interface PageImage {
  blobKey: string;
  width: number;
  height: number;
}

interface PageImageRow {
  blob_key: string;
  image_width: number;
  image_height: number;
}

/**
 * Refuses what has no picture: a non-PDF document (its pages are logical), a PDF whose pages are
 * not known yet, a page past its last.
 */
async function checkPage(sql: SqlClient, file: FileRow, page: number): Promise<void> {
  if (file.media_type === "link") {
    throw new ApiError("NO_PAGE_IMAGES", `file ${file.id} is a link: its saved article is one logical page, so there are no page images; only PDF pages are drawn`);
  }
  if (file.document_type !== "pdf") {
    const kind = file.document_type ? file.document_type.toUpperCase() : file.media_type;
    throw new ApiError("NO_PAGE_IMAGES", `file ${file.id} is a ${kind} document: its pages are logical (cut from its text), so there are no page images; only PDF pages are drawn`);
  }
  const facts = await documentFactsOf(sql, file.id);
  if (!facts.pageCount || !file.blob_key) {
    throw new ApiError("NO_PAGE_IMAGES", `the pages of PDF ${file.id} are not known yet (text_extraction_status: ${facts.textExtractionStatus ?? "pending"}); page images follow its reading`);
  }
  if (page > facts.pageCount) throw new ApiError("PAGE_NOT_FOUND", `document ${file.id} has ${facts.pageCount} page${facts.pageCount === 1 ? "" : "s"}; there is no page ${page}`);
}

/**
 * The picture of page `page` of a PDF, `width` pixels wide (null: the default size), from its
 * cache or drawn now. Throws PAGE_RENDER_FAILED with the reader's reason when the page cannot be
 * drawn within the reader's limits.
 */
export async function pageImage(ctx: DocumentDeps, file: FileRow, page: number, width: number | null): Promise<PageImage> {
  await checkPage(ctx.sql, file, page);
  const size = width ?? 0;
  const cached = await ctx.sql.one<PageImageRow>("SELECT blob_key, image_width, image_height FROM document_page_images WHERE file_id = ? AND page_number = ? AND width = ?", [
    file.id, page, size,
  ]);
  if (cached) {
    ctx.metrics.pageImages.inc({ outcome: "cached" });
    return { blobKey: cached.blob_key, width: cached.image_width, height: cached.image_height };
  }
  // Requests racing for one undrawn page share its drawing: the reader is one child process
  // taking pages in turn, and a dashboard opening a document asks for several pages at once.
  const key = `${file.id}/${page}/${size}`;
  let drawing = pagesBeingDrawn.get(key);
  if (!drawing) {
    drawing = drawPage(ctx, file, page, width).finally(() => pagesBeingDrawn.delete(key));
    pagesBeingDrawn.set(key, drawing);
  }
  return drawing;
}

/** Pages being drawn, by file id, page and width (file ids are unique across every server in the process). */
const pagesBeingDrawn = new Map<string, Promise<PageImage>>();

async function drawPage(ctx: DocumentDeps, file: FileRow, page: number, width: number | null): Promise<PageImage> {
  const bytes = await readObject(ctx.blobs, file.blob_key!);
  if (!bytes) throw new ApiError("NO_PAGE_IMAGES", `the bytes of PDF ${file.id} are not in the store, so its pages cannot be drawn`);
  let rendered;
  try {
    rendered = await ctx.documentReader.render(bytes, page, width);
  } catch (err) {
    ctx.metrics.pageImages.inc({ outcome: "failed" });
    // A DocumentReadError is the page's doing (a limit, a broken file); anything else (the reader shut down) is the server's.
    if (err instanceof DocumentReadError) throw new ApiError("PAGE_RENDER_FAILED", `page ${page} of document ${file.id}: ${err.message}`);
    throw err;
  }
  ctx.metrics.pageImages.inc({ outcome: "rendered" });
  const blobKey = pageImageBlobKey(file.org_id, file.id, page, width ?? 0);
  await ctx.blobs.put(blobKey, rendered.webp, PAGE_IMAGE_CONTENT_TYPE);
  // The file may have been purged while its page was drawn: the row (and so the blob's purge) needs the file row.
  const stored = await ctx.sql.run(
    `INSERT INTO document_page_images (file_id, page_number, width, blob_key, image_width, image_height, size_bytes, created_at)
     SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM files WHERE id = ?)
     ON CONFLICT (file_id, page_number, width) DO NOTHING`,
    [file.id, page, width ?? 0, blobKey, rendered.width, rendered.height, rendered.webp.byteLength, isoAt(ctx.clock.now()), file.id],
  );
  if (stored.changes === 0 && !await ctx.files.exists(file.id)) {
    await ctx.blobs.delete(blobKey).catch((err: unknown) => ctx.log.warn("could not remove the page image of a purged file", { key: blobKey, err: errorMessage(err) }));
    throw new ApiError("FILE_NOT_FOUND", `file ${file.id} was removed while its page was drawn`);
  }
  return { blobKey, width: rendered.width, height: rendered.height };
}

/** Removes every cached page picture of a file: blobs, then rows (at purge). */
export async function removePageImages(ctx: DocumentDeps, fileId: string): Promise<void> {
  const rows = await ctx.sql.all<{ blob_key: string }>("SELECT blob_key FROM document_page_images WHERE file_id = ?", [fileId]);
  for (const row of rows) await ctx.blobs.delete(row.blob_key);
  await ctx.sql.run("DELETE FROM document_page_images WHERE file_id = ?", [fileId]);
}
