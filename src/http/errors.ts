/**
 * The one error handler: ApiError, validation, parse and routing errors become
 * `{"detail", "code"}` with the right status; anything unexpected is logged and answered with
 * a generic 500 (never a stack trace).
 */
import { Elysia } from "elysia";
import { ApiError, ClientDisconnectedError } from "../errors.ts";
import type { Logger } from "../log.ts";

/** A failed check as TypeBox reports it (Elysia adds `summary`). */
export interface ValidationIssue {
  path: string;
  message: string;
  value?: unknown;
  summary?: string;
  schema?: { error?: unknown };
  /** A union's failure: what each of its branches reported. */
  errors?: Iterable<ValidationIssue>[];
}

interface ValidationLike {
  type: string;
  all: ValidationIssue[];
}

const customMessage = (issue: ValidationIssue): string | null => (typeof issue.schema?.error === "string" ? issue.schema.error : null);

/** "/field_edits/rooms.0" → "field_edits.rooms.0" (JSON pointer escapes undone). */
const fieldOf = (path: string) => path.replace(/^\//, "").replaceAll("/", ".").replaceAll("~1", "/").replaceAll("~0", "~");

/**
 * A union reports only "Expected union value". Nullable fields, enums and the string-or-array
 * union Elysia makes of an array query parameter are unions, so look into the branches: the one
 * that got furthest into the value explains the failure best, else one with its own message.
 */
function mostSpecific(issue: ValidationIssue): ValidationIssue {
  if (!issue.errors?.length) return issue;
  const firsts = issue.errors.map((branch) => [...branch][0]).filter((e): e is ValidationIssue => e !== undefined);
  const deeper = firsts.find((e) => e.path.length > issue.path.length);
  if (deeper) return mostSpecific(deeper);
  if (customMessage(issue)) return issue;
  const explained = firsts.find((e) => customMessage(mostSpecific(e)));
  return explained ? mostSpecific(explained) : issue;
}

/** A body with thousands of bad keys still gets a message of bounded size. */
const MAX_LINES = 20;

/**
 * One line per offending field: "invalid body: name: is required; color: must be a hex colour…".
 * A schema's own `error` message is used as it is when it names its field ("format: must be csv,
 * …"); one that starts with "must" gets the field put in front, so schemas of record values and
 * array items (whose field is only known at run time) read the same way.
 */
export function describeValidation(error: ValidationLike): string {
  const where = error.type === "property" ? "query" : error.type;
  const lines = new Set<string>();
  for (const reported of error.all) {
    const issue = mostSpecific(reported);
    const field = fieldOf(issue.path);
    const custom = customMessage(issue);
    const missing = reported.summary ? reported.summary.endsWith("but found: undefined") : reported.value === undefined && field !== "";
    if (missing) lines.add(`${fieldOf(reported.path)}: is required`);
    else if (custom) lines.add(custom.startsWith("must ") && field ? `${field}: ${custom}` : custom);
    else lines.add(`${field || where}: ${issue.message.replace(/^Expected/, "expected")}`);
  }
  const all = [...lines];
  const shown = all.length > MAX_LINES ? [...all.slice(0, MAX_LINES), `and ${all.length - MAX_LINES} more`] : all;
  return `invalid ${where}: ${shown.join("; ") || "malformed value"}`;
}

export function errorHandler(log: Logger) {
  return new Elysia({ name: "mediabox-errors" }).onError({ as: "global" }, ({ code, error, set, request }) => {
    if (error instanceof ClientDisconnectedError) log.info("client disconnected mid-request", { method: request.method, path: new URL(request.url).pathname });
    const answer = (apiError: ApiError) => {
      set.status = apiError.status;
      Object.assign(set.headers, apiError.headers);
      return apiError.toBody();
    };
    if (error instanceof ApiError) return answer(error);
    switch (code) {
      case "VALIDATION": {
        const validation = error as unknown as ValidationLike;
        if (validation.type === "response") break;
        let detail = "invalid request: malformed value";
        try {
          detail = describeValidation(validation);
        } catch (err) {
          // Listing the failures walks the value; no value may turn a 400 into a 500.
          log.warn("could not describe a validation failure", { err: String(err) });
        }
        return answer(new ApiError("VALIDATION_ERROR", detail));
      }
      case "PARSE":
        // The bounded body readers (bounded-body.ts) say why; Elysia wraps what its parser threw.
        if (error instanceof Error && error.cause instanceof ApiError) return answer(error.cause);
        return answer(new ApiError("VALIDATION_ERROR", "request body could not be parsed; send valid JSON with Content-Type: application/json"));
      case "NOT_FOUND":
        return answer(new ApiError("NOT_FOUND", `no route for ${request.method} ${new URL(request.url).pathname}`));
    }
    log.error("unhandled error", { method: request.method, url: request.url, code, err: error });
    return answer(new ApiError("INTERNAL_ERROR", "internal server error"));
  });
}

/**
 * Bun's own answer to an error that escaped the application (its HTML page with the stack and
 * source paths in development, bare text in production) is never sent: this is the server's
 * `error` option, the last resort behind errorHandler.
 */
export function lastResortErrorResponse(log: Logger) {
  return (error: unknown): Response => {
    try {
      log.error("error escaped the HTTP application", { err: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
    } catch {
      // Logging must not be what fails the answer.
    }
    return Response.json(new ApiError("INTERNAL_ERROR", "internal server error").toBody(), {
      status: 500,
      headers: { "x-content-type-options": "nosniff" },
    });
  };
}
