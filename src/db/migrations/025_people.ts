// People (src/people/): every recognizable face found in an image, with its box and score (its
// embedding lives in the "face" vector space under the face's id), and the people faces are
// clustered into, per organization. A face's person is null until it is clustered; removing a
// person (a merge) leaves its faces to the one they were merged into, never unassigned by cascade.
export default `
CREATE TABLE people (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  name TEXT,
  hidden INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX people_org ON people(org_id, created_at);
CREATE TABLE faces (
  id TEXT PRIMARY KEY,
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  org_id TEXT NOT NULL,
  person_id TEXT REFERENCES people(id) ON DELETE SET NULL,
  x_min REAL NOT NULL,
  y_min REAL NOT NULL,
  x_max REAL NOT NULL,
  y_max REAL NOT NULL,
  score REAL NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX faces_person ON faces(person_id);
CREATE INDEX faces_file ON faces(file_id);
CREATE INDEX faces_unassigned ON faces(org_id) WHERE person_id IS NULL;
`;
