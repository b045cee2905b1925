/**
 * A saved link's crawl, in the link kind's own table `link_crawls` (this module is its only
 * writer): the page's address as saved (its normalized key finds a second save of the same
 * page), whether its images are wanted, the crawl's state, what the page said (og_metadata) and
 * the stored icon and snapshot. Every change also moves the file's updated_at, as when these were
 * columns of its row. Writers take a `SqlClient`: the caller's port transaction (`tx`) or the
 * group-commit client.
 */
import { atomically, type SqlClient } from "../db/sql-client.ts";
import { factsRowsOf } from "../files/facts-table.ts";
import { forTenants } from "../errors.ts";
import type { FileRepository } from "../files/file-repository.ts";
import type { CrawlStatus, FileRow } from "../files/file.ts";

export interface LinkCrawl {
  urlKey: string | null;
  domain: string | null;
  extractImages: boolean;
  status: CrawlStatus | null;
  error: string | null;
  crawledAt: string | null;
  /** The page's meta tags and facts as stored (JSON text). */
  ogMetadata: string | null;
  faviconBlobKey: string | null;
  faviconContentType: string | null;
  snapshotBlobKey: string | null;
}

interface CrawlRow {
  url_key: string | null;
  domain: string | null;
  extract_images: number;
  status: CrawlStatus | null;
  error: string | null;
  crawled_at: string | null;
  og_metadata: string | null;
  favicon_blob_key: string | null;
  favicon_content_type: string | null;
  snapshot_blob_key: string | null;
}

function toCrawl(row: CrawlRow): LinkCrawl {
  return {
    urlKey: row.url_key,
    domain: row.domain,
    extractImages: row.extract_images === 1,
    status: row.status,
    error: row.error,
    crawledAt: row.crawled_at,
    ogMetadata: row.og_metadata,
    faviconBlobKey: row.favicon_blob_key,
    faviconContentType: row.favicon_content_type,
    snapshotBlobKey: row.snapshot_blob_key,
  };
}

const CRAWL_COLUMNS = "url_key, domain, extract_images, status, error, crawled_at, og_metadata, favicon_blob_key, favicon_content_type, snapshot_blob_key";

/** Null for a file that is not a link. */
export async function crawlOf(sql: SqlClient, fileId: string): Promise<LinkCrawl | null> {
  const row = await sql.one<CrawlRow>(`SELECT ${CRAWL_COLUMNS} FROM link_crawls WHERE file_id = ?`, [fileId]);
  return row ? toCrawl(row) : null;
}


/** The crawls of several links in one read (a listing page's), by file id; a file that is not a link is absent. */
export async function crawlsOfFiles(sql: SqlClient, fileIds: readonly string[]): Promise<Map<string, LinkCrawl>> {
  const rows = await factsRowsOf<CrawlRow>(sql, "link_crawls", CRAWL_COLUMNS, fileIds);
  return new Map([...rows].map(([id, row]) => [id, toCrawl(row)]));
}

/** A new link's crawl, `pending` (in the transaction that creates its file). */
export async function crawlCreated(tx: SqlClient, fileId: string, link: { urlKey: string; domain: string; extractImages: boolean }): Promise<void> {
  await tx.run("INSERT INTO link_crawls (file_id, url_key, domain, extract_images, status) VALUES (?, ?, ?, ?, 'pending')", [fileId, link.urlKey, link.domain, link.extractImages ? 1 : 0]);
}

/** The organization's oldest live link to the page `urlKey` names, if any. */
export function findLink(sql: SqlClient, orgId: string, urlKey: string): Promise<FileRow | null> {
  return sql.one<FileRow>(
    `SELECT f.* FROM link_crawls c JOIN files f ON f.id = c.file_id
     WHERE c.url_key = ? AND f.org_id = ? AND f.deleted_at IS NULL ORDER BY f.created_at LIMIT 1`,
    [urlKey, orgId],
  );
}

/**
 * A finished crawl goes back to `pending`. Returns false, changing nothing, while a crawl is
 * pending or running (the caller answers 409), unless `orphaned`: its job ended without finishing
 * the crawl (cancelled), so nothing will ever move it on.
 */
export async function crawlRequeued(tx: SqlClient, fileId: string, orphaned: boolean): Promise<boolean> {
  // `? = 1`: PostgreSQL takes no bound integer as a condition.
  const changed = await tx.run("UPDATE link_crawls SET status = 'pending', error = NULL WHERE file_id = ? AND (status NOT IN ('pending', 'crawling') OR ? = 1)", [fileId, orphaned ? 1 : 0]);
  return changed.changes > 0;
}

/** A change with the file's updated_at (`files` tells it), in the caller's transaction or one of its own. */
function update(sql: SqlClient, files: FileRepository, fileId: string, set: string, values: (string | null)[]): Promise<void> {
  return atomically(sql, async (tx) => {
    await tx.run(`UPDATE link_crawls SET ${set} WHERE file_id = ?`, [...values, fileId]);
    await files.withTx(tx).touched(fileId);
  });
}

export function crawlStarted(sql: SqlClient, files: FileRepository, fileId: string): Promise<void> {
  return update(sql, files, fileId, "status = 'crawling', error = NULL", []);
}

/** The crawl did not read the page: for good (`failed`, `blocked` by policy) or `pending` its retry. */
export function crawlEnded(sql: SqlClient, files: FileRepository, fileId: string, status: "failed" | "blocked" | "pending", reason: string): Promise<void> {
  return update(sql, files, fileId, "status = ?, error = ?", [status, forTenants(reason)]);
}

export function pageMetadataStored(sql: SqlClient, files: FileRepository, fileId: string, ogMetadata: string): Promise<void> {
  return update(sql, files, fileId, "og_metadata = ?", [ogMetadata]);
}

export function faviconStored(sql: SqlClient, files: FileRepository, fileId: string, blobKey: string, contentType: string): Promise<void> {
  return update(sql, files, fileId, "favicon_blob_key = ?, favicon_content_type = ?", [blobKey, contentType]);
}

export function snapshotStored(sql: SqlClient, files: FileRepository, fileId: string, blobKey: string): Promise<void> {
  return update(sql, files, fileId, "snapshot_blob_key = ?", [blobKey]);
}

export function crawled(sql: SqlClient, files: FileRepository, fileId: string, at: string): Promise<void> {
  return update(sql, files, fileId, "status = 'completed', error = NULL, crawled_at = ?", [at]);
}
