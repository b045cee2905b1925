// Custom extraction schemas: an organization's named JSON Schemas for structured extraction.
// Names are unique per organization case-insensitively (name_key, as for projects). `seq` is an
// AUTOINCREMENT integer so newest-first listing has a stable tie-break when two schemas share a
// created_at millisecond (a TEXT primary key's implicit rowid may be renumbered by VACUUM).
export default `
CREATE TABLE custom_schemas (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  name_key TEXT NOT NULL,
  description TEXT,
  schema TEXT NOT NULL CHECK (json_valid(schema)),
  prompt_hint TEXT,
  field_count INTEGER NOT NULL,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (org_id, name_key)
);
CREATE INDEX custom_schemas_org_newest ON custom_schemas(org_id, created_at DESC, seq DESC);
`;
