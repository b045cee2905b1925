// Blobs a batch upload on a shared deployment has moved into the store before its session row
// exists (src/ingest/batch-objects.ts). The row is written before the move and deleted with the
// session's creation; a process that dies in between leaves the row, and housekeeping deletes
// the object it names once it is old enough that no request can still be writing the session.
export default `
CREATE TABLE batch_objects_in_flight (
  blob_key TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX batch_objects_in_flight_session ON batch_objects_in_flight(session_id);
CREATE INDEX batch_objects_in_flight_age ON batch_objects_in_flight(created_at);
`;
