// Keyphrases a document's summary found, kept as suggestions the user accepts (as tags) or
// dismisses, rather than written into its tags (files/tag-suggestions.ts).
export default `
CREATE TABLE tag_suggestions (
  file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  phrase TEXT NOT NULL,
  rank INTEGER NOT NULL,
  dismissed INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (file_id, phrase)
);
`;
