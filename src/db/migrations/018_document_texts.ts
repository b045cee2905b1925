// A document's (or link's) whole extracted text moves out of its `files` row into a table of its
// own: SQLite rewrites a whole row on every update and reads it whole on every `SELECT *`, so a
// book's megabyte of text was rewritten by each of its status updates (1.25 ms and a megabyte of
// WAL each, against 0.05 ms) and read by every lookup and listing page (0.64 ms a row against
// 0.01). Only the detail, text and export endpoints read it. `visible_text` (at most 200 KB of a
// document's text, for GET /files?search) stays in the row: the library's search index needs it.
export default `
CREATE TABLE document_texts (
  file_id TEXT PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
  text TEXT NOT NULL
);
INSERT INTO document_texts (file_id, text) SELECT id, extracted_text FROM files WHERE extracted_text IS NOT NULL;
ALTER TABLE files DROP COLUMN extracted_text;
`;
