// Images: the resized variants of each image, model descriptions (full_descriptions), extraction
// results per domain with their human review corrections, per-stage timings of the media
// pipelines, and the registry of vector spaces (one sqlite-vec table per embedding model, since a
// vec0 column has a fixed dimension).
export default `
CREATE TABLE image_variants (
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  variant_type TEXT NOT NULL CHECK (variant_type IN ('tiny_64','small_256','medium_750','large_1024')),
  blob_key TEXT NOT NULL,
  width INTEGER NOT NULL,
  height INTEGER NOT NULL,
  size_bytes INTEGER NOT NULL,
  content_type TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (file_id, variant_type)
) WITHOUT ROWID;

CREATE TABLE file_descriptions (
  id TEXT PRIMARY KEY,
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  kind TEXT NOT NULL,
  text TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX file_descriptions_file ON file_descriptions(file_id, created_at);

CREATE TABLE file_extractions (
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  domain TEXT NOT NULL,
  data TEXT NOT NULL,
  source TEXT NOT NULL,
  corrections TEXT NOT NULL DEFAULT '{"item_reviews":{},"field_edits":{}}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  reviewed_at TEXT,
  PRIMARY KEY (file_id, domain)
) WITHOUT ROWID;

CREATE TABLE file_stage_runs (
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  stage TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('completed','failed','skipped')),
  duration_ms REAL NOT NULL,
  error TEXT,
  finished_at TEXT NOT NULL,
  PRIMARY KEY (file_id, stage)
) WITHOUT ROWID;

CREATE TABLE vector_spaces (
  name TEXT PRIMARY KEY,
  purpose TEXT NOT NULL,
  model TEXT NOT NULL,
  dimension INTEGER NOT NULL,
  table_name TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);

ALTER TABLE files ADD COLUMN image_embedding_model TEXT;
`;
