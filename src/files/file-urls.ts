/**
 * Signed URLs of what a file stores (its original, its variants, its other blobs), for the views
 * every kind's routes and the library answer with.
 */
import type { SqlClient } from "../db/sql-client.ts";
import type { BlobStore } from "../storage/blob-store.ts";
import { isInlineSafe } from "../storage/serving-policy.ts";
import type { FileRepository } from "./file-repository.ts";
import type { FileRow } from "./file.ts";
import type { VariantType } from "./variants.ts";

/** Image links are valid for an hour (the spec's variant redirect lifetime). */
export const VIEW_URL_SECONDS = 3600;

/** What signing a file's URLs reads (every kind's routes sign them). */
export interface FileUrlDeps {
  /** The kinds' views read their tables through it (either database). */
  sql: SqlClient;
  blobs: BlobStore;
  files: FileRepository;
}

/** Signs blob URLs for one request (local-store URLs point at the origin the client used). */
export class FileUrls {
  constructor(
    private readonly ctx: FileUrlDeps,
    private readonly origin: string,
  ) {}

  /** What the kinds' views read their own tables through. */
  get sql(): SqlClient {
    return this.ctx.sql;
  }

  /** A document's whole text for its detail view (kept apart from the row, see FileRepository.extractedText). */
  extractedText(fileId: string): Promise<string | null> {
    return this.ctx.files.extractedText(fileId);
  }

  /** Signed URLs of an image's stored variants, by variant type. */
  async variants(row: FileRow, expiresInSeconds = VIEW_URL_SECONDS): Promise<Partial<Record<VariantType, string>>> {
    return (await this.variantsOfFiles([row], expiresInSeconds)).get(row.id)!;
  }

  /** The variants' signed URLs of several files (a listing page's) from one read, by file id; every file is in the map. */
  async variantsOfFiles(rows: readonly Pick<FileRow, "id">[], expiresInSeconds = VIEW_URL_SECONDS): Promise<Map<string, Partial<Record<VariantType, string>>>> {
    const byFile = new Map<string, Partial<Record<VariantType, string>>>(rows.map((row) => [row.id, {}]));
    if (rows.length === 0) return byFile;
    const sql = this.ctx.sql;
    const stored =
      rows.length === 1
        ? await sql.all<{ file_id: string; variant_type: VariantType; blob_key: string; content_type: string }>(
            "SELECT file_id, variant_type, blob_key, content_type FROM image_variants WHERE file_id = ?",
            [rows[0]!.id],
          )
        : await sql.all<{ file_id: string; variant_type: VariantType; blob_key: string; content_type: string }>(
            `SELECT file_id, variant_type, blob_key, content_type FROM image_variants WHERE file_id IN (${sql.dialect.jsonValues})`,
            [JSON.stringify([...byFile.keys()])],
          );
    for (const v of stored) {
      byFile.get(v.file_id)![v.variant_type] = await this.ctx.blobs.presignGet(v.blob_key, { expiresInSeconds, contentType: v.content_type }, this.origin);
    }
    return byFile;
  }

  /** Any other stored object the file owns (a video's keyframes), shown inline. */
  blob(key: string, contentType: string, expiresInSeconds = VIEW_URL_SECONDS): Promise<string> {
    return this.ctx.blobs.presignGet(key, { expiresInSeconds, contentType }, this.origin);
  }

  /**
   * The stored original. A type that may not be shown inline (an SVG: it is a document) is
   * always an attachment (serving-policy.ts), so it carries its file name even as a view URL.
   */
  async original(row: FileRow, expiresInSeconds = VIEW_URL_SECONDS, download = false): Promise<string | null> {
    if (!row.blob_key) return null;
    const named = download || !isInlineSafe(row.content_type);
    return this.ctx.blobs.presignGet(
      row.blob_key,
      { expiresInSeconds, contentType: row.content_type, ...(named ? { downloadName: row.filename } : {}) },
      this.origin,
    );
  }
}
