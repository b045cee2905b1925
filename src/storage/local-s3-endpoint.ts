/**
 * The appliance's own S3-compatible endpoint for local storage: it is what local presigned
 * URLs point at. Supports exactly what those URLs are for: PUT of a whole object (verifying
 * x-amz-checksum-sha256 when signed), PUT of a multipart part (answering its ETag), and
 * GET/HEAD of an object. Every request must carry a valid, unexpired SigV4 query signature made
 * with the local secret, over every header it signs (Content-Type included); anything else is
 * 403 with an S3-style XML error. Blobs are user-supplied and served from the API's own origin,
 * so every answer is made inert by serving-policy.ts whatever the signed URL asks for.
 */
import { Sha256 } from "@aws-crypto/sha256-js";
import { HttpRequest } from "@smithy/protocol-http";
import { SignatureV4 } from "@smithy/signature-v4";
import { Elysia } from "elysia";
import { timingSafeEqual } from "node:crypto";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import { SizeLimitError } from "./disk.ts";
import type { LocalEndpoint } from "./capabilities.ts";
import { LOCAL_BUCKET, LOCAL_S3_PATH, LocalStoreError } from "./local-store.ts";
import { BLOB_RESPONSE_HEADERS, servedContentType, servedDisposition } from "./serving-policy.ts";

const MAX_OBJECT_BYTES = 5 * 1024 ** 3;
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;
/** Clock skew tolerated for a URL signed "in the future". */
const SKEW_MS = 15 * 60 * 1000;

