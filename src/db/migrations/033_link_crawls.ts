// A saved link's crawl (its address, what the page said, the stored icon and snapshot) moves out
// of the files row into the link kind's own table (src/links/link-crawls.ts owns it); the row
// keeps identity, placement, blob and status.
export default `
CREATE TABLE link_crawls (
  file_id TEXT PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
  url_key TEXT,
  domain TEXT,
  extract_images INTEGER NOT NULL DEFAULT 1,
  status TEXT,
  error TEXT,
  crawled_at TEXT,
  og_metadata TEXT,
  favicon_blob_key TEXT,
  favicon_content_type TEXT,
  snapshot_blob_key TEXT
);
CREATE INDEX link_crawls_url ON link_crawls(url_key) WHERE url_key IS NOT NULL;
INSERT INTO link_crawls (file_id, url_key, domain, extract_images, status, error, crawled_at, og_metadata, favicon_blob_key, favicon_content_type, snapshot_blob_key)
  SELECT id, link_url_key, domain, coalesce(extract_images, 1), crawl_status, crawl_error, crawled_at, og_metadata, favicon_blob_key, favicon_content_type, snapshot_blob_key
  FROM files WHERE media_type = 'link';
DROP INDEX files_link_url;
ALTER TABLE files DROP COLUMN link_url_key;
ALTER TABLE files DROP COLUMN domain;
ALTER TABLE files DROP COLUMN og_metadata;
ALTER TABLE files DROP COLUMN favicon_blob_key;
ALTER TABLE files DROP COLUMN snapshot_blob_key;
ALTER TABLE files DROP COLUMN crawl_status;
ALTER TABLE files DROP COLUMN crawl_error;
ALTER TABLE files DROP COLUMN extract_images;
ALTER TABLE files DROP COLUMN crawled_at;
ALTER TABLE files DROP COLUMN favicon_content_type;
`;
