// Document frequencies of the chunk index's terms, so a search can leave out words that occur in
// most chunks (they rank nothing and make BM25 score every chunk).
export default `
CREATE VIRTUAL TABLE chunks_fts_vocab USING fts5vocab(chunks_fts, 'row');
`;
