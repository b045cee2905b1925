/**
 * Runs before routing on every request: resolves the client IP and the API key, applies the
 * rate limits (headers on every response, 429 with Retry-After), and turns away anonymous calls
 * to protected routes with 401. Also defines the `permission` route option that answers 403
 * when the key lacks the action a route needs.
 */
import { DASHBOARD_ASSETS_PATH, DASHBOARD_PAGES } from "../dashboard/pages.ts";
import { Elysia } from "elysia";
import { authenticateKey } from "../auth/api-keys.ts";
import type { Permission } from "../auth/permissions.ts";
import type { AppContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { bucketsFor } from "../ratelimit/policy.ts";
import { LOCAL_S3_PATH } from "../storage/local-store.ts";
import { clientIp, compileTrust } from "./client-ip.ts";
import { principalOf, setRequestInfo } from "./request-context.ts";

export const API_PREFIX = "/api/v2";

/** JSON request bodies are small by nature (the largest the spec allows is a 32 KB schema). */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/**
 * Operational routes: no authentication, no rate limit (probes, the docs page and the dashboard's
 * static page and assets must always answer). The local S3 endpoint is here too: its presigned-URL signature is the credential,
 * and a multipart upload may send thousands of part PUTs a minute.
 */
export function isInfrastructurePath(path: string): boolean {
  return (
    path.startsWith(`${LOCAL_S3_PATH}/`) ||
    path === "/healthz" ||
    path === "/readyz" ||
    path === "/metrics" ||
    path === "/docs" ||
    path.startsWith("/docs/") ||
    path.startsWith(`${DASHBOARD_ASSETS_PATH}/`) ||
    DASHBOARD_PAGES.includes(path) ||
    path === `${API_PREFIX}/openapi.json`
  );
}

/** API routes callable without a key (the spec's telemetry endpoint). Paths are below /api/v2. */
const ANONYMOUS_ROUTES = new Set(["POST /files/log-upload-event"]);
/** The cloud OAuth popup's landing page: the browser sends no key there; the single-use state names the flow. */
const ANONYMOUS_PATTERNS = [/^GET \/cloud-storage\/auth\/[^/]+\/callback$/];
const isAnonymousRoute = (route: string) => ANONYMOUS_ROUTES.has(route) || ANONYMOUS_PATTERNS.some((p) => p.test(route));

/** Browsers cannot set headers on a WebSocket, so the channel endpoint also takes ?access_token=. */
const WEBSOCKET_PATH = `${API_PREFIX}/ws`;

function bearerToken(request: Request, url: URL): string | null {
  const header = request.headers.get("authorization");
  if (!header) return url.pathname === WEBSOCKET_PATH ? url.searchParams.get("access_token") : null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? "";
}

export function guard(ctx: AppContext) {
  const trust = compileTrust(ctx.config.trustedProxies);
  return new Elysia({ name: "mediabox-guard" }).onRequest(({ request, set, server }) => {
    const url = new URL(request.url);
    const path = url.pathname;
    const socketAddress = server?.requestIP(request)?.address ?? "unknown";
    const ip = clientIp(request, socketAddress, trust);
    const token = bearerToken(request, url);
    const principal = token ? authenticateKey(ctx.db, ctx.clock, token) : null;
    setRequestInfo(request, { ip, principal });
    if (isInfrastructurePath(path)) return;

    const apiPath = path === API_PREFIX ? "/" : path.startsWith(`${API_PREFIX}/`) ? path.slice(API_PREFIX.length) : null;
    const decision = ctx.limiter.take(bucketsFor({ method: request.method, apiPath, ip, principal }, ctx.config.unauthenticatedRateLimit));
    set.headers["x-ratelimit-limit"] = String(decision.limit);
    set.headers["x-ratelimit-remaining"] = String(decision.remaining);
    set.headers["x-ratelimit-reset"] = String(decision.resetAt);
    if (!decision.allowed) {
      throw new ApiError(
        "RATE_LIMITED",
        `rate limit of ${decision.limit} requests per minute exceeded; retry in ${decision.retryAfter} s`,
        { "retry-after": String(decision.retryAfter) },
      );
    }
    if (!principal && !(apiPath !== null && isAnonymousRoute(`${request.method} ${apiPath}`))) {
      throw unauthenticated(token);
    }
    const length = Number(request.headers.get("content-length") ?? 0);
    if (length > MAX_JSON_BODY_BYTES && (request.headers.get("content-type") ?? "").includes("json")) {
      throw new ApiError("PAYLOAD_TOO_LARGE", `JSON request bodies are limited to ${MAX_JSON_BODY_BYTES} bytes (got ${length})`);
    }
  });
}

function unauthenticated(token: string | null): ApiError {
  return new ApiError(
    "UNAUTHENTICATED",
    token === null
      ? "missing API key: send the header 'Authorization: Bearer <API key>'"
      : "invalid API key: the key is unknown, malformed or revoked",
    { "www-authenticate": 'Bearer realm="mediabox"' },
  );
}

/** Route option `permission: "view" | "edit" | "delete"`; also gives the handler its `principal`. */
export const permissions = new Elysia({ name: "mediabox-permissions" }).macro({
  permission: (needed: Permission) => ({
    // transform runs before body validation, so a caller without the permission learns nothing more.
    transform({ request }) {
      if (!principalOf(request).permissions.has(needed)) {
        throw new ApiError("PERMISSION_DENIED", `this API key lacks the ${needed.toUpperCase()} permission`);
      }
    },
    resolve({ request }) {
      return { principal: principalOf(request) };
    },
  }),
});
