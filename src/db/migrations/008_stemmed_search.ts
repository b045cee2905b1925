// Keyword search stems English words: the chunk index and the library index are rebuilt with
// the porter stemmer over unicode61 (diacritics still folded), so "flexibility" finds
// "flexible" and "terminate" finds "Termination". FTS5 applies the same tokenizer to queries.
// The vocabulary table (document frequencies of stemmed terms) is recreated over the new index.
export default `
DROP TABLE chunks_fts_vocab;
DROP TRIGGER chunks_search_insert;
DROP TRIGGER chunks_search_delete;
DROP TABLE chunks_fts;
CREATE VIRTUAL TABLE chunks_fts USING fts5(content, headings, tokenize = 'porter unicode61 remove_diacritics 2');
INSERT INTO chunks_fts (rowid, content, headings) SELECT seq, content, heading_hierarchy FROM document_chunks;
CREATE TRIGGER chunks_search_insert AFTER INSERT ON document_chunks BEGIN
  INSERT INTO chunks_fts (rowid, content, headings) VALUES (new.seq, new.content, new.heading_hierarchy);
END;
CREATE TRIGGER chunks_search_delete AFTER DELETE ON document_chunks BEGIN
  DELETE FROM chunks_fts WHERE rowid = old.seq;
END;
CREATE VIRTUAL TABLE chunks_fts_vocab USING fts5vocab(chunks_fts, 'row');

-- The files triggers (004) address files_fts by name, so they keep working on the new table.
DROP TABLE files_fts;
CREATE VIRTUAL TABLE files_fts USING fts5(
  title, filename, tags, user_description, upload_description, visible_text,
  tokenize = 'porter unicode61 remove_diacritics 2',
  prefix = '2 3'
);
INSERT INTO files_fts (rowid, title, filename, tags, user_description, upload_description, visible_text)
  SELECT search_rowid, title, filename, tags, user_description, upload_description, visible_text FROM files;
`;
