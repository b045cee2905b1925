/**
 * Users and their memberships: the only writer of the `users` and `memberships` tables. A user
 * is a person identified by an email address (compared lower-cased); a membership gives them a
 * role in one organization. Passwords arrive here already hashed (passwords.ts).
 */
import type { Database } from "bun:sqlite";
import { isoAt, type Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import type { Tier } from "../tenancy/tiers.ts";
import type { Role } from "../auth/roles.ts";

export interface User {
  id: string;
  email: string;
  name: string | null;
  email_verified_at: string | null;
  disabled_at: string | null;
  created_at: string;
}

export interface UserRow extends User {
  password_hash: string | null;
}

export interface Membership {
  org_id: string;
  org_name: string;
  tier: Tier;
  role: Role;
}

export class UserError extends Error {}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

export function validEmail(raw: string): string {
  const email = raw.trim();
  if (email.length > 320 || !EMAIL.test(email) || !email.split("@")[1]!.includes(".") && !email.endsWith("@localhost")) {
    throw new UserError(`"${raw}" is not an email address`);
  }
  return email;
}

const USER_COLUMNS = "id, email, name, password_hash, email_verified_at, disabled_at, created_at";

export function publicUser(row: UserRow): User {
  const { password_hash: _omit, ...user } = row;
  return user;
}

export function findUserByEmail(db: Database, email: string): UserRow | null {
  return db.query<UserRow, [string]>(`SELECT ${USER_COLUMNS} FROM users WHERE email_key = ?`).get(emailKey(email));
}

export function getUser(db: Database, id: string): UserRow | null {
  return db.query<UserRow, [string]>(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`).get(id);
}

export function requireUserByEmail(db: Database, email: string): UserRow {
  const user = findUserByEmail(db, email);
  if (!user) throw new UserError(`no user with email ${email}`);
  return user;
}

export function createUser(
  db: Database,
  clock: Clock,
  input: { email: string; name?: string | null; passwordHash?: string | null; verified: boolean },
): UserRow {
  const email = validEmail(input.email);
  const now = isoAt(clock.now());
  const row: UserRow = {
    id: crypto.randomUUID(),
    email,
    name: input.name?.trim() || null,
    password_hash: input.passwordHash ?? null,
    email_verified_at: input.verified ? now : null,
    disabled_at: null,
    created_at: now,
  };
  if (findUserByEmail(db, email)) throw new UserError(`a user with email ${email} already exists`);
  db.query(
    `INSERT INTO users (id, email, email_key, name, password_hash, email_verified_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(row.id, row.email, emailKey(email), row.name, row.password_hash, row.email_verified_at, now, now);
  return row;
}

export function setPasswordHash(db: Database, clock: Clock, userId: string, hash: string): void {
  db.query("UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?").run(hash, isoAt(clock.now()), userId);
}

export function markEmailVerified(db: Database, clock: Clock, userId: string): void {
  const now = isoAt(clock.now());
  db.query("UPDATE users SET email_verified_at = coalesce(email_verified_at, ?), updated_at = ? WHERE id = ?").run(now, now, userId);
}

export function listUsers(db: Database, orgId?: string): (User & { memberships: Membership[] })[] {
  const users = orgId
    ? db.query<UserRow, [string]>(`SELECT ${USER_COLUMNS.split(", ").map((c) => `u.${c}`).join(", ")} FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.org_id = ? ORDER BY u.email_key`).all(orgId)
    : db.query<UserRow, []>(`SELECT ${USER_COLUMNS} FROM users ORDER BY email_key`).all();
  return users.map((u) => ({ ...publicUser(u), memberships: membershipsOf(db, u.id) }));
}

export function membershipsOf(db: Database, userId: string): Membership[] {
  return db
    .query<Membership, [string]>(
      `SELECT m.org_id, o.name AS org_name, o.tier, m.role FROM memberships m JOIN organizations o ON o.id = m.org_id
       WHERE m.user_id = ? ORDER BY o.name_key`,
    )
    .all(userId);
}

export function membership(db: Database, orgId: string, userId: string): Membership | null {
  return (
    db
      .query<Membership, [string, string]>(
        `SELECT m.org_id, o.name AS org_name, o.tier, m.role FROM memberships m JOIN organizations o ON o.id = m.org_id
         WHERE m.org_id = ? AND m.user_id = ?`,
      )
      .get(orgId, userId) ?? null
  );
}

function ownerCount(db: Database, orgId: string): number {
  return db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM memberships WHERE org_id = ? AND role = 'owner'").get(orgId)!.n;
}

/** Gives a user a role in an organization (adds the membership or changes its role). */
export function setMembership(db: Database, clock: Clock, orgId: string, userId: string, role: Role): void {
  db.transaction(() => {
    const current = membership(db, orgId, userId);
    // An organization always keeps an owner: someone must be able to manage it.
    if (current?.role === "owner" && role !== "owner" && ownerCount(db, orgId) === 1) {
      throw new ApiError("LAST_OWNER", "the organization's last owner cannot be demoted; make another member owner first");
    }
    db.query(
      `INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (org_id, user_id) DO UPDATE SET role = excluded.role`,
    ).run(orgId, userId, role, isoAt(clock.now()));
  }).immediate();
}

/** Takes a user out of an organization; their sessions there end with the membership. */
export function removeMembership(db: Database, orgId: string, userId: string): boolean {
  return db.transaction(() => {
    const current = membership(db, orgId, userId);
    if (!current) return false;
    if (current.role === "owner" && ownerCount(db, orgId) === 1) {
      throw new ApiError("LAST_OWNER", "the organization's last owner cannot be removed; make another member owner first");
    }
    db.query("DELETE FROM memberships WHERE org_id = ? AND user_id = ?").run(orgId, userId);
    return true;
  }).immediate();
}