class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function xmlEscape(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function errorResponse(err: S3Error, resource: string): Response {
  const body =
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${err.code}</Code><Message>${xmlEscape(err.message)}</Message>` +
    `<Resource>${xmlEscape(resource)}</Resource></Error>`;
  return new Response(body, { status: err.status, headers: { ...BLOB_RESPONSE_HEADERS, "content-type": "application/xml" } });
}

function parseAmzDate(raw: string | null): number {
  const m = raw ? /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(raw) : null;
  if (!m) throw new S3Error(403, "AuthorizationQueryParametersError", "X-Amz-Date must be in the ISO8601 basic format");
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
}

export class SigV4QueryVerifier {
  constructor(
    private readonly credentials: { accessKeyId: string; secretAccessKey: string },
    private readonly clock: Clock,
  ) {}

  /** Throws S3Error(403) unless the URL's query signature is valid for this request and unexpired. */
  async verify(request: Request, url: URL, hosts: string[]): Promise<void> {
    const q = url.searchParams;
    const given = q.get("X-Amz-Signature");
    if (q.get("X-Amz-Algorithm") !== "AWS4-HMAC-SHA256" || !given) {
      throw new S3Error(403, "AccessDenied", "a SigV4 presigned URL is required (X-Amz-Algorithm AWS4-HMAC-SHA256 with X-Amz-Signature)");
    }
    const [accessKeyId, , region, service] = (q.get("X-Amz-Credential") ?? "").split("/");
    if (accessKeyId !== this.credentials.accessKeyId || service !== "s3" || !region) {
      throw new S3Error(403, "InvalidAccessKeyId", "the access key in X-Amz-Credential is not known here");
    }
    const signedAt = parseAmzDate(q.get("X-Amz-Date"));
    const expires = Number(q.get("X-Amz-Expires"));
    if (!Number.isInteger(expires) || expires < 1 || expires > MAX_PRESIGN_SECONDS) {
      throw new S3Error(403, "AuthorizationQueryParametersError", "X-Amz-Expires must be an integer from 1 to 604800");
    }
    const now = this.clock.now();
    if (now > signedAt + expires * 1000) throw new S3Error(403, "AccessDenied", "Request has expired");
    if (signedAt > now + SKEW_MS) throw new S3Error(403, "AccessDenied", "Request is not yet valid");

    const signedHeaders = (q.get("X-Amz-SignedHeaders") ?? "").split(";").filter(Boolean);
    if (!signedHeaders.includes("host")) throw new S3Error(403, "AccessDenied", "the host header must be signed");
    const query: Record<string, string> = {};
    for (const [k, v] of q) if (k !== "X-Amz-Signature" && k !== "X-Amz-Content-Sha256") query[k] = v;
    const headers: Record<string, string> = {};
    for (const name of signedHeaders) {
      if (name === "host") continue;
      const value = request.headers.get(name);
      // As on S3: a signed header the request lacks (a PUT without its signed Content-Type) fails the signature.
      if (value === null) throw new S3Error(403, "SignatureDoesNotMatch", `the signed header ${name} is missing from the request`);
      headers[name] = value;
    }
    // The AWS presigner signs this as a header named exactly so, then hoists it into the query.
    const payload = q.get("X-Amz-Content-Sha256");
    if (payload) headers["X-Amz-Content-Sha256"] = payload;

    const signer = new SignatureV4({ credentials: this.credentials, region, service: "s3", sha256: Sha256, uriEscapePath: false });
    const unhoistable = new Set(signedHeaders.filter((h) => h !== "host"));
    for (const host of new Set(hosts)) {
      const candidate = new HttpRequest({
        method: request.method === "HEAD" ? "GET" : request.method,
        protocol: url.protocol,
        hostname: host,
        path: url.pathname,
        query,
        headers: { ...headers, host },
      });
      const signed = await signer.presign(candidate, {
        signingDate: new Date(signedAt),
        expiresIn: expires,
        unhoistableHeaders: unhoistable,
        signableHeaders: new Set(signedHeaders),
      });
      const expected = String(signed.query?.["X-Amz-Signature"] ?? "");
      if (expected.length === given.length && timingSafeEqual(Buffer.from(expected), Buffer.from(given))) return;
    }
    throw new S3Error(403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided");
  }
}

async function* bodyOf(request: Request): AsyncIterable<Uint8Array> {
  if (request.body) yield* request.body;
}

/**
 * Serves one object, honouring a single `Range: bytes=a-b`. The signed URL's
 * `response-content-type` and `response-content-disposition` are only requests: an active type
 * is served as an opaque attachment, and every answer carries nosniff and a sandboxing CSP.
 */
function serveObject(path: string, request: Request, url: URL): Response {
  const file = Bun.file(path);
  const size = file.size;
  const type = servedContentType(url.searchParams.get("response-content-type"));
  const headers: Record<string, string> = { ...BLOB_RESPONSE_HEADERS, "accept-ranges": "bytes", "content-type": type };
  const disposition = servedDisposition(type, url.searchParams.get("response-content-disposition"));
  if (disposition) headers["content-disposition"] = disposition;
  const range = /^bytes=(\d*)-(\d*)$/.exec(request.headers.get("range") ?? "");
  if (range && (range[1] || range[2])) {
    let start = range[1] ? Number(range[1]) : Math.max(0, size - Number(range[2]));
    let end = range[1] && range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
    if (start >= size || start > end) {
      return new Response(null, { status: 416, headers: { ...BLOB_RESPONSE_HEADERS, "content-range": `bytes */${size}` } });
    }
    headers["content-range"] = `bytes ${start}-${end}/${size}`;
    headers["content-length"] = String(end - start + 1);
    return new Response(request.method === "HEAD" ? null : file.slice(start, end + 1), { status: 206, headers });
  }
  headers["content-length"] = String(size);
  return new Response(request.method === "HEAD" ? null : file, { status: 200, headers });
}

/** The object key of a request path; an escape that is not UTF-8 ("%FF") is S3's 400 InvalidURI (a URIError here was a 500). */
function objectKey(escaped: string): string {
  try {
    return decodeURIComponent(escaped);
  } catch {
    throw new S3Error(400, "InvalidURI", "Couldn't parse the specified URI.");
  }
}

export function localS3Routes(store: LocalEndpoint, clock: Clock, publicUrl: string | null, log: Logger) {
  const verifier = new SigV4QueryVerifier(store.credentials, clock);
  const publicHost = publicUrl ? new URL(publicUrl).host : null;

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const resource = url.pathname;
    try {
      const prefix = `${LOCAL_S3_PATH}/${LOCAL_BUCKET}/`;
      if (!url.pathname.startsWith(prefix)) throw new S3Error(404, "NoSuchBucket", "The specified bucket does not exist");
      const key = objectKey(url.pathname.slice(prefix.length));
      const hosts = [request.headers.get("host") ?? url.host, ...(publicHost ? [publicHost] : [])];
      await verifier.verify(request, url, hosts);

      if (request.method === "GET" || request.method === "HEAD") {
        const size = await store.size(key);
        if (size === null) throw new S3Error(404, "NoSuchKey", "The specified key does not exist.");
        return serveObject(store.pathOf(key), request, url);
      }
      if (request.method !== "PUT") throw new S3Error(405, "MethodNotAllowed", "only GET, HEAD and PUT are supported here");

      const declared = Number(request.headers.get("content-length") ?? NaN);
      if (declared > MAX_OBJECT_BYTES) throw new S3Error(400, "EntityTooLarge", "objects and parts are limited to 5 GB");
      const partNumber = url.searchParams.get("partNumber");
      const uploadId = url.searchParams.get("uploadId");
      if (partNumber !== null || uploadId !== null) {
        const n = Number(partNumber);
        if (!uploadId || !Number.isInteger(n) || n < 1 || n > 10_000) {
          throw new S3Error(400, "InvalidArgument", "partNumber must be an integer from 1 to 10000 and uploadId is required");
        }
        const part = await store.putPart(key, uploadId, n, bodyOf(request));
        return new Response(null, { status: 200, headers: { etag: part.etag } });
      }

      const checksum = request.headers.get("x-amz-checksum-sha256");
      const written = await store.putObject(key, bodyOf(request), MAX_OBJECT_BYTES, checksum);
      return new Response(null, {
        status: 200,
        headers: { etag: `"${written.md5}"`, ...(checksum ? { "x-amz-checksum-sha256": checksum } : {}) },
      });
    } catch (err) {
      if (err instanceof S3Error) return errorResponse(err, resource);
      if (err instanceof SizeLimitError) return errorResponse(new S3Error(400, "EntityTooLarge", "objects and parts are limited to 5 GB"), resource);
      if (err instanceof LocalStoreError) {
        const status = err.code === "NoSuchKey" || err.code === "NoSuchUpload" ? 404 : 400;
        return errorResponse(new S3Error(status, err.code, err.message), resource);
      }
      if (request.signal.aborted) {
        // The client went away mid-body; the store already removed what it had written.
        log.info("client disconnected mid-request", { method: request.method, path: resource });
        return errorResponse(new S3Error(400, "IncompleteBody", "The request body terminated unexpectedly"), resource);
      }
      log.error("local S3 endpoint failed", { error: String(err), path: resource });
      return errorResponse(new S3Error(500, "InternalError", "We encountered an internal error. Please try again."), resource);
    }
  }

  return new Elysia({ name: "local-s3-endpoint" })
    .get(`${LOCAL_S3_PATH}/*`, ({ request }) => handle(request), { detail: { hide: true } })
    .head(`${LOCAL_S3_PATH}/*`, ({ request }) => handle(request), { detail: { hide: true } })
    .put(`${LOCAL_S3_PATH}/*`, ({ request }) => handle(request), { parse: "none", detail: { hide: true } });
}

