/**
 * The `Content-Disposition: attachment` header of a download (RFC 6266): an ASCII `filename`
 * fallback plus the UTF-8 `filename*`. The name is bounded because the header travels inside a
 * signed URL's query (`response-content-disposition`), percent-encoded twice: a 2,000-character
 * name made URLs of tens of kilobytes that servers refuse (431). Long names are cut on a
 * character boundary, keeping the extension, with an ellipsis where the cut is.
 */

/** UTF-8 bytes of the name at most (about 1 KB once encoded into a URL query). */
export const MAX_DOWNLOAD_NAME_BYTES = 100;

const ELLIPSIS = "…";
const encoder = new TextEncoder();
const utf8Length = (s: string) => encoder.encode(s).byteLength;

/** `filename` shortened to MAX_DOWNLOAD_NAME_BYTES of UTF-8, extension kept, never splitting a character. */
export function boundedFilename(filename: string): string {
  // A lone surrogate (possible in a JSON string) would make encodeURIComponent throw.
  const name = filename.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
  if (utf8Length(name) <= MAX_DOWNLOAD_NAME_BYTES) return name;
  const dot = name.lastIndexOf(".");
  const extension = dot > 0 && name.length - dot <= 16 && /^\.[\p{L}\p{N}_-]+$/u.test(name.slice(dot)) ? name.slice(dot) : "";
  const stem = extension ? name.slice(0, dot) : name;
  let budget = MAX_DOWNLOAD_NAME_BYTES - utf8Length(extension) - utf8Length(ELLIPSIS);
  let kept = "";
  // Whole user-perceived characters, so an accent or an emoji sequence is never cut in half.
  for (const { segment } of new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(stem)) {
    budget -= utf8Length(segment);
    if (budget < 0) break;
    kept += segment;
  }
  return kept + ELLIPSIS + extension;
}

/** RFC 8187 value characters: encodeURIComponent leaves `'()*` unescaped, which the ABNF does not allow. */
function encodeExtValue(s: string): string {
  return encodeURIComponent(s).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function attachmentDisposition(filename: string): string {
  const name = boundedFilename(filename);
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeExtValue(name)}`;
}
