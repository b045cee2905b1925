// Ingest: the stored file's metadata and processing state, batch upload sessions and their
// items, upload intents with their parts, and monthly usage counters.
export default `
ALTER TABLE files ADD COLUMN title TEXT;
ALTER TABLE files ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE files ADD COLUMN size_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE files ADD COLUMN content_type TEXT NOT NULL DEFAULT 'application/octet-stream';
ALTER TABLE files ADD COLUMN format TEXT;
ALTER TABLE files ADD COLUMN document_type TEXT;
ALTER TABLE files ADD COLUMN sha256 TEXT;
ALTER TABLE files ADD COLUMN blob_key TEXT;
ALTER TABLE files ADD COLUMN upload_method TEXT NOT NULL DEFAULT 'streaming' CHECK (upload_method IN ('streaming','presigned'));
ALTER TABLE files ADD COLUMN session_id TEXT;
ALTER TABLE files ADD COLUMN storage_target TEXT NOT NULL DEFAULT 'default';
ALTER TABLE files ADD COLUMN auto_describe INTEGER NOT NULL DEFAULT 1;
ALTER TABLE files ADD COLUMN content_category TEXT NOT NULL DEFAULT 'general';
ALTER TABLE files ADD COLUMN custom_schema_id TEXT;
ALTER TABLE files ADD COLUMN compliance_type TEXT;
ALTER TABLE files ADD COLUMN compliance_standard TEXT;
ALTER TABLE files ADD COLUMN compliance_image_type TEXT;
ALTER TABLE files ADD COLUMN uploaded_by TEXT;
ALTER TABLE files ADD COLUMN processing_status TEXT NOT NULL DEFAULT 'queued'
  CHECK (processing_status IN ('queued','processing','stored','completed','failed'));
ALTER TABLE files ADD COLUMN processing_job_id TEXT;
ALTER TABLE files ADD COLUMN processing_error TEXT;
ALTER TABLE files ADD COLUMN processing_started_at TEXT;
ALTER TABLE files ADD COLUMN processing_completed_at TEXT;
ALTER TABLE files ADD COLUMN last_error_at TEXT;
ALTER TABLE files ADD COLUMN retry_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE files ADD COLUMN text_extraction_status TEXT;
ALTER TABLE files ADD COLUMN variant_status TEXT;
ALTER TABLE files ADD COLUMN description_status TEXT;
ALTER TABLE files ADD COLUMN user_description TEXT;
ALTER TABLE files ADD COLUMN upload_description TEXT;
ALTER TABLE files ADD COLUMN visible_text TEXT;
ALTER TABLE files ADD COLUMN source_url TEXT;
ALTER TABLE files ADD COLUMN content_created_at TEXT;
CREATE INDEX files_org_hash ON files(org_id, sha256) WHERE deleted_at IS NULL;
CREATE INDEX files_session ON files(session_id) WHERE session_id IS NOT NULL;
CREATE INDEX files_processing ON files(processing_status, updated_at);

CREATE TABLE upload_sessions (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  status TEXT NOT NULL CHECK (status IN ('pending','uploading','processing','completed','failed','expired','cancelled')),
  upload_method TEXT NOT NULL CHECK (upload_method IN ('streaming','presigned')),
  total_files INTEGER NOT NULL,
  rejected_files INTEGER NOT NULL DEFAULT 0,
  options TEXT NOT NULL DEFAULT '{}',
  created_by TEXT,
  created_at TEXT NOT NULL,
  started_at TEXT,
  completed_at TEXT,
  updated_at TEXT NOT NULL,
  UNIQUE (id, org_id)
);
CREATE INDEX upload_sessions_org ON upload_sessions(org_id, created_at);

-- One row per accepted file of a batch; rejected files are only counted on the session.
CREATE TABLE session_items (
  session_id TEXT NOT NULL REFERENCES upload_sessions(id) ON DELETE CASCADE,
  item_index INTEGER NOT NULL,
  filename TEXT NOT NULL,
  file_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending','completed','failed','skipped')),
  size_bytes INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  media_type TEXT NOT NULL,
  content_type TEXT NOT NULL,
  format TEXT,
  document_type TEXT,
  skipped_existing_file_id TEXT,
  error TEXT,
  processing_time_ms REAL,
  created_at TEXT NOT NULL,
  finished_at TEXT,
  PRIMARY KEY (session_id, item_index)
);

CREATE TABLE upload_intents (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  upload_mode TEXT NOT NULL CHECK (upload_mode IN ('single_shot','multipart')),
  status TEXT NOT NULL CHECK (status IN ('PENDING','UPLOADED','COMPLETED','FAILED')),
  media_type TEXT NOT NULL,
  object_key TEXT NOT NULL,
  filename TEXT NOT NULL,
  content_type TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  claimed_sha256 TEXT NOT NULL,
  part_size_bytes INTEGER,
  total_parts INTEGER,
  store_upload_id TEXT,
  idempotency_key TEXT,
  options TEXT NOT NULL DEFAULT '{}',
  file_id TEXT,
  deduplicated INTEGER NOT NULL DEFAULT 0,
  error_message TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  confirmed_at TEXT,
  completed_at TEXT,
  updated_at TEXT NOT NULL,
  UNIQUE (org_id, idempotency_key)
);
CREATE INDEX upload_intents_expiry ON upload_intents(status, expires_at_ms);

CREATE TABLE intent_parts (
  upload_id TEXT NOT NULL REFERENCES upload_intents(id) ON DELETE CASCADE,
  part_number INTEGER NOT NULL,
  etag TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  confirmed_at TEXT NOT NULL,
  PRIMARY KEY (upload_id, part_number)
);

CREATE TABLE usage_counters (
  org_id TEXT NOT NULL REFERENCES organizations(id),
  period TEXT NOT NULL,
  kind TEXT NOT NULL,
  count INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, period, kind)
);
`;
