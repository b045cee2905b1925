// What the camera recorded about a photo or video (src/camera/camera-facts.ts), one row per file
// that recorded anything beyond a date, kept apart from the files row (per-kind facts get their
// own table). The place names are the offline gazetteer's, filled when the row is written. The
// partial index serves the map and the bounding-box filter; the camera index the camera filter.
export default `
CREATE TABLE camera_facts (
  file_id TEXT PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
  org_id TEXT NOT NULL,
  make TEXT,
  model TEXT,
  lens TEXT,
  focal_length_mm REAL,
  focal_length_35mm REAL,
  f_number REAL,
  exposure_seconds REAL,
  iso INTEGER,
  orientation INTEGER,
  taken_at TEXT,
  taken_at_offset TEXT,
  taken_at_source TEXT,
  latitude REAL,
  longitude REAL,
  altitude_m REAL,
  country_code TEXT,
  country TEXT,
  region TEXT,
  city TEXT
);
CREATE INDEX camera_facts_located ON camera_facts(org_id, latitude, longitude) WHERE latitude IS NOT NULL;
CREATE INDEX camera_facts_camera ON camera_facts(org_id, make, model);
`;
