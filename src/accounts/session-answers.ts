/**
 * The answers that start, rotate or show a dashboard session (its cookies and the Session view),
 * shared by the sign-in routes and the identity provider's callback.
 */
import type { ActiveSession } from "../auth/principal.ts";
import type { Permission } from "../auth/permissions.ts";
import { ROLE_PERMISSIONS } from "../auth/roles.ts";
import { isoAt, type Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { requestInfo } from "../http/request-context.ts";
import type { Logger } from "../log.ts";
import { TIER_LIMITS } from "../tenancy/tiers.ts";
import type { Accounts, ClientMeta, SignedIn } from "./accounts.ts";
import { sessionCookies } from "./cookies.ts";
import { identitiesOf } from "./oidc.ts";
import { revokeSession, rotateSession, type IssuedSession } from "./sessions.ts";
import { getUser, membership, membershipsOf, publicUser } from "./users.ts";

export interface AccountRouteDeps {
  sql: SqlClient;
  clock: Clock;
  config: Config;
  log: Logger;
  accounts: Accounts;
}

type Headers = { headers: Record<string, unknown> };

export function client(request: Request): ClientMeta {
  return { ip: requestInfo(request).ip, userAgent: request.headers.get("user-agent") };
}

export function sessionAnswers(ctx: AccountRouteDeps) {
  const { sql: db, clock, config, accounts } = ctx;
  const maxAge = (issued: IssuedSession) => (issued.expiresAtMs - clock.now()) / 1000;
  const pick = (u: { id: string; email: string; name: string | null }) => ({ id: u.id, email: u.email, name: u.name });

  async function view(userId: string, orgId: string, session: { createdAt: string; idleExpiresMs: number; absoluteExpiresMs: number }, csrfToken?: string) {
    const user = (await getUser(db, userId))!;
    const current = (await membership(db, orgId, userId))!;
    return {
      user: { ...pick(publicUser(user)), email_verified: user.email_verified_at !== null, has_password: user.password_hash !== null },
      organization: { id: current.org_id, name: current.org_name, tier: current.tier, api_keys_allowed: TIER_LIMITS[current.tier].apiKeys },
      role: current.role,
      permissions: [...ROLE_PERMISSIONS[current.role]] as Permission[],
      organizations: (await membershipsOf(db, userId)).map((m) => ({ id: m.org_id, name: m.org_name, tier: m.tier, role: m.role })),
      identities: (await identitiesOf(db, userId)).map((i) => ({ provider: i.provider, email: i.email, linked_at: i.created_at })),
      session: { created_at: session.createdAt, idle_expires_at: isoAt(session.idleExpiresMs), expires_at: isoAt(session.absoluteExpiresMs) },
      ...(csrfToken ? { csrf_token: csrfToken } : {}),
    };
  }

  /** A sign-in in a browser that still holds a session ends that session (no two live ones per cookie jar). */
  async function endPrevious(request: Request): Promise<void> {
    const previous = requestInfo(request).principal?.session;
    if (previous) await revokeSession(db, clock, previous.idHash);
  }

  /** Answers a new session: its cookies and its view (with the CSRF token, shown only now). */
  function signedIn(set: Headers, result: SignedIn) {
    set.headers["set-cookie"] = sessionCookies(config, result.issued.sessionId, result.issued.csrfToken, maxAge(result.issued));
    set.headers["cache-control"] = "no-store";
    const now = clock.now();
    return view(result.user.id, result.membership.org_id, {
      createdAt: isoAt(now), idleExpiresMs: Math.min(now + accounts.lifetimes.idleMs, result.issued.expiresAtMs), absoluteExpiresMs: result.issued.expiresAtMs,
    }, result.issued.csrfToken);
  }

  async function rotated(set: Headers, session: ActiveSession, request: Request, orgId?: string) {
    const issued = await rotateSession(db, clock, accounts.lifetimes, session, { ...client(request), ...(orgId ? { orgId } : {}) });
    set.headers["set-cookie"] = sessionCookies(config, issued.sessionId, issued.csrfToken, maxAge(issued));
    set.headers["cache-control"] = "no-store";
    const now = clock.now();
    return view(session.userId, orgId ?? session.orgId, {
      createdAt: isoAt(now), idleExpiresMs: Math.min(now + accounts.lifetimes.idleMs, issued.expiresAtMs), absoluteExpiresMs: issued.expiresAtMs,
    }, issued.csrfToken);
  }

  return { maxAge, view, endPrevious, signedIn, rotated };
}
