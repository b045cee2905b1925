/**
 * Mailed tokens: the only writer of `email_tokens`. A token proves control of a mailbox for one
 * purpose (verify the address, reset the password, accept an invitation); it is random, stored
 * only as its hash, expires, and is used at most once (consuming it is one conditional UPDATE,
 * so two concurrent uses cannot both succeed). On the data-access port (docs/scale-out.md).
 */
import { isoAt, type Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
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
export async function issueToken(
  db: SqlClient,
  clock: Clock,
  input: { kind: TokenKind; email: string; userId?: string | null; orgId?: string | null; role?: Role | null },
): Promise<{ token: string; expiresAtMs: number }> {
  const token = randomToken();
  const now = clock.now();
  const expires = now + TOKEN_LIFETIME_MS[input.kind];
  const key = emailKey(input.email);
  await db.transaction(async (tx) => {
    // Invitations to different organizations may be pending side by side; other kinds replace their predecessors.
    if (input.kind === "invite") {
      await tx.run("UPDATE email_tokens SET used_at = ? WHERE kind = 'invite' AND email_key = ? AND org_id = ? AND used_at IS NULL", [isoAt(now), key, input.orgId ?? null]);
    } else {
      await tx.run("UPDATE email_tokens SET used_at = ? WHERE kind = ? AND email_key = ? AND used_at IS NULL", [isoAt(now), input.kind, key]);
    }
    await tx.run(
      `INSERT INTO email_tokens (token_hash, kind, user_id, email_key, org_id, role, created_at, expires_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [sha256Hex(token), input.kind, input.userId ?? null, key, input.orgId ?? null, input.role ?? null, isoAt(now), expires],
    );
  });
  return { token, expiresAtMs: expires };
}

function invalid(): ApiError {
  // One answer for unknown, used, expired and wrong-kind tokens: the caller learns nothing more.
  return new ApiError("TOKEN_INVALID", "token: is invalid, already used or expired; ask for a new link");
}

/** The token's record if it is valid for `kind`, without using it. */
export async function peekToken(db: SqlClient, clock: Clock, kind: TokenKind, token: string): Promise<TokenRecord> {
  const row = await db.one<TokenRecord>(
    `SELECT kind, user_id, email_key, org_id, role, expires_ms FROM email_tokens
     WHERE token_hash = ? AND kind = ? AND used_at IS NULL AND expires_ms > ?`,
    [sha256Hex(token), kind, clock.now()],
  );
  if (!row) throw invalid();
  return row;
}

/** Uses the token (once); throws TOKEN_INVALID when it is not valid for `kind`. */
export async function consumeToken(db: SqlClient, clock: Clock, kind: TokenKind, token: string): Promise<TokenRecord> {
  const now = clock.now();
  const row = await db.one<TokenRecord>(
    `UPDATE email_tokens SET used_at = ? WHERE token_hash = ? AND kind = ? AND used_at IS NULL AND expires_ms > ?
     RETURNING kind, user_id, email_key, org_id, role, expires_ms`,
    [isoAt(now), sha256Hex(token), kind, now],
  );
  if (!row) throw invalid();
  return row;
}

/** Drops tokens expired more than a week ago (maintenance). */
export async function pruneTokens(db: SqlClient, clock: Clock): Promise<number> {
  return (await db.run("DELETE FROM email_tokens WHERE expires_ms < ?", [clock.now() - 7 * 86_400_000])).changes;
}

export interface PendingInvitation {
  email: string;
  role: Role;
  created_at: string;
  expires_ms: number;
}

/** An organization's invitations not yet accepted, revoked or expired, newest first (one per address: a newer one replaces the older). */
export function pendingInvitations(db: SqlClient, clock: Clock, orgId: string): Promise<PendingInvitation[]> {
  return db.all<PendingInvitation>(
    `SELECT email_key AS email, role, created_at, expires_ms FROM email_tokens
     WHERE kind = 'invite' AND org_id = ? AND used_at IS NULL AND expires_ms > ? ORDER BY created_at DESC`,
    [orgId, clock.now()],
  );
}

/** Withdraws the pending invitation of an address: its link stops working. False when there was none. */
export async function revokeInvitation(db: SqlClient, clock: Clock, orgId: string, email: string): Promise<boolean> {
  const now = clock.now();
  const { changes } = await db.run(
    "UPDATE email_tokens SET used_at = ? WHERE kind = 'invite' AND org_id = ? AND email_key = ? AND used_at IS NULL AND expires_ms > ?",
    [isoAt(now), orgId, emailKey(email), now],
  );
  return changes > 0;
}
