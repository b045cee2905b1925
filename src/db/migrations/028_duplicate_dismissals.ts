// Near-duplicate pairs a person said are not copies of one another (src/duplicates/): kept apart
// from duplicate_pairs, which an image's fingerprinting rewrites, so the verdict outlives a
// reprocessing. Each pair once, file_a < file_b; a file's verdicts go with it on purge.
export default `
CREATE TABLE duplicate_dismissals (
  file_a TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  file_b TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  org_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (file_a, file_b)
) WITHOUT ROWID;
CREATE INDEX duplicate_dismissals_b ON duplicate_dismissals(file_b);
`;
