// Rules (automation, extension): an organization's conditions over what analysis found and the
// actions they take, evaluated when a file's analysis ends and over the library on demand; each
// application is recorded against the file. `file_origins` says how a file arrived when it was
// not by an upload or a cloud import (a watched folder, a mail account): rules match on it.
export default `
CREATE TABLE rules (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  description TEXT,
  enabled INTEGER NOT NULL DEFAULT 1,
  -- "all" conditions must hold, or "any" of them.
  match TEXT NOT NULL DEFAULT 'all' CHECK (match IN ('all','any')),
  conditions TEXT NOT NULL,
  actions TEXT NOT NULL,
  -- Lower runs first when several rules match one file.
  position INTEGER NOT NULL DEFAULT 0,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX rules_org ON rules(org_id, position, created_at);
CREATE UNIQUE INDEX rules_org_name ON rules(org_id, lower(name));

CREATE TABLE rule_applications (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  -- The rule may be deleted later; its name is kept for the file's history.
  rule_id TEXT NOT NULL,
  rule_name TEXT NOT NULL,
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  -- 'analysis' (the file's analysis ended) or 'library' (an apply-to-library job, job_id set).
  trigger TEXT NOT NULL CHECK (trigger IN ('analysis','library')),
  job_id TEXT,
  status TEXT NOT NULL CHECK (status IN ('applied','failed')),
  -- What each action did, in order: [{type, outcome}].
  outcomes TEXT NOT NULL,
  error TEXT,
  applied_at TEXT NOT NULL
);
CREATE INDEX rule_applications_file ON rule_applications(file_id, applied_at);
CREATE INDEX rule_applications_rule ON rule_applications(rule_id, applied_at);
CREATE INDEX rule_applications_job ON rule_applications(job_id, file_id) WHERE job_id IS NOT NULL;

CREATE TABLE file_origins (
  file_id TEXT PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
  source TEXT NOT NULL CHECK (source IN ('watch','mail')),
  -- The watched path, or the mail account and message it came from.
  detail TEXT
);
`;
