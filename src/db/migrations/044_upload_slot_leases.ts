// Concurrent uploads per organization where several api processes share the database
// (src/ingest/shared-upload-slots.ts): one row per upload in progress, with a lease the holder
// refreshes, so a process that dies mid-upload frees its slots when their leases lapse. The
// single-box appliance counts in memory and leaves it empty.
export default `
CREATE TABLE upload_slot_leases (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX upload_slot_leases_org ON upload_slot_leases(org_id, expires_at);
`;
