/**
 * Runs before routing on every request: resolves the client IP and the caller (an API key, else
 * a dashboard session cookie), applies the rate limits (headers on every response, 429 with
 * Retry-After), turns away anonymous calls to protected routes with 401, and refuses
 * cookie-authenticated writes without the session's CSRF token. It sits above the features it
 * asks (accounts, API keys, rate limits, the dashboard's pages); routes declare what they need
 * with the `permission` option of http/permissions.ts.
 */
import { DASHBOARD_ASSETS_PATH, DASHBOARD_PAGES } from "../dashboard/pages.ts";
import { Elysia } from "elysia";
import { CSRF_HEADER, readCookie, SESSION_COOKIE } from "../accounts/cookies.ts";
import { matchesHash } from "../accounts/secrets.ts";
import { authenticateSession } from "../accounts/sessions.ts";
import { ROLE_PERMISSIONS } from "../auth/roles.ts";
import { authenticateKey } from "../auth/api-keys.ts";
import type { ActiveSession, Principal } from "../auth/principal.ts";
import type { EdgeDeps } from "./deps.ts";
import { ApiError } from "../errors.ts";
import { bucketsFor } from "../ratelimit/policy.ts";
import { LOCAL_S3_PATH } from "../storage/local-store.ts";
import { API_PREFIX } from "../http/api-prefix.ts";
import { clientIp, compileTrust } from "../http/client-ip.ts";
import { setRequestInfo } from "../http/request-context.ts";
import { boundBodyReaders } from "../http/bounded-body.ts";

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

/**
 * API routes callable without a key or session: the spec's telemetry endpoint, the sign-in
 * family, support, the payment provider's webhook and the cloud OAuth callback. Paths are below /api/v2.
 */
const ANONYMOUS_ROUTES = [
  "POST /files/log-upload-event",
  "POST /auth/session/login",
  "GET /auth/session/options",
  "POST /auth/session/setup-owner",
  "POST /auth/session/register",
  "POST /auth/session/google",
  "POST /auth/session/oidc/start",
  "GET /auth/session/oidc/callback",
  "POST /auth/session/resend-verification-by-email",
  "POST /auth/session/password-reset/request",
  "POST /auth/session/password-reset/validate",
  "POST /auth/session/password-reset/complete",
  "POST /auth/session/verify-email",
  "POST /auth/session/accept-invite",
  "POST /support/contact",
].map((r) => new RegExp(`^${r}$`)).concat([
  /^POST \/payment\/webhooks\/[^/]+$/,
  // The cloud OAuth popup's landing page: the browser sends no key there; the single-use state names the flow.
  /^GET \/cloud-storage\/auth\/[^/]+\/callback$/,
]);

export function isAnonymousRoute(method: string, apiPath: string | null): boolean {
  if (apiPath === null) return false;
  const line = `${method} ${apiPath}`;
  return ANONYMOUS_ROUTES.some((r) => r.test(line));
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function sessionPrincipal(session: ActiveSession): Principal {
  return {
    keyId: `user:${session.userId}`,
    orgId: session.orgId,
    tier: session.tier,
    permissions: new Set(ROLE_PERMISSIONS[session.role]),
    session,
  };
}

/** Origins a browser may send writes from: the public URL's and the one the request itself addressed. */
function sameOrigin(request: Request, publicUrl: string | null): boolean {
  const origin = request.headers.get("origin");
  if (origin === null) return true;
  if (publicUrl && origin === new URL(publicUrl).origin) return true;
  return origin === new URL(request.url).origin;
}

/** Browsers cannot set headers on a WebSocket, so the channel endpoint also takes ?access_token=. */
const WEBSOCKET_PATH = `${API_PREFIX}/ws`;

function bearerToken(request: Request, url: URL): string | null {
  const header = request.headers.get("authorization");
  if (!header) return url.pathname === WEBSOCKET_PATH ? url.searchParams.get("access_token") : null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? "";
}

export function guard(ctx: EdgeDeps) {
  const trust = compileTrust(ctx.config.trustedProxies);
  return new Elysia({ name: "mediabox-guard" }).onRequest(async ({ request, set, server }) => {
    const url = new URL(request.url);
    const path = url.pathname;
    const socketAddress = server?.requestIP(request)?.address ?? "unknown";
    const ip = clientIp(request, socketAddress, trust);
    const token = bearerToken(request, url);
    let principal = token ? await authenticateKey(ctx.sql, ctx.clock, token) : null;
    // A Bearer header wins: a client that sends a key is judged by its key alone.
    const sessionId = token === null ? readCookie(request, SESSION_COOKIE) : null;
    if (sessionId) {
      const session = await authenticateSession(ctx.sql, ctx.clock, ctx.accounts.lifetimes, sessionId);
      if (session) principal = sessionPrincipal(session);
    }
    setRequestInfo(request, { ip, principal });
    if (isInfrastructurePath(path)) return;

    const apiPath = path === API_PREFIX ? "/" : path.startsWith(`${API_PREFIX}/`) ? path.slice(API_PREFIX.length) : null;
    const decision = await ctx.limiter.take(bucketsFor({ method: request.method, apiPath, ip, principal }, ctx.config.unauthenticatedRateLimit));
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
    const anonymousRoute = isAnonymousRoute(request.method, apiPath);
    if (!principal && !anonymousRoute) {
      throw unauthenticated(token, sessionId !== null);
    }
    // Cross-site requests by cookie: SameSite=Lax already keeps the cookie off them in current
    // browsers; the Origin check (any method: it also covers WebSocket upgrades and cross-origin
    // reads) and, for writes, the session's token (double submit: cookie + header) refuse them in
    // any browser. Sign-in routes get the Origin check too (login CSRF).
    const signInWrite = !SAFE_METHODS.has(request.method) && (apiPath?.startsWith("/auth/session/") ?? false);
    if ((principal?.session || signInWrite) && !sameOrigin(request, ctx.config.publicUrl)) {
      throw new ApiError("CSRF_FAILED", "cross-site request refused: its Origin is not this appliance's");
    }
    if (!SAFE_METHODS.has(request.method)) {
      if (principal?.session && !anonymousRoute) {
        const presented = request.headers.get(CSRF_HEADER);
        if (!presented || !matchesHash(presented, principal.session.csrfHash)) {
          throw new ApiError("CSRF_FAILED", `missing or wrong ${CSRF_HEADER} header: cookie-authenticated writes must echo the session's CSRF token (the mediabox_csrf cookie)`);
        }
      }
    }
    // Bodies the framework parses get a size cap (and JSON a nesting cap) on every route, the open
    // ones included; upload routes stream `request.body` and are not touched.
    if (!SAFE_METHODS.has(request.method)) boundBodyReaders(request);
  });
}

function unauthenticated(token: string | null, hadSessionCookie: boolean): ApiError {
  return new ApiError(
    "UNAUTHENTICATED",
    token !== null
      ? "invalid API key: the key is unknown, malformed or revoked"
      : hadSessionCookie
        ? "your session has ended (expired, signed out or replaced); sign in again"
        : "missing API key: send the header 'Authorization: Bearer <API key>' (or sign in for a session cookie)",
    { "www-authenticate": 'Bearer realm="mediabox"' },
  );
}
