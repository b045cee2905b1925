// The library's keyword search on PostgreSQL (src/files/postgres-file-search.ts): each file's
// words as FTS5's tokenizer makes them on SQLite, stored as a tsvector per file, so a search
// finds the same files on both databases (PostgreSQL's parser and english stemmer split and stem
// otherwise). The files triggers still copy a changed file's text into files_fts, which on
// PostgreSQL becomes the queue of rows awaiting the tokenizer (its GIN index over to_tsvector
// goes); the delete trigger also takes a deleted file's terms away. The listing's order by when
// things were taken puts undated files first ascending and last descending, as SQLite sorts
// NULL: its index is made so on PostgreSQL (whose default is the other way), serving both
// directions. SQLite's FTS5 keeps its index itself: nothing changes there.
export default `
DROP INDEX files_fts_search;
CREATE TABLE file_search_terms (
  rowid BIGINT PRIMARY KEY,
  terms TSVECTOR NOT NULL
);
CREATE INDEX file_search_terms_match ON file_search_terms USING gin (terms);
CREATE OR REPLACE FUNCTION files_search_delete_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM files_fts WHERE rowid = OLD.search_rowid;
  DELETE FROM file_search_terms WHERE rowid = OLD.search_rowid;
  RETURN NULL;
END $$;
DROP INDEX files_list_content_created;
CREATE INDEX files_list_content_created ON files (org_id, content_created_at NULLS FIRST, id) WHERE deleted_at IS NULL;
`;

/** Tables only PostgreSQL has (the schema comparison of the two engines leaves them out). */
export const POSTGRES_ONLY_TABLES = ["file_search_terms"];
