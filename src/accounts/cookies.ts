/**
 * The cookies of dashboard sessions and how they are written. The session cookie is HttpOnly
 * (scripts cannot read it), SameSite=Lax (not sent on cross-site POSTs) and Secure when the
 * appliance is reached over https (MEDIABOX_PUBLIC_URL). The CSRF cookie carries the session's
 * CSRF token for the dashboard's scripts to echo in the X-CSRF-Token header, so it is readable
 * by scripts of the same origin only. The OIDC cookie binds a sign-in in flight to its browser.
 */
import type { Config } from "../config.ts";

export const SESSION_COOKIE = "mediabox_session";
export const CSRF_COOKIE = "mediabox_csrf";
export const OIDC_COOKIE = "mediabox_oidc";
export const CSRF_HEADER = "x-csrf-token";

export function readCookie(request: Request, name: string): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return decodeCookieValue(part.slice(eq + 1).trim());
  }
  return null;
}

/** A value with a malformed escape ("%" alone, "%FF") is kept as sent: it names no session, so the caller is unauthenticated (a URIError here was a 500). */
function decodeCookieValue(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function secure(config: Pick<Config, "publicUrl">): boolean {
  return config.publicUrl?.startsWith("https:") ?? false;
}

function cookie(config: Pick<Config, "publicUrl">, name: string, value: string, options: { maxAgeSeconds: number; httpOnly: boolean; path?: string }): string {
  return [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${options.path ?? "/"}`,
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
    "SameSite=Lax",
    ...(options.httpOnly ? ["HttpOnly"] : []),
    ...(secure(config) ? ["Secure"] : []),
  ].join("; ");
}

/** Set-Cookie values for a new session (the cookie lives as long as the session's absolute lifetime). */
export function sessionCookies(config: Pick<Config, "publicUrl">, sessionId: string, csrfToken: string, maxAgeSeconds: number): string[] {
  return [
    cookie(config, SESSION_COOKIE, sessionId, { maxAgeSeconds, httpOnly: true }),
    cookie(config, CSRF_COOKIE, csrfToken, { maxAgeSeconds, httpOnly: false }),
  ];
}

export function clearedSessionCookies(config: Pick<Config, "publicUrl">): string[] {
  return [
    cookie(config, SESSION_COOKIE, "", { maxAgeSeconds: 0, httpOnly: true }),
    cookie(config, CSRF_COOKIE, "", { maxAgeSeconds: 0, httpOnly: false }),
  ];
}

export function oidcCookie(config: Pick<Config, "publicUrl">, value: string, maxAgeSeconds: number, path: string): string {
  return cookie(config, OIDC_COOKIE, value, { maxAgeSeconds, httpOnly: true, path });
}
