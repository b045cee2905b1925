// Mail intake (extension): an organization's IMAP accounts (password sealed like cloud tokens),
// what to take from them and where to put it, and one row per message handled, claimed before
// its attachments are stored (with the file ids they get) so a restart finishes it and never
// stores it twice.
export default `
CREATE TABLE mail_accounts (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  host TEXT NOT NULL,
  port INTEGER NOT NULL,
  tls TEXT NOT NULL CHECK (tls IN ('implicit','starttls','none')),
  username TEXT NOT NULL,
  -- "v1.<key id>.<iv>.<data>" (AES-256-GCM); never the password itself.
  password TEXT NOT NULL,
  mailbox TEXT NOT NULL DEFAULT 'INBOX',
  -- After a message is stored: 'flag' (\\Seen and \\Flagged) or 'move' to move_to.
  after_action TEXT NOT NULL CHECK (after_action IN ('flag','move')),
  move_to TEXT,
  from_contains TEXT,
  subject_contains TEXT,
  attachment_types TEXT NOT NULL DEFAULT '[]',
  ingest_body INTEGER NOT NULL DEFAULT 0,
  project_id TEXT NOT NULL,
  folder_id TEXT,
  tags TEXT NOT NULL DEFAULT '[]',
  poll_interval_seconds INTEGER NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  -- Messages up to last_uid of this UIDVALIDITY have been handled.
  uid_validity TEXT,
  last_uid INTEGER NOT NULL DEFAULT 0,
  last_polled_at TEXT,
  next_poll_at INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (org_id, name)
);
CREATE INDEX mail_accounts_due ON mail_accounts(enabled, next_poll_at);

CREATE TABLE mail_messages (
  account_id TEXT NOT NULL REFERENCES mail_accounts(id) ON DELETE CASCADE,
  uid_validity TEXT NOT NULL,
  uid INTEGER NOT NULL,
  message_id TEXT,
  subject TEXT,
  sender TEXT,
  -- 'ingesting' while its files are stored; 'done', 'skipped' (filters) or 'failed'.
  status TEXT NOT NULL CHECK (status IN ('ingesting','done','skipped','failed')),
  -- [{part, filename, file_id, status, error}] planned at the claim, filled as they are stored.
  parts TEXT NOT NULL DEFAULT '[]',
  error TEXT,
  received_at TEXT,
  handled_at TEXT NOT NULL,
  PRIMARY KEY (account_id, uid_validity, uid)
);
CREATE INDEX mail_messages_account ON mail_messages(account_id, handled_at);
`;
