// Auto matching (rules' predicted_tags / predicted_folder_id): an organization's text classifier,
// trained on the files that carry each tag or sit in each folder (rules/auto-match.ts).
export default `
CREATE TABLE auto_match_models (
  org_id TEXT PRIMARY KEY REFERENCES organizations(id),
  trained_at TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  example_files INTEGER NOT NULL,
  terms TEXT NOT NULL,
  idf BLOB NOT NULL
);
CREATE TABLE auto_match_labels (
  org_id TEXT NOT NULL REFERENCES auto_match_models(org_id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('tag', 'folder')),
  label TEXT NOT NULL,
  positives INTEGER NOT NULL,
  weights BLOB NOT NULL,
  bias REAL NOT NULL,
  PRIMARY KEY (org_id, kind, label)
);
`;
