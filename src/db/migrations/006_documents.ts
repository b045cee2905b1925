// Documents: the pages read from each document (status, text and digitization elements), the
// chunks cut from them for search with their keyword index (FTS5, keyed by the chunk's integer
// seq, stable across VACUUM), and the per-document states of digitization and embedding.
export default `
CREATE TABLE document_pages (
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  page_number INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending','processing','completed','failed')),
  error_message TEXT,
  ocr INTEGER NOT NULL DEFAULT 0,
  text TEXT NOT NULL DEFAULT '',
  elements TEXT NOT NULL DEFAULT '[]',
  PRIMARY KEY (file_id, page_number)
) WITHOUT ROWID;

CREATE TABLE document_chunks (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  org_id TEXT NOT NULL,
  chunk_index INTEGER NOT NULL,
  content TEXT NOT NULL,
  page_numbers TEXT NOT NULL,
  heading_hierarchy TEXT NOT NULL,
  token_count INTEGER NOT NULL,
  chunk_type TEXT NOT NULL,
  embedding_status TEXT NOT NULL CHECK (embedding_status IN ('pending','completed','failed')),
  embedding_error TEXT,
  embedding_model TEXT,
  UNIQUE (file_id, chunk_index)
);
CREATE INDEX document_chunks_pending ON document_chunks(file_id) WHERE embedding_status = 'pending';

CREATE VIRTUAL TABLE chunks_fts USING fts5(content, headings, tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER chunks_search_insert AFTER INSERT ON document_chunks BEGIN
  INSERT INTO chunks_fts (rowid, content, headings) VALUES (new.seq, new.content, new.heading_hierarchy);
END;
CREATE TRIGGER chunks_search_delete AFTER DELETE ON document_chunks BEGIN
  DELETE FROM chunks_fts WHERE rowid = old.seq;
END;

ALTER TABLE files ADD COLUMN digitization_status TEXT;
ALTER TABLE files ADD COLUMN embedding_status TEXT;
ALTER TABLE files ADD COLUMN document_language TEXT;
`;
