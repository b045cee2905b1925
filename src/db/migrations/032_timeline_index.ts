// The timeline (GET /files/timeline, src/library/timeline.ts) counts an organization's live files
// of some media types by month of content_created_at: this index answers it alone. Without it
// SQLite read every file row of the organization (50,000 photos: 400-1,000 ms on the event loop
// at load ~25; with it 30-95 ms).
export default `
CREATE INDEX files_timeline ON files(org_id, media_type, content_created_at) WHERE deleted_at IS NULL;
`;
