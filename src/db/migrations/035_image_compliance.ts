// A listing photo's compliance request (the standard, the kind of check, the photo's role) and
// its verdict move out of the files row into a table of their own (compliance/image-compliance.ts
// owns it); only images asked for a check have a row.
export default `
CREATE TABLE image_compliance (
  file_id TEXT PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  standard TEXT NOT NULL,
  image_type TEXT,
  status TEXT
);
CREATE INDEX image_compliance_status ON image_compliance(status) WHERE status IS NOT NULL;
INSERT INTO image_compliance (file_id, type, standard, image_type, status)
  SELECT id, compliance_type, compliance_standard, compliance_image_type, compliance_status FROM files
  WHERE compliance_type IS NOT NULL AND compliance_standard IS NOT NULL;
ALTER TABLE files DROP COLUMN compliance_type;
ALTER TABLE files DROP COLUMN compliance_standard;
ALTER TABLE files DROP COLUMN compliance_image_type;
ALTER TABLE files DROP COLUMN compliance_status;
`;
