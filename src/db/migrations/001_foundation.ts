// Organizations, API keys, projects, folders, the file record's core, durable jobs, telemetry.
// Tenancy is enforced by the schema too: child rows reference (id, org_id) pairs, so a folder
// can never point at another organization's project even if a query forgot a filter.
export default `
CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  name_key TEXT NOT NULL UNIQUE,
  tier TEXT NOT NULL CHECK (tier IN ('FREE','STARTER','PROFESSIONAL','ENTERPRISE','CUSTOM')),
  created_at TEXT NOT NULL
);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT,
  display_prefix TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  permissions TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT
);
CREATE INDEX api_keys_org ON api_keys(org_id);

CREATE TABLE projects (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  name_key TEXT NOT NULL,
  description TEXT,
  icon TEXT,
  color TEXT,
  project_type TEXT NOT NULL DEFAULT 'general' CHECK (project_type IN ('general','real_estate')),
  is_default INTEGER NOT NULL DEFAULT 0,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (org_id, name_key),
  UNIQUE (id, org_id)
);
CREATE UNIQUE INDEX projects_one_default ON projects(org_id) WHERE is_default = 1;

CREATE TABLE folders (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  project_id TEXT NOT NULL,
  parent_id TEXT,
  name TEXT NOT NULL,
  name_key TEXT NOT NULL,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (id, org_id),
  FOREIGN KEY (project_id, org_id) REFERENCES projects(id, org_id),
  FOREIGN KEY (parent_id, org_id) REFERENCES folders(id, org_id)
);
CREATE UNIQUE INDEX folders_sibling_names ON folders(project_id, ifnull(parent_id, ''), name_key);
CREATE INDEX folders_parent ON folders(parent_id);

-- The file record's core. The ingest and media pipelines add their columns in later migrations.
CREATE TABLE files (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  project_id TEXT NOT NULL,
  folder_id TEXT,
  media_type TEXT NOT NULL CHECK (media_type IN ('image','document','video','link')),
  filename TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT,
  UNIQUE (id, org_id),
  FOREIGN KEY (project_id, org_id) REFERENCES projects(id, org_id),
  FOREIGN KEY (folder_id, org_id) REFERENCES folders(id, org_id)
);
CREATE INDEX files_project ON files(project_id);
CREATE INDEX files_folder ON files(folder_id);

CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  org_id TEXT REFERENCES organizations(id),
  queue TEXT NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending','processing','completed','failed','cancelled')),
  progress REAL NOT NULL DEFAULT 0,
  results TEXT,
  error TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  run_at INTEGER NOT NULL,
  lease_owner TEXT,
  lease_expires_at INTEGER,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  dedupe_key TEXT,
  created_at TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT,
  updated_at TEXT NOT NULL
);
CREATE INDEX jobs_claimable ON jobs(queue, status, run_at);
CREATE INDEX jobs_leases ON jobs(status, lease_expires_at);
CREATE INDEX jobs_finished ON jobs(finished_at) WHERE finished_at IS NOT NULL;
CREATE UNIQUE INDEX jobs_active_dedupe ON jobs(dedupe_key) WHERE dedupe_key IS NOT NULL AND status IN ('pending','processing');

CREATE TABLE upload_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id TEXT REFERENCES organizations(id),
  event_type TEXT NOT NULL,
  message TEXT NOT NULL,
  data TEXT,
  client_timestamp TEXT,
  batch_id TEXT,
  file_index INTEGER,
  file_name TEXT,
  source_ip TEXT,
  received_at TEXT NOT NULL
);
CREATE INDEX upload_events_received ON upload_events(received_at);
`;
