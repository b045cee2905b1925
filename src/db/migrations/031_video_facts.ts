// What probing a video found moves out of the files row into the video kind's own table
// (src/video/video-facts.ts owns it); the row keeps identity, placement, blob and status.
// Width, height and the capture date stay on the row: images have them too.
export default `
CREATE TABLE video_facts (
  file_id TEXT PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
  duration_seconds REAL,
  frame_rate REAL,
  codec TEXT,
  container TEXT,
  has_audio INTEGER,
  bit_rate INTEGER
);
INSERT INTO video_facts (file_id, duration_seconds, frame_rate, codec, container, has_audio, bit_rate)
  SELECT id, duration_seconds, frame_rate, video_codec, video_container, has_audio, bit_rate FROM files
  WHERE duration_seconds IS NOT NULL OR frame_rate IS NOT NULL OR video_codec IS NOT NULL OR video_container IS NOT NULL
     OR has_audio IS NOT NULL OR bit_rate IS NOT NULL;
ALTER TABLE files DROP COLUMN duration_seconds;
ALTER TABLE files DROP COLUMN frame_rate;
ALTER TABLE files DROP COLUMN video_codec;
ALTER TABLE files DROP COLUMN video_container;
ALTER TABLE files DROP COLUMN has_audio;
ALTER TABLE files DROP COLUMN bit_rate;
`;
