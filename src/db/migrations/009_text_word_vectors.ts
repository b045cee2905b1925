// The built-in text model's word vectors (src/embeddings/use-sif-embedder.ts), kept across
// restarts: each distinct word costs a Universal Sentence Encoder run once per library, not once
// per process, and a restarted server embeds queries from exactly the vectors its chunks were
// embedded with. int8 components times `scale`; `weight` is the word's SIF weight.
export default `
CREATE TABLE text_word_vectors (
  model TEXT NOT NULL,
  word TEXT NOT NULL,
  scale REAL NOT NULL,
  weight REAL NOT NULL,
  q BLOB NOT NULL,
  PRIMARY KEY (model, word)
) WITHOUT ROWID;
`;
