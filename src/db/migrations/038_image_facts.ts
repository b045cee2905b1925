// An image's rendering (its variants' state and count, the BlurHash) and the model of its image
// embedding move out of the files row into the image kind's own table (src/images/image-facts.ts
// owns it); a video's poster is rendered by the same code, so videos have a row too. A video's
// analysis state moves into video_facts beside its probe. The row keeps identity, placement, blob
// and status (width, height and format stay: they are the file's content, as the capture date is).
export default `
CREATE TABLE image_facts (
  file_id TEXT PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
  variant_status TEXT,
  variant_count INTEGER NOT NULL DEFAULT 0,
  blur_hash TEXT,
  embedding_model TEXT
);
INSERT INTO image_facts (file_id, variant_status, variant_count, blur_hash, embedding_model)
  SELECT id, variant_status, variant_count, blur_hash, image_embedding_model FROM files
  WHERE variant_status IS NOT NULL OR variant_count <> 0 OR blur_hash IS NOT NULL OR image_embedding_model IS NOT NULL;
ALTER TABLE video_facts ADD COLUMN analysis_status TEXT;
ALTER TABLE video_facts ADD COLUMN analysis_error TEXT;
UPDATE video_facts SET
  analysis_status = (SELECT f.analysis_status FROM files f WHERE f.id = video_facts.file_id),
  analysis_error = (SELECT f.analysis_error FROM files f WHERE f.id = video_facts.file_id);
INSERT INTO video_facts (file_id, analysis_status, analysis_error)
  SELECT id, analysis_status, analysis_error FROM files
  WHERE (analysis_status IS NOT NULL OR analysis_error IS NOT NULL) AND id NOT IN (SELECT file_id FROM video_facts);
ALTER TABLE files DROP COLUMN variant_status;
ALTER TABLE files DROP COLUMN variant_count;
ALTER TABLE files DROP COLUMN blur_hash;
ALTER TABLE files DROP COLUMN image_embedding_model;
ALTER TABLE files DROP COLUMN analysis_status;
ALTER TABLE files DROP COLUMN analysis_error;
`;
