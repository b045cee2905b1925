// The built-in text model's vectors of USE's vocabulary pieces (src/embeddings/use-sif-embedder.ts),
// from which it composes the vectors of words outside its common-word list: each piece costs a
// model run once per library rather than once per process. int8 components times `scale`.
export default `
CREATE TABLE text_piece_vectors (
  model TEXT NOT NULL,
  piece INTEGER NOT NULL,
  scale REAL NOT NULL,
  q BLOB NOT NULL,
  PRIMARY KEY (model, piece)
) WITHOUT ROWID;
`;
