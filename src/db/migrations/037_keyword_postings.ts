// The chunks' keyword index on PostgreSQL: the app's own BM25 over these tables, with the very
// tokens and stems FTS5 makes on SQLite (PostgreSQL's english stemmer is Porter2 and its parser
// splits words otherwise, so its full-text search would rank differently). The insert trigger of
// migration 008 still copies each new chunk into chunks_fts, which on PostgreSQL is now the queue
// of chunks awaiting the tokenizer (its GIN index goes): documents/postgres-keyword-index.ts
// moves them into the postings, with FTS5's tokenizer run in the process. SQLite's FTS5 keeps its
// index itself: nothing changes there.
export default `
DROP INDEX chunks_fts_search;
CREATE TABLE chunk_keyword_rows (
  seq BIGINT PRIMARY KEY,
  length BIGINT NOT NULL
);
CREATE TABLE chunk_keyword_postings (
  stem TEXT NOT NULL,
  seq BIGINT NOT NULL,
  frequency DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (stem, seq)
);
CREATE INDEX chunk_keyword_postings_seq ON chunk_keyword_postings (seq);
CREATE TABLE chunk_keyword_totals (
  id BIGINT PRIMARY KEY CHECK (id = 1),
  chunks BIGINT NOT NULL,
  tokens BIGINT NOT NULL
);
INSERT INTO chunk_keyword_totals (id, chunks, tokens) VALUES (1, 0, 0);
CREATE OR REPLACE FUNCTION chunks_search_delete_fn() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  gone BIGINT;
BEGIN
  DELETE FROM chunks_fts WHERE rowid = OLD.seq;
  DELETE FROM chunk_keyword_postings WHERE seq = OLD.seq;
  DELETE FROM chunk_keyword_rows WHERE seq = OLD.seq RETURNING length INTO gone;
  IF gone IS NOT NULL THEN
    UPDATE chunk_keyword_totals SET chunks = chunks - 1, tokens = tokens - gone;
  END IF;
  RETURN NULL;
END $$;
`;

/** Tables only PostgreSQL has (the schema comparison of the two engines leaves them out). */
export const POSTGRES_ONLY_TABLES = ["chunk_keyword_rows", "chunk_keyword_postings", "chunk_keyword_totals"];
