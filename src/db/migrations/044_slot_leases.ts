// Slots held across processes sharing the database (src/db/slot-leases.ts): one row per slot in
// use (an upload in progress for an organization's "Concurrent uploads", a link fetch for the
// crawler's politeness per organization and host), with a lease the holder refreshes, so a
// process that dies frees its slots when their leases lapse. The single-box appliance counts in
// memory and leaves it empty.
export default `
CREATE TABLE slot_leases (
  id TEXT PRIMARY KEY,
  scope TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX slot_leases_scope ON slot_leases(scope, expires_at);
`;
