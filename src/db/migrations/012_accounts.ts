// Accounts: people (users) who belong to organizations with a role (memberships), their
// dashboard sessions, links to the site's identity provider (identities), single-use mailed
// tokens (verification, password reset, invitations), OpenID Connect sign-ins in flight,
// login failure counters, messages to support and the payment provider's webhook events.
// Every secret (session id, CSRF token, mailed token, OIDC state) is stored as its SHA-256 hash.
export default `
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL,
  -- lower-cased, trimmed: one account per address whatever its spelling
  email_key TEXT NOT NULL UNIQUE,
  name TEXT,
  -- argon2id (PHC string); NULL for a user who signs in only through the identity provider
  password_hash TEXT,
  email_verified_at TEXT,
  disabled_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE memberships (
  org_id TEXT NOT NULL REFERENCES organizations(id),
  user_id TEXT NOT NULL REFERENCES users(id),
  role TEXT NOT NULL CHECK (role IN ('owner','admin','member','viewer')),
  created_at TEXT NOT NULL,
  PRIMARY KEY (org_id, user_id)
) WITHOUT ROWID;
CREATE INDEX memberships_user ON memberships(user_id);

CREATE TABLE user_sessions (
  id_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  org_id TEXT NOT NULL REFERENCES organizations(id),
  csrf_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  -- epoch milliseconds, compared on every request
  idle_expires_ms INTEGER NOT NULL,
  absolute_expires_ms INTEGER NOT NULL,
  ip TEXT,
  user_agent TEXT,
  revoked_at TEXT
) WITHOUT ROWID;
CREATE INDEX user_sessions_user ON user_sessions(user_id);

CREATE TABLE identities (
  provider TEXT NOT NULL,
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id),
  email TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (issuer, subject),
  UNIQUE (user_id, provider)
) WITHOUT ROWID;

CREATE TABLE email_tokens (
  token_hash TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('verify_email','password_reset','invite')),
  user_id TEXT REFERENCES users(id),
  email_key TEXT NOT NULL,
  -- invitations: the organization and role offered
  org_id TEXT REFERENCES organizations(id),
  role TEXT,
  created_at TEXT NOT NULL,
  expires_ms INTEGER NOT NULL,
  used_at TEXT
) WITHOUT ROWID;
CREATE INDEX email_tokens_user ON email_tokens(user_id, kind);

CREATE TABLE oidc_flows (
  state_hash TEXT PRIMARY KEY,
  -- hash of the random value of the browser's flow cookie: the callback must come from the same browser
  browser_hash TEXT NOT NULL,
  nonce TEXT NOT NULL,
  code_verifier TEXT NOT NULL,
  purpose TEXT NOT NULL CHECK (purpose IN ('login','link')),
  user_id TEXT REFERENCES users(id),
  return_to TEXT NOT NULL,
  expires_ms INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE login_throttle (
  subject TEXT PRIMARY KEY,
  failures INTEGER NOT NULL,
  window_start_ms INTEGER NOT NULL,
  locked_until_ms INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE support_messages (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL,
  name TEXT,
  subject TEXT NOT NULL,
  message TEXT NOT NULL,
  user_id TEXT,
  org_id TEXT,
  ip TEXT,
  created_at TEXT NOT NULL,
  mailed_at TEXT
);
CREATE INDEX support_messages_created ON support_messages(created_at);

CREATE TABLE payment_events (
  provider TEXT NOT NULL,
  event_id TEXT NOT NULL,
  type TEXT NOT NULL,
  org_id TEXT,
  payload TEXT NOT NULL,
  -- what the appliance did with it: 'tier_changed', 'ignored', 'unknown_organization'
  outcome TEXT NOT NULL,
  received_at TEXT NOT NULL,
  PRIMARY KEY (provider, event_id)
) WITHOUT ROWID;
`;
