// Near-duplicates compare crop-tolerantly (the hash of an image's central 90 %) and confirm looser
// hash matches by the correlation of 32 × 32 grey thumbnails (src/duplicates/fingerprint.ts).
// Images fingerprinted before have neither until reprocessed: they are compared by the whole
// image's hash alone.
export default `
ALTER TABLE image_fingerprints ADD COLUMN phash_center TEXT;
ALTER TABLE image_fingerprints ADD COLUMN thumb BLOB;
`;
