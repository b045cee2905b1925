// Watched folders (extension): directories of the server whose new files are ingested into an
// organization, and one row per file taken from them, written before the file is touched, so a
// restart (or kill -9) finishes what was started and never takes a file twice.
export default `
CREATE TABLE watched_folders (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  -- Absolute, resolved path of the directory.
  path TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL,
  folder_id TEXT,
  -- 'setting': from MEDIABOX_WATCH_DIR (active while listed there); 'cli': mediabox watch.
  origin TEXT NOT NULL CHECK (origin IN ('setting','cli')),
  active INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  last_scan_at TEXT,
  last_error TEXT
);

CREATE TABLE watch_items (
  id TEXT PRIMARY KEY,
  watch_id TEXT NOT NULL REFERENCES watched_folders(id) ON DELETE CASCADE,
  org_id TEXT NOT NULL,
  -- Where the file was, relative to the watched directory ("Clients/2024/scan.pdf").
  rel_path TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  -- The file id it is stored as (chosen before ingesting, so a resumed ingest reuses it).
  file_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ingesting','done','failed')),
  error TEXT,
  -- Where the file was moved: done/... or failed/..., relative to the watched directory.
  moved_to TEXT,
  created_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX watch_items_watch ON watch_items(watch_id, created_at);
CREATE INDEX watch_items_open ON watch_items(status) WHERE status = 'ingesting';
`;
