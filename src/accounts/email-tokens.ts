/**
 * Mailed tokens: the only writer of `email_tokens`. A token proves control of a mailbox for one
 * purpose (verify the address, reset the password, accept an invitation); it is random, stored
 * only as its hash, expires, and is used at most once (consuming it is one conditional UPDATE,
 * so two concurrent uses cannot both succeed).
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import type { Role } from "../auth/roles.ts";
import { randomToken, sha256Hex } from "./secrets.ts";
import { emailKey } from "./users.ts";

export const TOKEN_KINDS = ["verify_email", "password_reset", "invite"] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

/** Reset links are short-lived (they hand over an account); invitations wait for a week. */
export const TOKEN_LIFETIME_MS: Record<TokenKind, number> = {
  verify_email: 48 * 3_600_000,
  password_reset: 3_600_000,
  invite: 7 * 86_400_000,
};

export interface TokenRecord {
  kind: TokenKind;
  user_id: string | null;
  email_key: string;
  org_id: string | null;
  role: Role | null;
  expires_ms: number;
}

/**
 * Issues a token. Earlier unused tokens of the same kind for the same address stop working, so
 * only the latest mail's link is valid.
 */
export function issueToken(
  db: Database,
  clock: Clock,
  input: { kind: TokenKind; email: string; userId?: string | null; orgId?: string | null; role?: Role | null },
): { token: string; expiresAtMs: number } {
  const token = randomToken();
  const now = clock.now();
  const expires = now + TOKEN_LIFETIME_MS[input.kind];
  const key = emailKey(input.email);
  db.transaction(() => {
    // Invitations to different organizations may be pending side by side; other kinds replace their predecessors.
    if (input.kind === "invite") {
      db.query("UPDATE email_tokens SET used_at = ? WHERE kind = 'invite' AND email_key = ? AND org_id = ? AND used_at IS NULL").run(isoAt(now), key, input.orgId ?? null);
    } else {
      db.query("UPDATE email_tokens SET used_at = ? WHERE kind = ? AND email_key = ? AND used_at IS NULL").run(isoAt(now), input.kind, key);
    }
    db.query(
      `INSERT INTO email_tokens (token_hash, kind, user_id, email_key, org_id, role, created_at, expires_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(sha256Hex(token), input.kind, input.userId ?? null, key, input.orgId ?? null, input.role ?? null, isoAt(now), expires);
  }).immediate();
  return { token, expiresAtMs: expires };
}

function invalid(): ApiError {
  // One answer for unknown, used, expired and wrong-kind tokens: the caller learns nothing more.
  return new ApiError("TOKEN_INVALID", "token: is invalid, already used or expired; ask for a new link");
}

/** The token's record if it is valid for `kind`, without using it. */
export function peekToken(db: Database, clock: Clock, kind: TokenKind, token: string): TokenRecord {
  const row = db
    .query<TokenRecord, [string, string, number]>(
      `SELECT kind, user_id, email_key, org_id, role, expires_ms FROM email_tokens
       WHERE token_hash = ? AND kind = ? AND used_at IS NULL AND expires_ms > ?`,
    )
    .get(sha256Hex(token), kind, clock.now());
  if (!row) throw invalid();
  return row;
}

/** Uses the token (once); throws TOKEN_INVALID when it is not valid for `kind`. */
export function consumeToken(db: Database, clock: Clock, kind: TokenKind, token: string): TokenRecord {
  const now = clock.now();
  const row = db
    .query<TokenRecord, [string, string, string, number]>(
      `UPDATE email_tokens SET used_at = ? WHERE token_hash = ? AND kind = ? AND used_at IS NULL AND expires_ms > ?
       RETURNING kind, user_id, email_key, org_id, role, expires_ms`,
    )
    .get(isoAt(now), sha256Hex(token), kind, now);
  if (!row) throw invalid();
  return row;
}

/** Drops tokens expired more than a week ago (maintenance). */
export function pruneTokens(db: Database, clock: Clock): number {
  return db.query("DELETE FROM email_tokens WHERE expires_ms < ?").run(clock.now() - 7 * 86_400_000).changes;
}

export interface PendingInvitation {
  email: string;
  role: Role;
  created_at: string;
  expires_ms: number;
}

/** An organization's invitations not yet accepted, revoked or expired, newest first (one per address: a newer one replaces the older). */
export function pendingInvitations(db: Database, clock: Clock, orgId: string): PendingInvitation[] {
  return db
    .query<PendingInvitation, [string, number]>(
      `SELECT email_key AS email, role, created_at, expires_ms FROM email_tokens
       WHERE kind = 'invite' AND org_id = ? AND used_at IS NULL AND expires_ms > ? ORDER BY created_at DESC`,
    )
    .all(orgId, clock.now());
}

/** Withdraws the pending invitation of an address: its link stops working. False when there was none. */
export function revokeInvitation(db: Database, clock: Clock, orgId: string, email: string): boolean {
  const now = clock.now();
  return (
    db
      .query("UPDATE email_tokens SET used_at = ? WHERE kind = 'invite' AND org_id = ? AND email_key = ? AND used_at IS NULL AND expires_ms > ?")
      .run(isoAt(now), orgId, emailKey(email), now).changes > 0
  );
}
