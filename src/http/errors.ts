/**
 * The one error handler: ApiError, validation, parse and routing errors become
 * `{"detail", "code"}` with the right status; anything unexpected is logged and answered with
 * a generic 500 (never a stack trace).
 */
import { Elysia } from "elysia";
import { ApiError, ClientDisconnectedError } from "../errors.ts";
import type { Logger } from "../log.ts";

interface ValidationIssue {
  path: string;
  message: string;
  summary?: string;
  schema?: { error?: unknown };
}

interface ValidationLike {
  type: string;
  all: ValidationIssue[];
}

/** One line per offending field: "invalid body: name: is required; color: must be a hex colour…". */
export function describeValidation(error: ValidationLike): string {
  const where = error.type === "property" ? "query" : error.type;
  const lines = new Set<string>();
  for (const issue of error.all) {
    const field = issue.path.replace(/^\//, "").replaceAll("/", ".");
    const custom = typeof issue.schema?.error === "string" ? issue.schema.error : null;
    if (issue.summary?.endsWith("but found: undefined")) lines.add(`${field}: is required`);
    else if (custom) lines.add(custom);
    else lines.add(`${field || where}: ${issue.message.replace(/^Expected/, "expected")}`);
  }
  return `invalid ${where}: ${[...lines].join("; ") || "malformed value"}`;
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
        return answer(new ApiError("VALIDATION_ERROR", describeValidation(validation)));
      }
      case "PARSE":
        return answer(new ApiError("VALIDATION_ERROR", "request body could not be parsed; send valid JSON with Content-Type: application/json"));
      case "NOT_FOUND":
        return answer(new ApiError("NOT_FOUND", `no route for ${request.method} ${new URL(request.url).pathname}`));
    }
    log.error("unhandled error", { method: request.method, url: request.url, code, err: error });
    return answer(new ApiError("INTERNAL_ERROR", "internal server error"));
  });
}
