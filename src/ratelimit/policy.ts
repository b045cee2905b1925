/**
 * Which rate-limit buckets a request counts against (the spec's "Limits" section):
 * the caller's tier per key, or the anonymous per-IP limit; the per-IP limits of sensitive
 * endpoints; and the per-IP upload buckets.
 */
import type { Principal } from "../auth/principal.ts";
import { FIXED_LIMITS, TIER_LIMITS } from "../tenancy/tiers.ts";
import type { BucketSpec } from "./limiter.ts";

interface RoutePattern {
  method: string;
  pattern: RegExp;
  limit: number;
  /** Endpoints that callers reach without an API key by design (login, OAuth callback,
   *  payment webhook): for anonymous calls this limit replaces the general anonymous one. */
  anonymousByDesign: boolean;
}

const route = (method: string, path: string, limit: number, anonymousByDesign = false): RoutePattern => ({
  method,
  pattern: new RegExp("^" + path.replace(/<[^>]+>/g, "[^/]+") + "$"),
  limit,
  anonymousByDesign,
});

/** Per-IP limits on sensitive endpoints, per minute, regardless of tier. Paths are below /api/v2. */
export const SENSITIVE_ROUTES: RoutePattern[] = [
  route("POST", "/auth/session/login", 5, true),
  route("POST", "/auth/session/register", 10, true),
  route("POST", "/auth/session/google", 10, true),
  route("POST", "/auth/session/resend-verification", 5, true),
  route("POST", "/auth/session/resend-verification-by-email", 5, true),
  route("POST", "/auth/session/password-reset/request", 3, true),
  route("POST", "/auth/session/password-reset/validate", 10, true),
  route("POST", "/auth/session/password-reset/complete", 5, true),
  route("POST", "/auth/session/verify-email", 5, true),
  route("POST", "/auth/session/link-provider", 5),
  route("POST", "/auth/session/unlink-provider", 3),
  route("POST", "/auth/session/rotate-session", 10),
  route("POST", "/cloud-storage/auth/<provider>", 10),
  route("GET", "/cloud-storage/auth/<provider>/callback", 10, true),
  route("POST", "/cloud-storage/import", 30),
  route("POST", "/cloud-storage/export", 30),
  route("POST", "/support/contact", 3, true),
  route("POST", "/payment/webhooks/<provider>", 200, true),
  // Mediabox's own sign-in routes, not in the spec's table, limited like their neighbours.
  route("POST", "/auth/session/oidc/start", 10, true),
  route("GET", "/auth/session/oidc/callback", 10, true),
  route("POST", "/auth/session/accept-invite", 5, true),
  route("POST", "/auth/session/setup-owner", 5, true),
  route("POST", "/auth/session/logout", 10),
  route("POST", "/auth/session/logout-all", 10),
  route("POST", "/auth/session/switch-organization", 10),
];

export const UPLOAD_LIMIT_AUTHENTICATED = 500;
export const UPLOAD_LIMIT_ANONYMOUS = 200;

const UPLOAD_ROUTE = /^\/files\/(upload|upload\/batch|uploads)$|^\/files\/uploads\/[^/]+(\/.*)?$/;

export function isUploadRoute(method: string, apiPath: string): boolean {
  if (!UPLOAD_ROUTE.test(apiPath)) return false;
  // Reads of an intent are not uploads; everything that moves or finalizes bytes is.
  return method !== "GET";
}

export interface RateRequest {
  method: string;
  /** Path below /api/v2, or null for paths outside the API. */
  apiPath: string | null;
  ip: string;
  principal: Principal | null;
}

export function bucketsFor(req: RateRequest, anonymousLimit: number): BucketSpec[] {
  const buckets: BucketSpec[] = [];
  const sensitive = req.apiPath === null
    ? undefined
    : SENSITIVE_ROUTES.find((r) => r.method === req.method && r.pattern.test(req.apiPath!));

  if (req.principal?.session) {
    // Dashboard users: 300 requests a minute whatever the tier (the spec's session limit), per user.
    buckets.push({ key: `user:${req.principal.session.userId}`, limit: FIXED_LIMITS.dashboardRequestsPerMinute });
  } else if (req.principal) {
    buckets.push({ key: `key:${req.principal.keyId}`, limit: TIER_LIMITS[req.principal.tier].requestsPerMinute });
  } else if (!sensitive?.anonymousByDesign) {
    buckets.push({ key: `ip:${req.ip}`, limit: anonymousLimit });
  }
  if (sensitive) buckets.push({ key: `route:${sensitive.pattern.source}:${req.ip}`, limit: sensitive.limit });
  if (req.apiPath !== null && isUploadRoute(req.method, req.apiPath)) {
    buckets.push(
      req.principal
        ? { key: `upload:auth:${req.ip}`, limit: UPLOAD_LIMIT_AUTHENTICATED }
        : { key: `upload:anon:${req.ip}`, limit: UPLOAD_LIMIT_ANONYMOUS },
    );
  }
  return buckets;
}
