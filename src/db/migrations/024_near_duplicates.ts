// Near-duplicate images (src/duplicates/): each image's perceptual hash and sharpness, and the
// pairs found near-duplicate when an image was fingerprinted (each pair once, file_a < file_b).
// Groups are the connected pairs of live files, computed when asked for; a file's pairs go with
// it on purge.
export default `
CREATE TABLE image_fingerprints (
  file_id TEXT PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
  org_id TEXT NOT NULL,
  phash TEXT NOT NULL,
  sharpness REAL NOT NULL
);
CREATE INDEX image_fingerprints_org ON image_fingerprints(org_id);
CREATE TABLE duplicate_pairs (
  file_a TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  file_b TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  org_id TEXT NOT NULL,
  hamming INTEGER NOT NULL,
  similarity REAL,
  PRIMARY KEY (file_a, file_b)
);
CREATE INDEX duplicate_pairs_org ON duplicate_pairs(org_id);
CREATE INDEX duplicate_pairs_b ON duplicate_pairs(file_b);
`;
