/**
 * Whether a bucket's CORS rules let the dashboard upload to it from the browser: a PUT from the
 * page's origin carrying the headers a signed upload sets, whose ETag answer the page can read
 * (it confirms each multipart part with it). The rule a site applies is `BROWSER_UPLOAD_RULE`.
 */

/** One CORS rule as S3 answers GetBucketCors (every list optional). */
export interface CorsRule {
  AllowedOrigins?: string[];
  AllowedMethods?: string[];
  AllowedHeaders?: string[];
  ExposeHeaders?: string[];
}

/** The headers a browser sends with the dashboard's signed PUTs (single-shot ones carry the checksum). */
const UPLOAD_HEADERS = ["content-type", "x-amz-checksum-sha256"];

/** What the README tells a site to apply (origins narrowed to its public URL). */
export const BROWSER_UPLOAD_RULE: Required<CorsRule> = {
  AllowedOrigins: ["*"],
  AllowedMethods: ["GET", "HEAD", "PUT"],
  AllowedHeaders: ["*"],
  ExposeHeaders: ["ETag"],
};

/** S3's origin and header patterns hold at most one `*`, matching any run of characters. */
function matches(pattern: string, value: string): boolean {
  const star = pattern.indexOf("*");
  if (star < 0) return pattern.toLowerCase() === value.toLowerCase();
  const head = pattern.slice(0, star).toLowerCase();
  const tail = pattern.slice(star + 1).toLowerCase();
  const v = value.toLowerCase();
  return v.length >= head.length + tail.length && v.startsWith(head) && v.endsWith(tail);
}

/**
 * What `rules` lack for a page at `pageOrigin` (null: any origin, so only `*` will do) to upload,
 * as a sentence for the administrator; null when one rule allows it all.
 */
export function browserUploadGap(rules: CorsRule[], pageOrigin: string | null): string | null {
  const who = pageOrigin ?? "every origin (no --public-url is set)";
  const allowsOrigin = (r: CorsRule) => (r.AllowedOrigins ?? []).some((o) => o === "*" || (pageOrigin !== null && matches(o, pageOrigin)));
  const forOrigin = rules.filter(allowsOrigin);
  if (forOrigin.length === 0) return `no CORS rule of the bucket allows ${who}`;
  const puts = forOrigin.filter((r) => (r.AllowedMethods ?? []).some((m) => m.toUpperCase() === "PUT"));
  if (puts.length === 0) return `the bucket's CORS rules for ${who} do not allow PUT`;
  const withHeaders = puts.filter((r) => UPLOAD_HEADERS.every((h) => (r.AllowedHeaders ?? []).some((p) => matches(p, h))));
  if (withHeaders.length === 0) return `the bucket's CORS rules for ${who} do not allow the headers ${UPLOAD_HEADERS.join(", ")}`;
  if (!withHeaders.some((r) => (r.ExposeHeaders ?? []).some((h) => h.toLowerCase() === "etag"))) return `the bucket's CORS rules for ${who} do not expose the ETag header`;
  return null;
}
