/**
 * The one error type of the API and its catalogue. Domain code throws `new ApiError(code,
 * detail)`; the HTTP layer turns it into `{"detail": "...", "code": "..."}` with the status the
 * catalogue gives the code. Each code is declared once, here: its status never varies from one
 * call to the next, and docs/errors.md's error table is generated from this object
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
  INVALID_LINK_URL: { status: 400, meaning: "a link URL that is not an absolute http(s) URL with a host, carries credentials or is longer than 2048 characters (the detail says which)" },
  OAUTH_STATE_INVALID: { status: 400, meaning: "cloud OAuth callback with a state that is unknown (forged), already used, expired, of another provider, or started by another organization or key" },
  OAUTH_PROVIDER_ERROR: { status: 400, meaning: "the cloud provider ended the authorization with an error (consent denied) or refused the code exchange (bad code, PKCE verifier mismatch)" },
  CLOUD_NOT_SUPPORTED: { status: 400, meaning: "the cloud provider lacks what the request needs (a picker for nextcloud, hosted spreadsheets without a connection)" },
  INVALID_WEBHOOK_URL: { status: 400, meaning: "a webhook URL that is not an absolute http(s) URL, carries credentials, names a port outside MEDIABOX_WEBHOOK_PORTS or an address webhooks may not reach (loopback, private, ... unless in MEDIABOX_WEBHOOK_ALLOW_CIDRS)" },
  INVALID_DOMAIN: { status: 400, meaning: "review of an extraction domain that is not reviewable" },
  CUSTOM_SCHEMA_INVALID_SCHEMA: { status: 400, meaning: "custom schema too deep or too large, unsupported types or keywords, empty (spec)" },
  CUSTOM_SCHEMA_INVALID_NAME: { status: 400, meaning: "custom schema name blank, over 255 characters or with control characters (spec)" },
  CUSTOM_SCHEMA_INVALID_DESCRIPTION: { status: 400, meaning: "custom schema description over 1000 characters (spec)" },
  CUSTOM_SCHEMA_INVALID_PROMPT_HINT: { status: 400, meaning: "custom schema prompt_hint over 2000 characters (spec)" },
  CUSTOM_SCHEMA_NAME_EXISTS: { status: 400, meaning: "the organization already has a custom schema of that name (spec; 400 is the spec's status)" },
  PASSWORD_REJECTED: { status: 400, meaning: "a new password shorter than 10 or longer than 256 characters, among the commonly used and breached ones, or made of the email address" },
  TOKEN_INVALID: { status: 400, meaning: "a mailed token (verification, password reset, invitation) that is unknown, already used or expired" },
  // 401, 403
  PICKER_ENDPOINT_FORBIDDEN: { status: 403, meaning: "picker proxy call to an endpoint outside files, files/{id}, files/{id}/export and about" },
  UNAUTHENTICATED: { status: 401, meaning: "API key missing, malformed, unknown or revoked (with WWW-Authenticate: Bearer), or a session cookie missing, expired or signed out" },
  INVALID_CREDENTIALS: { status: 401, meaning: "sign-in with an email and password that do not match an active account (the same answer whichever is wrong)" },
  WEBHOOK_SIGNATURE_INVALID: { status: 401, meaning: "a payment webhook without a valid signature for its timestamp and body, or signed outside the tolerance window" },
  PERMISSION_DENIED: { status: 403, meaning: "the API key or the session's role lacks the permission the endpoint needs" },
  CSRF_FAILED: { status: 403, meaning: "a cookie-authenticated write without the session's X-CSRF-Token header, or a sign-in request from another site's Origin" },
  SESSION_REQUIRED: { status: 403, meaning: "an account endpoint called with an API key: only a dashboard session may manage users, sessions and keys" },
  EMAIL_NOT_VERIFIED: { status: 403, meaning: "sign-in with the right password to an account whose email address is not verified yet" },
  REGISTRATION_CLOSED: { status: 403, meaning: "self-registration is off (MEDIABOX_ALLOW_REGISTRATION); accounts come from an admin or an invitation" },
  API_KEYS_NOT_IN_TIER: { status: 403, meaning: "API key creation for a FREE organization (the spec's FREE tier has no API key access)" },
  SETUP_TOKEN_REQUIRED: { status: 403, meaning: "the first run's owner asked for from another machine without the setup token the server printed at start (or with a wrong one)" },
  IDENTITY_NOT_LINKED: { status: 403, meaning: "sign-in through the identity provider with an identity no user has linked" },
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
  SNAPSHOT_NOT_READY: { status: 404, meaning: "a link's offline snapshot has not been stored (crawl pending, failed or blocked)" },
  PAGE_NOT_FOUND: { status: 404, meaning: "a document page number past the document's last page" },
  NO_PAGE_IMAGES: { status: 404, meaning: "page image of a document that has no drawn pages: DOCX, TXT and MD have only logical pages, and a PDF not read yet (or that failed) has no known pages" },
  VARIANT_NOT_READY: { status: 404, meaning: "the image variant has not been rendered yet" },
  CLOUD_PROVIDER_NOT_FOUND: { status: 404, meaning: "no cloud provider of that name (google_drive and nextcloud exist)" },
  CLOUD_PROVIDER_NOT_CONFIGURED: { status: 404, meaning: "the cloud provider exists but this appliance has no OAuth client for it (see Cloud storage settings)" },
  CLOUD_CONNECTION_NOT_FOUND: { status: 404, meaning: "cloud connection id not in the organization (or removed)" },
  CLOUD_JOB_NOT_FOUND: { status: 404, meaning: "cloud import/export job id not in the organization" },
  CLOUD_FILE_NOT_FOUND: { status: 404, meaning: "the cloud drive has no such file or folder (or the connection cannot see it)" },
  PICKER_SESSION_NOT_FOUND: { status: 404, meaning: "picker session unknown, expired, of another organization, or its connection was removed" },
  NOT_AVAILABLE: { status: 404, meaning: "the Datasets API (not yet available)" },
  ORGANIZATION_NOT_FOUND: { status: 404, meaning: "organization id the signed-in user is not a member of" },
  MEMBER_NOT_FOUND: { status: 404, meaning: "user id not a member of the session's organization" },
  INVITATION_NOT_FOUND: { status: 404, meaning: "no pending invitation of that address in the organization (accepted, revoked or expired)" },
  API_KEY_NOT_FOUND: { status: 404, meaning: "API key id not in the organization" },
  RULE_NOT_FOUND: { status: 404, meaning: "rule id not in the organization" },
  PERSON_NOT_FOUND: { status: 404, meaning: "person id not in the organization (or merged into another)" },
  FACE_NOT_FOUND: { status: 404, meaning: "face id not in the organization (or its file was reprocessed or purged)" },
  WEBHOOK_NOT_FOUND: { status: 404, meaning: "webhook id not in the organization" },
  WEBHOOK_DELIVERY_NOT_FOUND: { status: 404, meaning: "webhook delivery id not in the organization" },
  MAIL_ACCOUNT_NOT_FOUND: { status: 404, meaning: "mail account id not in the organization" },
  OIDC_NOT_CONFIGURED: { status: 404, meaning: "sign-in through an identity provider (or POST /auth/session/google) when none is configured, or another provider's name" },
  // 409
  PROJECT_NAME_EXISTS: { status: 409, meaning: "project name already used, compared case-insensitively (spec)" },
  PROJECT_LIMIT_REACHED: { status: 409, meaning: "the organization already has 50 projects (spec)" },
  PROJECT_NOT_EMPTY: { status: 409, meaning: "delete of a project holding folders or files (spec)" },
  FOLDER_NAME_EXISTS: { status: 409, meaning: "a sibling folder has that name, compared case-insensitively" },
  RULE_NAME_EXISTS: { status: 409, meaning: "the organization already has a rule of that name, compared case-insensitively" },
  WEBHOOK_DELIVERY_NOT_FAILED: { status: 409, meaning: "retry of a webhook delivery that is still pending or was delivered (only failed ones are retried by hand)" },
  MAIL_ACCOUNT_NAME_EXISTS: { status: 409, meaning: "the organization already has a mail account of that name" },
  FOLDER_NOT_EMPTY: { status: 409, meaning: "delete of a folder holding folders or files" },
  JOB_FINISHED: { status: 409, meaning: "cancel of a job that has already finished" },
  UPLOAD_HASH_MISMATCH: { status: 409, meaning: "the uploaded bytes differ from claimed_file_hash or size_bytes (the upload is discarded)" },
  UPLOAD_STATE_CONFLICT: { status: 409, meaning: "intent finished, part not in the store, ETag differs, nothing uploaded yet, completion in progress" },
  IDEMPOTENCY_KEY_REUSED: { status: 409, meaning: "idempotency_key already names an upload of a different file" },
  FILE_ID_AMBIGUOUS: { status: 409, meaning: "an 8-character id prefix shared by several files" },
  FILE_BUSY: { status: 409, meaning: "delete while a document's text extraction runs" },
  FILE_NOT_DELETED: { status: 409, meaning: "restore of a file that is not deleted" },
  CRAWL_IN_PROGRESS: { status: 409, meaning: "recrawl of a link whose crawl is pending or running" },
  FILE_PROCESSING: { status: 409, meaning: "reprocess of a file whose processing job is queued or running, or of a document whose chunks are being embedded (a link being crawled answers CRAWL_IN_PROGRESS)" },
  FILE_NOT_STORED: { status: 409, meaning: "reprocess of a file whose bytes never arrived (a failed cloud import): import it again" },
  CLOUD_CONNECTION_EXPIRED: { status: 409, meaning: "the cloud provider no longer accepts the connection's grant (revoked or expired refresh token): connect again" },
  EMBEDDING_NOT_READY: { status: 409, meaning: "similar images asked before the image's embedding exists" },
  IDENTITY_ALREADY_LINKED: { status: 409, meaning: "linking an identity another user has linked, or a second identity of the same provider" },
  LAST_SIGN_IN_METHOD: { status: 409, meaning: "unlinking the identity of a user who has no password (they could no longer sign in)" },
  SETUP_COMPLETE: { status: 409, meaning: "the first run's owner asked for when the appliance already has a user" },
  LAST_OWNER: { status: 409, meaning: "demoting or removing an organization's last owner (an organization always keeps one)" },
  // 410, 413, 415
  UPLOAD_EXPIRED: { status: 410, meaning: "upload intent past its expiry" },
  PAYLOAD_TOO_LARGE: { status: 413, meaning: "JSON request body (or any body sent to a route open without credentials) over 1 MiB, multipart body over its limit (batch payload over 2 GB)" },
  FILE_TOO_LARGE: { status: 413, meaning: "streamed file over 100 MB or document over 50 MB (use POST /files/uploads), intent over 5 TiB" },
  UNSUPPORTED_CONTENT_TYPE: { status: 415, meaning: "an upload endpoint was sent something other than multipart/form-data" },
  UNSUPPORTED_FILE_TYPE: { status: 415, meaning: "the file's content is not a supported type, or is unsafe (see below)" },
  // 422
  BUSINESS_RULE_VIOLATION: { status: 422, meaning: "rename or delete of the Default project (spec), folder moved into itself" },
  FOLDER_DEPTH_EXCEEDED: { status: 422, meaning: "folders nested more than 20 levels deep" },
  PAGE_RENDER_FAILED: { status: 422, meaning: "a PDF page that could not be drawn: past the document reader's memory or time limit, or broken (the detail says which)" },
  UPLOAD_PARTS_MISSING: { status: 422, meaning: "multipart completion with unconfirmed parts, or parts the store refused" },
  // 429, 431
  RATE_LIMITED: { status: 429, meaning: "a rate limit is exhausted (see Limits; with Retry-After)" },
  UPLOAD_BACKPRESSURE: { status: 429, meaning: "the organization already has its tier's number of concurrent uploads in flight (FREE 10, STARTER 20, PROFESSIONAL 30, ENTERPRISE 50; with Retry-After)" },
  // 502, 503: the cloud provider
  CLOUD_PROVIDER_REFUSED: { status: 502, meaning: "the cloud provider refused a request in a way Mediabox cannot fix (the detail quotes it)" },
  CLOUD_PROVIDER_UNAVAILABLE: { status: 503, meaning: "the cloud provider is unreachable, failing (5xx) or rate limiting (429); with Retry-After" },
  LOGIN_THROTTLED: { status: 429, meaning: "too many failed sign-ins for the account or from the address; with Retry-After" },
  HEADERS_TOO_LARGE: { status: 431, meaning: "request line and headers over 16 KiB (a long query string or cookie); heads over 256 KiB get Bun's own 431 without a body (see Honest limits)" },
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

/**
 * Why processing a file failed, in the words a tenant reads (processing_error, a stage's error, a
 * job's error, crawl_error): the failures the appliance itself decides, each worded once here.
 * What a library said (with server paths, storage keys, a stack) is logged, and reaches a
 * tenant only through forTenants().
 */
