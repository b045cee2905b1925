// What the image detectors found (objects, faces, people) and the dominant colours, kept after
// the analysis: rules count people with them and a rule's custom schema is filled from them
// long after the pipeline ran (images/image-findings.ts).
export default `
CREATE TABLE image_findings (
  file_id TEXT PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
  objects TEXT NOT NULL,
  faces INTEGER NOT NULL,
  people INTEGER NOT NULL,
  colours TEXT NOT NULL,
  found_at TEXT NOT NULL
);
`;
