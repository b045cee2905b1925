// Videos and links: what probing a video and crawling a page record on the file row, the
// keyframes sampled from a video (their JPEGs are blobs; what was seen in each is kept for the
// detail view and for finding a moment again), and the link an extracted image came from.
export default `
ALTER TABLE files ADD COLUMN video_container TEXT;
ALTER TABLE files ADD COLUMN has_audio INTEGER;
ALTER TABLE files ADD COLUMN bit_rate INTEGER;
ALTER TABLE files ADD COLUMN analysis_error TEXT;
-- AI-description credits reserved at upload (1 an image, 2 a video), so the worker can release them.
ALTER TABLE files ADD COLUMN reserved_credits INTEGER NOT NULL DEFAULT 0;

ALTER TABLE files ADD COLUMN link_url_key TEXT;
ALTER TABLE files ADD COLUMN domain TEXT;
ALTER TABLE files ADD COLUMN og_metadata TEXT;
ALTER TABLE files ADD COLUMN favicon_blob_key TEXT;
ALTER TABLE files ADD COLUMN snapshot_blob_key TEXT;
ALTER TABLE files ADD COLUMN crawl_status TEXT;
ALTER TABLE files ADD COLUMN crawl_error TEXT;
ALTER TABLE files ADD COLUMN extract_images INTEGER;
ALTER TABLE files ADD COLUMN parent_file_id TEXT;
CREATE INDEX files_link_url ON files(org_id, link_url_key) WHERE link_url_key IS NOT NULL;
CREATE INDEX files_parent ON files(parent_file_id) WHERE parent_file_id IS NOT NULL;

CREATE TABLE video_keyframes (
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  frame_index INTEGER NOT NULL,
  time_seconds REAL NOT NULL,
  blob_key TEXT NOT NULL,
  width INTEGER NOT NULL,
  height INTEGER NOT NULL,
  is_poster INTEGER NOT NULL DEFAULT 0,
  visible_text TEXT,
  objects TEXT,
  faces INTEGER,
  PRIMARY KEY (file_id, frame_index)
) WITHOUT ROWID;
`;
