/**
 * The one error type of the API. Domain code throws ApiError; the HTTP layer turns it into
 * `{"detail": "...", "code": "..."}` with its status. Codes the spec names are used verbatim;
 * the others are Mediabox's own and listed in the README.
 */
export type ErrorCode =
  // Named by the spec
  | "PROJECT_NOT_FOUND"
  | "PROJECT_NAME_EXISTS"
  | "PROJECT_LIMIT_REACHED"
  | "PROJECT_NOT_EMPTY"
  | "BUSINESS_RULE_VIOLATION"
  | "CUSTOM_SCHEMA_NAME_EXISTS"
  | "CUSTOM_SCHEMA_INVALID_SCHEMA"
  | "CUSTOM_SCHEMA_INVALID_NAME"
  | "CUSTOM_SCHEMA_INVALID_DESCRIPTION"
  | "CUSTOM_SCHEMA_INVALID_PROMPT_HINT"
  | "CUSTOM_SCHEMA_NOT_FOUND"
  // Mediabox's own
  | "VALIDATION_ERROR"
  | "UNAUTHENTICATED"
  | "PERMISSION_DENIED"
  | "NOT_FOUND"
  | "RATE_LIMITED"
  | "PAYLOAD_TOO_LARGE"
  | "FOLDER_NOT_FOUND"
  | "FOLDER_NAME_EXISTS"
  | "FOLDER_NOT_EMPTY"
  | "FOLDER_DEPTH_EXCEEDED"
  | "JOB_NOT_FOUND"
  | "JOB_FINISHED"
  | "NOT_AVAILABLE"
  | "UNSUPPORTED_FILE_TYPE"
  | "FILE_TOO_LARGE"
  | "BATCH_TOO_LARGE"
  | "UPLOAD_BACKPRESSURE"
  | "SESSION_NOT_FOUND"
  | "SESSION_FINISHED"
  | "FILE_NOT_FOUND"
  | "UPLOAD_NOT_FOUND"
  | "UPLOAD_STATE_CONFLICT"
  | "UPLOAD_HASH_MISMATCH"
  | "UPLOAD_PARTS_MISSING"
  | "UPLOAD_EXPIRED"
  | "IDEMPOTENCY_KEY_REUSED"
  | "FILE_ID_AMBIGUOUS"
  | "FILE_BUSY"
  | "EXTRACTION_NOT_FOUND"
  | "INVALID_DOMAIN"
  | "VARIANT_NOT_READY"
  | "EMBEDDING_NOT_READY"
  | "FILE_NOT_DELETED"
  | "WRONG_MEDIA_TYPE"
  | "MALFORMED_MULTIPART"
  | "UNSUPPORTED_CONTENT_TYPE"
  | "CLIENT_DISCONNECTED"
  | "INTERNAL_ERROR";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    readonly detail: string,
    /** Extra response headers (Retry-After on 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = "ApiError";
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
    super(499, "CLIENT_DISCONNECTED", "the client closed the connection before the request body was complete");
  }
}

export const badRequest = (detail: string, code: ErrorCode = "VALIDATION_ERROR") => new ApiError(400, code, detail);
export const notFound = (detail: string, code: ErrorCode = "NOT_FOUND") => new ApiError(404, code, detail);
export const conflict = (detail: string, code: ErrorCode) => new ApiError(409, code, detail);
export const ruleViolation = (detail: string, code: ErrorCode = "BUSINESS_RULE_VIOLATION") => new ApiError(422, code, detail);

/** The message of anything thrown (libraries also throw strings and plain objects). */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err && typeof err === "object" && "message" in err) return String((err as { message: unknown }).message);
  return String(err);
}
