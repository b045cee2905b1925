/**
 * How a user-supplied blob may be served so it can never run script in the appliance's origin.
 * One policy, applied twice: the presigner signs only safe `response-content-type` and
 * `response-content-disposition` values (which is all S3 can be told per request), and the
 * local S3 endpoint enforces the same policy again on whatever a signed URL asks for, adding the
 * headers S3 cannot set per request (nosniff and a sandboxing CSP).
 *
 * - Inline-safe types (raster images, PDF, audio, video, plain text): served as they are.
 * - Inert download types (Office documents, octet-stream): served as they are, as attachments.
 * - Everything else (SVG, HTML, XML, script, anything unknown): served as
 *   `application/octet-stream`, as an attachment.
 */

/** Types a browser shows without running anything in them. */
const INLINE_SAFE = /^(?:image\/(?:jpeg|png|gif|webp|avif|bmp|tiff|heic|heif)|application\/pdf|video\/[\w.+-]+|audio\/[\w.+-]+|text\/(?:plain|markdown|csv))$/;

/** Types no browser renders, which keep their name so the download opens in the right program. */
const INERT_DOWNLOAD = /^(?:application\/octet-stream|application\/vnd\.openxmlformats-officedocument\.[\w.+-]+)$/;

export const OPAQUE_TYPE = "application/octet-stream";

/**
 * On every blob response of the local endpoint. `sandbox` gives a document opened from a blob
 * URL an opaque origin with no script; `default-src 'none'` stops anything it would load, while
 * an image, video or audio document can still show itself ('self'), and nosniff keeps browsers
 * from guessing an active type from the bytes.
 */
export const BLOB_RESPONSE_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; sandbox",
};

/** The MIME essence (`type/subtype`, lower case), or null when the value is not one. */
function essence(contentType: string | null | undefined): string | null {
  const value = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(value) ? value : null;
}

/** A header value the endpoint may echo: printable ASCII only (no CR/LF, nothing to inject). */
const PRINTABLE = /^[\x20-\x7e]*$/;

/** True when a blob of this type may be displayed inline. */
export function isInlineSafe(contentType: string | null | undefined): boolean {
  const type = essence(contentType);
  return type !== null && INLINE_SAFE.test(type);
}

/** The Content-Type to serve a blob stored (or asked for) as `contentType`. */
export function servedContentType(contentType: string | null | undefined): string {
  const type = essence(contentType);
  if (type === null || !PRINTABLE.test(contentType!)) return OPAQUE_TYPE;
  if (INLINE_SAFE.test(type) || INERT_DOWNLOAD.test(type)) return contentType!.trim();
  return OPAQUE_TYPE;
}

/**
 * The Content-Disposition to serve with `servedType`, given the one asked for (or null). Types
 * that are not inline-safe are always attachments: an `inline` request keeps its file name
 * parameters but becomes `attachment`.
 */
export function servedDisposition(servedType: string, requested: string | null | undefined): string | null {
  const asked = requested && PRINTABLE.test(requested) ? requested.trim() : null;
  if (isInlineSafe(servedType)) return asked;
  if (!asked) return "attachment";
  const params = asked.replace(/^[^;]*/, "");
  return `attachment${params}`;
}