export const FAILURES = {
  /** A stage ran past its time budget and was stopped; the file's other stages still ran. */
  stageTimedOut: (stage: string, budgetMs: number) => `the ${stage} stage took longer than ${seconds(budgetMs)} and was stopped`,
  /** Work on a thread or in the reader process ran past its budget and was stopped. */
  workTimedOut: (work: string, budgetMs: number) => `${work} took longer than ${seconds(budgetMs)} and was stopped`,
  /** The server stopped while the stage ran; the job runs again after the restart. */
  interrupted: (stage: string) => `the ${stage} stage was interrupted (the server is stopping)`,
} as const;

function seconds(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} minute${ms === 60_000 ? "" : "s"}`;
  return `${Math.round(ms / 100) / 10} s`;
}

/** Stack frames ("    at fn (/app/x.ts:1:2)"), as error messages sometimes carry them. */
const STACK_FRAME = /\n\s*at [^\n]*/g;
/** An absolute path or file: URI, after a start of text, a blank, a quote, a bracket, "=" or ":"; the last segment is kept. */
const SERVER_PATH = /(^|[\s'"(\[=:,])(?:file:(?:\/\/)?)?\/(?:[^\s/'"():,\]]+\/)+([^\s/'"():,\]]*)/g;
/** A blob key of the local or S3 store (orgs/<org>/files/<id>/...), with the store's own folders before it. */
const STORAGE_KEY = /(?:\b(?:blobs|objects|multipart|staging)\/)*\borgs\/[\w-]+\/[\w./-]+/g;
/** A tenant's error text is at most this long (a library can answer with a page of text). */
const TENANT_MESSAGE_CHARS = 1_000;

/**
 * An error message as a tenant may read it: no stack, no absolute path or file: URI (only the
 * file's own name is kept), no storage key. Every writer of a tenant-visible error field stores
 * its message through this, and logs the message it got.
 */
export function forTenants(message: string): string {
  const text = message
    .replace(STACK_FRAME, "")
    .replace(STORAGE_KEY, "the stored file")
    .replace(SERVER_PATH, "$1$2")
    .replace(/\s*\n\s*/g, " ")
    .trim();
  return text.length > TENANT_MESSAGE_CHARS ? `${text.slice(0, TENANT_MESSAGE_CHARS - 1)}…` : text;
}

/** The same for a field that may be empty. */
export const forTenantsOrNull = (message: string | null | undefined): string | null => (message == null ? null : forTenants(message));
