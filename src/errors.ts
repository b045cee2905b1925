/**
 * The one error type of the API and its catalogue. Domain code throws `new ApiError(code,
 * detail)`; the HTTP layer turns it into `{"detail": "...", "code": "..."}` with the status the
 * catalogue gives the code. Each code is declared once, here: its status never varies from one
 * call to the next, and the README's error table is generated from this object
 * (`bun scripts/error-table.ts`; test/errors-catalogue.test.ts fails when they differ).
 * Codes the spec names are used verbatim with the spec's status; the others are Mediabox's own.
 */
export const ERRORS = {
  // 400
  VALIDATION_ERROR: { status: 400, meaning: "a body, query, path parameter or form field breaks its rule (the detail names the field); bad JSON" },
  MALFORMED_MULTIPART: { status: 400, meaning: "a multipart body that cannot be parsed, or that ends before its closing boundary (a truncated upload; nothing of it is kept)" },
  BATCH_TOO_LARGE: { status: 400, meaning: "more files than the tier's batch size" },
  SESSION_FINISHED: { status: 400, meaning: "cancel of an upload session that has already finished" },
  WRONG_MEDIA_TYPE: { status: 400, meaning: "the file is not of a media type this endpoint handles (e.g. a document sent to an image endpoint)" },
  INVALID_DOMAIN: { status: 400, meaning: "review of an extraction domain that is not reviewable" },
  CUSTOM_SCHEMA_INVALID_SCHEMA: { status: 400, meaning: "custom schema too deep or too large, unsupported types or keywords, empty (spec)" },
  CUSTOM_SCHEMA_INVALID_NAME: { status: 400, meaning: "custom schema name blank, over 255 characters or with control characters (spec)" },
  CUSTOM_SCHEMA_INVALID_DESCRIPTION: { status: 400, meaning: "custom schema description over 1000 characters (spec)" },
  CUSTOM_SCHEMA_INVALID_PROMPT_HINT: { status: 400, meaning: "custom schema prompt_hint over 2000 characters (spec)" },
  CUSTOM_SCHEMA_NAME_EXISTS: { status: 400, meaning: "the organization already has a custom schema of that name (spec; 400 is the spec's status)" },
  // 401, 403
  UNAUTHENTICATED: { status: 401, meaning: "API key missing, malformed, unknown or revoked (with WWW-Authenticate: Bearer)" },
  PERMISSION_DENIED: { status: 403, meaning: "the API key lacks the permission the endpoint needs" },
  // 404
  NOT_FOUND: { status: 404, meaning: "no such route, or no such sub-resource (a document page without digitization)" },
  PROJECT_NOT_FOUND: { status: 404, meaning: "project id not in the organization (spec)" },
  FOLDER_NOT_FOUND: { status: 404, meaning: "folder id not in the organization" },
  JOB_NOT_FOUND: { status: 404, meaning: "job id not in the organization" },
  SESSION_NOT_FOUND: { status: 404, meaning: "upload session id not in the organization" },
  FILE_NOT_FOUND: { status: 404, meaning: "file id (or 8-character prefix) not in the organization; also deleted files" },
  UPLOAD_NOT_FOUND: { status: 404, meaning: "upload intent id not in the organization" },
  CUSTOM_SCHEMA_NOT_FOUND: { status: 404, meaning: "custom schema id not in the organization (spec)" },
  EXTRACTION_NOT_FOUND: { status: 404, meaning: "the file has no extraction of that domain" },
  VARIANT_NOT_READY: { status: 404, meaning: "the image variant has not been rendered yet" },
  NOT_AVAILABLE: { status: 404, meaning: "the Datasets API (not yet available)" },
  // 409
  PROJECT_NAME_EXISTS: { status: 409, meaning: "project name already used, compared case-insensitively (spec)" },
  PROJECT_LIMIT_REACHED: { status: 409, meaning: "the organization already has 50 projects (spec)" },
  PROJECT_NOT_EMPTY: { status: 409, meaning: "delete of a project holding folders or files (spec)" },
  FOLDER_NAME_EXISTS: { status: 409, meaning: "a sibling folder has that name, compared case-insensitively" },
  FOLDER_NOT_EMPTY: { status: 409, meaning: "delete of a folder holding folders or files" },
  JOB_FINISHED: { status: 409, meaning: "cancel of a job that has already finished" },
  UPLOAD_HASH_MISMATCH: { status: 409, meaning: "the uploaded bytes differ from claimed_file_hash or size_bytes (the upload is discarded)" },
  UPLOAD_STATE_CONFLICT: { status: 409, meaning: "intent finished, part not in the store, ETag differs, nothing uploaded yet, completion in progress" },
  IDEMPOTENCY_KEY_REUSED: { status: 409, meaning: "idempotency_key already names an upload of a different file" },
  FILE_ID_AMBIGUOUS: { status: 409, meaning: "an 8-character id prefix shared by several files" },
  FILE_BUSY: { status: 409, meaning: "delete while a document's text extraction runs" },
  FILE_NOT_DELETED: { status: 409, meaning: "restore of a file that is not deleted" },
  EMBEDDING_NOT_READY: { status: 409, meaning: "similar images asked before the image's embedding exists" },
  // 410, 413, 415
  UPLOAD_EXPIRED: { status: 410, meaning: "upload intent past its expiry" },
  PAYLOAD_TOO_LARGE: { status: 413, meaning: "JSON request body over 1 MiB, multipart body over its limit (batch payload over 2 GB)" },
  FILE_TOO_LARGE: { status: 413, meaning: "streamed file over 100 MB or document over 50 MB (use POST /files/uploads), intent over 5 TiB" },
  UNSUPPORTED_CONTENT_TYPE: { status: 415, meaning: "an upload endpoint was sent something other than multipart/form-data" },
  UNSUPPORTED_FILE_TYPE: { status: 415, meaning: "the file's content is not a supported type, or is unsafe (see below)" },
  // 422
  BUSINESS_RULE_VIOLATION: { status: 422, meaning: "rename or delete of the Default project (spec), folder moved into itself" },
  FOLDER_DEPTH_EXCEEDED: { status: 422, meaning: "folders nested more than 20 levels deep" },
  UPLOAD_PARTS_MISSING: { status: 422, meaning: "multipart completion with unconfirmed parts, or parts the store refused" },
  // 429, 431
  RATE_LIMITED: { status: 429, meaning: "a rate limit is exhausted (see Limits; with Retry-After)" },
  UPLOAD_BACKPRESSURE: { status: 429, meaning: "the organization already has its tier's number of concurrent uploads in flight (FREE 10, STARTER 20, PROFESSIONAL 30, ENTERPRISE 50; with Retry-After)" },
  HEADERS_TOO_LARGE: { status: 431, meaning: "request line and headers over 16 KiB (a long query string or cookie); heads over 64 KiB get Bun's own 431 without a body (see Honest limits)" },
  // Never seen by a client, or the last resort
  CLIENT_DISCONNECTED: { status: 499, meaning: "the client closed the connection mid-request; nobody receives the answer, the server logs it (nginx's 499)" },
  INTERNAL_ERROR: { status: 500, meaning: "an unexpected failure; logged, never with a stack trace in the answer" },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERRORS;

export class ApiError extends Error {
  /** The catalogue's status for the code. */
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    /** Extra response headers (Retry-After on 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = "ApiError";
    this.status = ERRORS[code].status;
  }

  toBody(): { detail: string; code: ErrorCode } {
    return { detail: this.detail, code: this.code };
  }
}

/**
 * The client went away before its request was read. Nobody receives the answer (status 499, as
 * nginx logs it); the error exists so the request's work stops and is logged as what it was.
 */
export class ClientDisconnectedError extends ApiError {
  constructor() {
    super("CLIENT_DISCONNECTED", "the client closed the connection before the request body was complete");
  }
}

/** The common refusal: `VALIDATION_ERROR` with a detail that names the field and its rule. */
export const badRequest = (detail: string) => new ApiError("VALIDATION_ERROR", detail);

/** The message of anything thrown (libraries also throw strings and plain objects). */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err && typeof err === "object" && "message" in err) return String((err as { message: unknown }).message);
  return String(err);
}
