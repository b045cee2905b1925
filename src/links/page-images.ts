/**
 * A page's main images as image files of the library: each downloaded image is stored through
 * the ingest path (so the image pipeline gives it variants, OCR and an embedding, and similar
 * images finds it), placed beside its link and marked as extracted from it. An image the
 * organization already holds (same SHA-256) is not stored twice: the link points at the
 * existing file. `link_images` keeps which images a link showed, in page order; this module is
 * its only writer.
 */
import type { SqlClient } from "../db/sql-client.ts";
import { createHash } from "node:crypto";
import type { IngestDeps } from "../ingest/deps.ts";
import { originalBlobKey } from "../files/blob-keys.ts";
import type { FileRow } from "../files/file.ts";
import { detectType } from "../ingest/detect.ts";
import { insertFileRecord } from "../ingest/ingest.ts";

export interface PageImage {
  url: string;
  bytes: Uint8Array;
}

export interface StoredImages {
  /** Image files now listed for the link, in page order. */
  fileIds: string[];
  created: number;
  reused: number;
  /** Why images were not stored ("https://…/x.png: not a supported image"). */
  refused: string[];
}

/** Stores the images and replaces the link's list with them. */
export async function storePageImages(ctx: IngestDeps, link: FileRow, images: PageImage[]): Promise<StoredImages> {
  const result: StoredImages = { fileIds: [], created: 0, reused: 0, refused: [] };
  const listed: { fileId: string; url: string }[] = [];
  for (const image of images) {
    const sha256 = createHash("sha256").update(image.bytes).digest("hex");
    const existing = await ctx.files.findDuplicate(link.org_id, sha256);
    if (existing) {
      if (!listed.some((l) => l.fileId === existing.id)) listed.push({ fileId: existing.id, url: image.url });
      result.reused += 1;
      continue;
    }
    const filename = imageFilename(image.url, listed.length + 1);
    const detected = await detectType(ctx.kinds.uploaded(), image.bytes, filename);
    if (!detected.ok || detected.type.mediaType !== "image") {
      result.refused.push(`${image.url}: ${detected.ok ? `a ${detected.type.mediaType}, not an image` : detected.reason}`);
      continue;
    }
    const id = crypto.randomUUID();
    const blobKey = originalBlobKey(link.org_id, id);
    await ctx.blobs.put(blobKey, image.bytes, detected.type.mime);
    // Checked again inside the transaction: another crawl may have stored the same image meanwhile.
    const winner = await ctx.sql.transaction(async (tx) => {
      const files = ctx.files.withTx(tx);
      const raced = await files.findDuplicate(link.org_id, sha256);
      if (raced) return raced.id;
      await insertFileRecord(ctx, tx, {
        id, orgId: link.org_id, filename, size: image.bytes.byteLength, sha256, type: detected.type, blobKey,
        uploadMethod: "streaming", sessionId: null, uploadedBy: link.uploaded_by,
        placement: { projectId: link.project_id, folderId: link.folder_id },
        options: {
          title: null, tags: [], autoDescribe: false, skipDuplicates: true, storageTarget: "default", folderId: link.folder_id,
          projectId: link.project_id, contentCategory: "general", customSchemaId: null, compliance: null,
        },
      });
      await files.extractedFrom(id, link.id, image.url);
      return id;
    });
    if (winner !== id) {
      await ctx.blobs.delete(blobKey);
      result.reused += 1;
    } else result.created += 1;
    if (!listed.some((l) => l.fileId === winner)) listed.push({ fileId: winner, url: image.url });
  }
  await ctx.sql.transaction(async (tx) => {
    await tx.run("DELETE FROM link_images WHERE link_file_id = ?", [link.id]);
    for (const [i, entry] of listed.entries()) {
      await tx.run("INSERT INTO link_images (link_file_id, position, image_file_id, source_url) VALUES (?, ?, ?, ?)", [link.id, i, entry.fileId, entry.url]);
    }
  });
  result.fileIds = listed.map((l) => l.fileId);
  return result;
}

export interface LinkImage {
  file: FileRow;
  sourceUrl: string;
}

/** The link's images that are still live, in page order. */
export async function linkImages(sql: SqlClient, linkId: string): Promise<LinkImage[]> {
  return (await linkImagesOfLinks(sql, [linkId])).get(linkId)!;
}

/** The live images of several links in one read (a listing page's), by link id, each in page order; every id is in the map. */
export async function linkImagesOfLinks(sql: SqlClient, linkIds: readonly string[]): Promise<Map<string, LinkImage[]>> {
  const byLink = new Map<string, LinkImage[]>(linkIds.map((id) => [id, []]));
  if (linkIds.length === 0) return byLink;
  const rows = await sql.all<FileRow & { link_file_id: string; link_image_source: string }>(
    `SELECT f.*, li.link_file_id, li.source_url AS link_image_source FROM link_images li JOIN files f ON f.id = li.image_file_id
     WHERE li.link_file_id IN (${sql.dialect.jsonValues}) AND f.deleted_at IS NULL ORDER BY li.link_file_id, li.position`,
    [JSON.stringify([...new Set(linkIds)])],
  );
  for (const { link_file_id, link_image_source, ...file } of rows) byLink.get(link_file_id)?.push({ file: file as FileRow, sourceUrl: link_image_source });
  return byLink;
}

/** A file name from the image's URL ("photo.jpg"), or "image-N" when its path names none. */
function imageFilename(url: string, n: number): string {
  let last = "";
  try {
    last = decodeURIComponent(new URL(url).pathname.split("/").pop() ?? "");
  } catch {
    last = "";
  }
  const clean = last.replace(/[\u0000-\u001f/\\]/g, "").slice(0, 200);
  return clean || `image-${n}`;
}
