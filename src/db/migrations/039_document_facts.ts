// What reading a document found (its text extraction and digitization states, its page count and
// language) and the state of its chunks (their count, their embedding) move out of the files row
// into the document kind's own table (src/documents/document-facts.ts owns it). A saved link's
// article is read and chunked by the same code, so links have a row too. The row keeps identity,
// placement, blob and status (document_type stays: detection decides it with the format).
export default `
CREATE TABLE document_facts (
  file_id TEXT PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
  text_extraction_status TEXT,
  digitization_status TEXT,
  page_count INTEGER,
  language TEXT,
  chunk_count INTEGER NOT NULL DEFAULT 0,
  embedding_status TEXT
);
INSERT INTO document_facts (file_id, text_extraction_status, digitization_status, page_count, language, chunk_count, embedding_status)
  SELECT id, text_extraction_status, digitization_status, page_count, document_language, chunk_count, embedding_status FROM files
  WHERE text_extraction_status IS NOT NULL OR digitization_status IS NOT NULL OR page_count IS NOT NULL OR document_language IS NOT NULL
     OR chunk_count <> 0 OR embedding_status IS NOT NULL;
ALTER TABLE files DROP COLUMN text_extraction_status;
ALTER TABLE files DROP COLUMN digitization_status;
ALTER TABLE files DROP COLUMN page_count;
ALTER TABLE files DROP COLUMN document_language;
ALTER TABLE files DROP COLUMN chunk_count;
ALTER TABLE files DROP COLUMN embedding_status;
`;
