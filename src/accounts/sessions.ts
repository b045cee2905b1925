/**
 * Dashboard sessions: the only writer of `user_sessions`. A session id is 256 random bits handed
 * to the browser in an HttpOnly cookie and stored only as its SHA-256 hash, with the hash of the
 * session's CSRF token. A session ends when it has not been used for the idle lifetime, at its
 * absolute lifetime whatever its use, at sign-out, or when the user's password changes. On the
 * data-access port (docs/scale-out.md).
 */
import { isoAt, type Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { ActiveSession } from "../auth/principal.ts";
import { randomToken, sha256Hex } from "./secrets.ts";

/** last_seen_at (and the idle expiry) move at most this often, so reads do not all turn into writes. */
const TOUCH_RESOLUTION_MS = 60_000;

export interface SessionLifetimes {
  idleMs: number;
  absoluteMs: number;
}

/** What a new or rotated session hands to the browser (only now, never again). */
export interface IssuedSession {
  sessionId: string;
  csrfToken: string;
  expiresAtMs: number;
}

export async function createSession(
  db: SqlClient,
  clock: Clock,
  lifetimes: SessionLifetimes,
  input: { userId: string; orgId: string; ip: string | null; userAgent: string | null; absoluteExpiresMs?: number },
): Promise<IssuedSession> {
  const now = clock.now();
  const sessionId = randomToken();
  const csrfToken = randomToken();
  const absolute = input.absoluteExpiresMs ?? now + lifetimes.absoluteMs;
  await db.run(
    `INSERT INTO user_sessions (id_hash, user_id, org_id, csrf_hash, created_at, last_seen_at, idle_expires_ms, absolute_expires_ms, ip, user_agent)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      sha256Hex(sessionId), input.userId, input.orgId, sha256Hex(csrfToken), isoAt(now), isoAt(now),
      Math.min(now + lifetimes.idleMs, absolute), absolute, input.ip, input.userAgent?.slice(0, 300) ?? null,
    ],
  );
  return { sessionId, csrfToken, expiresAtMs: absolute };
}

/**
 * The live session a cookie names, or null (unknown, revoked, expired, user disabled, or no
 * longer a member of the session's organization). Sliding: a use moves the idle expiry.
 */
export async function authenticateSession(db: SqlClient, clock: Clock, lifetimes: SessionLifetimes, sessionId: string): Promise<ActiveSession | null> {
  if (sessionId.length < 20 || sessionId.length > 100) return null;
  const row = await db.one<ActiveSession & { lastSeen: string }>(
    `SELECT s.id_hash AS "idHash", s.user_id AS "userId", u.email, s.org_id AS "orgId", o.tier, m.role, s.csrf_hash AS "csrfHash",
            s.created_at AS "createdAt", s.idle_expires_ms AS "idleExpiresMs", s.absolute_expires_ms AS "absoluteExpiresMs", s.last_seen_at AS "lastSeen"
     FROM user_sessions s
     JOIN users u ON u.id = s.user_id
     JOIN organizations o ON o.id = s.org_id
     JOIN memberships m ON m.org_id = s.org_id AND m.user_id = s.user_id
     WHERE s.id_hash = ? AND s.revoked_at IS NULL AND u.disabled_at IS NULL`,
    [sha256Hex(sessionId)],
  );
  if (!row) return null;
  const now = clock.now();
  if (now >= row.idleExpiresMs || now >= row.absoluteExpiresMs) return null;
  const { lastSeen, ...session } = row;
  if (now - Date.parse(lastSeen) >= TOUCH_RESOLUTION_MS) {
    session.idleExpiresMs = Math.min(now + lifetimes.idleMs, row.absoluteExpiresMs);
    await db.run("UPDATE user_sessions SET last_seen_at = ?, idle_expires_ms = ? WHERE id_hash = ?", [isoAt(now), session.idleExpiresMs, row.idHash]);
  }
  return session;
}

/**
 * Replaces a session by a new one (new id and CSRF token) and revokes the old one, in one
 * transaction. The absolute expiry is kept: rotating must not make a session immortal.
 */
export function rotateSession(
  db: SqlClient,
  clock: Clock,
  lifetimes: SessionLifetimes,
  current: ActiveSession,
  meta: { ip: string | null; userAgent: string | null; orgId?: string },
): Promise<IssuedSession> {
  return db.transaction(async (tx) => {
    await revokeSession(tx, clock, current.idHash);
    return createSession(tx, clock, lifetimes, {
      userId: current.userId, orgId: meta.orgId ?? current.orgId, ip: meta.ip, userAgent: meta.userAgent, absoluteExpiresMs: current.absoluteExpiresMs,
    });
  });
}

export async function revokeSession(db: SqlClient, clock: Clock, idHash: string): Promise<void> {
  await db.run("UPDATE user_sessions SET revoked_at = ? WHERE id_hash = ? AND revoked_at IS NULL", [isoAt(clock.now()), idHash]);
}

/** Signs the user out everywhere; returns how many sessions ended. */
export async function revokeUserSessions(db: SqlClient, clock: Clock, userId: string): Promise<number> {
  return (await db.run("UPDATE user_sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL", [isoAt(clock.now()), userId])).changes;
}

/** Drops sessions that ended more than a day ago (maintenance). */
export async function pruneSessions(db: SqlClient, clock: Clock): Promise<number> {
  const cutoff = clock.now() - 86_400_000;
  return (await db.run("DELETE FROM user_sessions WHERE absolute_expires_ms < ? OR idle_expires_ms < ? OR revoked_at < ?", [cutoff, cutoff, isoAt(cutoff)])).changes;
}
