// Links, as crawled: when the page was last read and what its stored icon is, and the images a
// page showed, in page order. An image seen on several pages (or uploaded already) is one file
// with several rows here; `parent_file_id` on the image names the link that first brought it.
export default `
ALTER TABLE files ADD COLUMN crawled_at TEXT;
ALTER TABLE files ADD COLUMN favicon_content_type TEXT;

CREATE TABLE link_images (
  link_file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  image_file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  source_url TEXT NOT NULL,
  PRIMARY KEY (link_file_id, position)
) WITHOUT ROWID;
CREATE INDEX link_images_image ON link_images(image_file_id);
`;
