// Pictures of PDF pages drawn on demand (GET .../digitization/pages/{n}/image), one blob per page
// and width; the rows let the purge find and delete every blob a file accumulated.
export default `
CREATE TABLE document_page_images (
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  page_number INTEGER NOT NULL,
  width INTEGER NOT NULL,
  blob_key TEXT NOT NULL,
  image_width INTEGER NOT NULL,
  image_height INTEGER NOT NULL,
  size_bytes INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (file_id, page_number, width)
) WITHOUT ROWID;
`;
