// Library: the media-specific fields the pipelines fill, full-text search over file metadata and
// visible text, a tag index for "all of these tags" filters, and listing indexes that keep
// GET /files fast at 100,000 files per organization.
//
// FTS rows are keyed by files.search_rowid, a stable integer of our own: the implicit rowid of a
// table with a TEXT primary key may be renumbered by VACUUM (and VACUUM INTO, used by backups).
export default `
ALTER TABLE files ADD COLUMN width INTEGER;
ALTER TABLE files ADD COLUMN height INTEGER;
ALTER TABLE files ADD COLUMN blur_hash TEXT;
ALTER TABLE files ADD COLUMN variant_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE files ADD COLUMN description_error TEXT;
ALTER TABLE files ADD COLUMN description_generated_at TEXT;
ALTER TABLE files ADD COLUMN page_count INTEGER;
ALTER TABLE files ADD COLUMN chunk_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE files ADD COLUMN extracted_text TEXT;
ALTER TABLE files ADD COLUMN duration_seconds REAL;
ALTER TABLE files ADD COLUMN frame_rate REAL;
ALTER TABLE files ADD COLUMN video_codec TEXT;
ALTER TABLE files ADD COLUMN analysis_status TEXT;
ALTER TABLE files ADD COLUMN compliance_status TEXT;
ALTER TABLE files ADD COLUMN search_rowid INTEGER;

UPDATE files SET search_rowid = rowid;
CREATE UNIQUE INDEX files_search_rowid ON files(search_rowid);

CREATE VIRTUAL TABLE files_fts USING fts5(
  title, filename, tags, user_description, upload_description, visible_text,
  tokenize = 'unicode61 remove_diacritics 2',
  prefix = '2 3'
);
INSERT INTO files_fts (rowid, title, filename, tags, user_description, upload_description, visible_text)
  SELECT search_rowid, title, filename, tags, user_description, upload_description, visible_text FROM files;

CREATE TRIGGER files_search_insert AFTER INSERT ON files BEGIN
  UPDATE files SET search_rowid = (SELECT coalesce(max(search_rowid), 0) + 1 FROM files) WHERE id = new.id;
  INSERT INTO files_fts (rowid, title, filename, tags, user_description, upload_description, visible_text)
    SELECT search_rowid, new.title, new.filename, new.tags, new.user_description, new.upload_description, new.visible_text
    FROM files WHERE id = new.id;
END;
CREATE TRIGGER files_search_update AFTER UPDATE OF title, filename, tags, user_description, upload_description, visible_text ON files BEGIN
  DELETE FROM files_fts WHERE rowid = new.search_rowid;
  INSERT INTO files_fts (rowid, title, filename, tags, user_description, upload_description, visible_text)
    VALUES (new.search_rowid, new.title, new.filename, new.tags, new.user_description, new.upload_description, new.visible_text);
END;
CREATE TRIGGER files_search_delete AFTER DELETE ON files BEGIN
  DELETE FROM files_fts WHERE rowid = old.search_rowid;
END;

-- Tags compared case-insensitively; one row per distinct tag of a file.
CREATE TABLE file_tags (
  file_id TEXT NOT NULL,
  org_id TEXT NOT NULL,
  tag_key TEXT NOT NULL,
  PRIMARY KEY (file_id, tag_key)
) WITHOUT ROWID;
CREATE INDEX file_tags_lookup ON file_tags(org_id, tag_key, file_id);
INSERT OR IGNORE INTO file_tags (file_id, org_id, tag_key)
  SELECT files.id, files.org_id, lower(json_each.value) FROM files, json_each(files.tags);

CREATE TRIGGER files_tags_insert AFTER INSERT ON files BEGIN
  INSERT OR IGNORE INTO file_tags (file_id, org_id, tag_key) SELECT new.id, new.org_id, lower(value) FROM json_each(new.tags);
END;
CREATE TRIGGER files_tags_update AFTER UPDATE OF tags ON files BEGIN
  DELETE FROM file_tags WHERE file_id = new.id;
  INSERT OR IGNORE INTO file_tags (file_id, org_id, tag_key) SELECT new.id, new.org_id, lower(value) FROM json_each(new.tags);
END;
CREATE TRIGGER files_tags_delete AFTER DELETE ON files BEGIN
  DELETE FROM file_tags WHERE file_id = old.id;
END;

CREATE INDEX files_list_created ON files(org_id, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX files_list_content_created ON files(org_id, content_created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX files_list_title ON files(org_id, coalesce(title, filename) COLLATE NOCASE, id) WHERE deleted_at IS NULL;
CREATE INDEX files_list_size ON files(org_id, size_bytes, id) WHERE deleted_at IS NULL;
CREATE INDEX files_deleted ON files(deleted_at) WHERE deleted_at IS NOT NULL;
-- Lets "is this id a live file of the org" be answered from the index alone (tag and id filters,
-- and counting their matches, touch thousands of ids).
CREATE INDEX files_live_ids ON files(id) WHERE deleted_at IS NULL;
`;
