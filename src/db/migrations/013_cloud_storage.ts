// Cloud storage: OAuth connections to cloud drives (tokens encrypted at rest by cloud/token-vault.ts),
// the short-lived single-use OAuth states that bind a callback to the organization and the key
// that started it, picker sessions, and the import/export jobs with one row per file.
export default `
CREATE TABLE cloud_connections (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  provider TEXT NOT NULL,
  provider_user_id TEXT NOT NULL,
  provider_email TEXT,
  provider_display_name TEXT,
  -- "v1.<key id>.<iv>.<ciphertext+tag>" (AES-256-GCM); never the plain token.
  access_token TEXT NOT NULL,
  refresh_token TEXT,
  token_expires_at INTEGER,
  scope TEXT,
  is_active INTEGER NOT NULL DEFAULT 1,
  -- Set when the provider refused the grant (revoked, expired refresh token): the user must reconnect.
  grant_error TEXT,
  created_by TEXT,
  connected_at TEXT NOT NULL,
  last_used_at TEXT,
  updated_at TEXT NOT NULL,
  UNIQUE (org_id, provider, provider_user_id)
);
CREATE INDEX cloud_connections_org ON cloud_connections(org_id, connected_at);

CREATE TABLE cloud_oauth_states (
  -- SHA-256 of the state: a database reader learns nothing that completes a flow.
  state_hash TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  key_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  code_verifier TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at TEXT
);
CREATE INDEX cloud_oauth_states_expiry ON cloud_oauth_states(expires_at);

CREATE TABLE cloud_picker_sessions (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  connection_id TEXT NOT NULL REFERENCES cloud_connections(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);

CREATE TABLE cloud_jobs (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  connection_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('import','export')),
  status TEXT NOT NULL CHECK (status IN ('pending','in_progress','completed','partial','failed','cancelled')),
  total_files INTEGER NOT NULL,
  error TEXT,
  options TEXT NOT NULL,
  runner_job_id TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  completed_at TEXT
);
CREATE INDEX cloud_jobs_org ON cloud_jobs(org_id, created_at);

CREATE TABLE cloud_job_items (
  job_id TEXT NOT NULL REFERENCES cloud_jobs(id) ON DELETE CASCADE,
  item_index INTEGER NOT NULL,
  -- import: the cloud file read; export: the cloud file written (once uploaded).
  cloud_file_id TEXT,
  name TEXT NOT NULL,
  mime_type TEXT,
  size_bytes INTEGER,
  -- import: the placeholder file; export: the file uploaded.
  file_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending','completed','failed','skipped')),
  error TEXT,
  existing_file_id TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  finished_at TEXT,
  PRIMARY KEY (job_id, item_index)
) WITHOUT ROWID;
`;
