/**
 * Users and their memberships: the only writer of the `users` and `memberships` tables. A user
 * is a person identified by an email address (compared lower-cased); a membership gives them a
 * role in one organization. Passwords arrive here already hashed (passwords.ts). On the data-access
 * port (docs/scale-out.md): a change of roles first locks the organization's row (PostgreSQL), so two
 * processes cannot each demote one of the last two owners.
 */
import { isoAt, type Clock } from "../clock.ts";
import { atomically, type SqlClient } from "../db/sql-client.ts";
import { ApiError } from "../errors.ts";
import { lockOrganization } from "../tenancy/organizations.ts";
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

export function findUserByEmail(db: SqlClient, email: string): Promise<UserRow | null> {
  return db.one<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE email_key = ?`, [emailKey(email)]);
}

export function getUser(db: SqlClient, id: string): Promise<UserRow | null> {
  return db.one<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`, [id]);
}

export async function requireUserByEmail(db: SqlClient, email: string): Promise<UserRow> {
  const user = await findUserByEmail(db, email);
  if (!user) throw new UserError(`no user with email ${email}`);
  return user;
}

export async function createUser(
  db: SqlClient,
  clock: Clock,
  input: { email: string; name?: string | null; passwordHash?: string | null; verified: boolean },
): Promise<UserRow> {
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
  // The unique email_key settles two creations at once (another process): the second inserts nothing.
  const inserted = await db.one(
    `INSERT INTO users (id, email, email_key, name, password_hash, email_verified_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (email_key) DO NOTHING RETURNING id`,
    [row.id, row.email, emailKey(email), row.name, row.password_hash, row.email_verified_at, now, now],
  );
  if (!inserted) throw new UserError(`a user with email ${email} already exists`);
  return row;
}

export async function setPasswordHash(db: SqlClient, clock: Clock, userId: string, hash: string): Promise<void> {
  await db.run("UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?", [hash, isoAt(clock.now()), userId]);
}

export async function markEmailVerified(db: SqlClient, clock: Clock, userId: string): Promise<void> {
  const now = isoAt(clock.now());
  await db.run("UPDATE users SET email_verified_at = coalesce(email_verified_at, ?), updated_at = ? WHERE id = ?", [now, now, userId]);
}

export async function listUsers(db: SqlClient, orgId?: string): Promise<(User & { memberships: Membership[] })[]> {
  const users = orgId
    ? await db.all<UserRow>(`SELECT ${USER_COLUMNS.split(", ").map((c) => `u.${c}`).join(", ")} FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.org_id = ? ORDER BY u.email_key`, [orgId])
    : await db.all<UserRow>(`SELECT ${USER_COLUMNS} FROM users ORDER BY email_key`);
  const listed = [];
  for (const u of users) listed.push({ ...publicUser(u), memberships: await membershipsOf(db, u.id) });
  return listed;
}

export function membershipsOf(db: SqlClient, userId: string): Promise<Membership[]> {
  return db.all<Membership>(
    `SELECT m.org_id, o.name AS org_name, o.tier, m.role FROM memberships m JOIN organizations o ON o.id = m.org_id
     WHERE m.user_id = ? ORDER BY o.name_key`,
    [userId],
  );
}

export function membership(db: SqlClient, orgId: string, userId: string): Promise<Membership | null> {
  return db.one<Membership>(
    `SELECT m.org_id, o.name AS org_name, o.tier, m.role FROM memberships m JOIN organizations o ON o.id = m.org_id
     WHERE m.org_id = ? AND m.user_id = ?`,
    [orgId, userId],
  );
}

async function ownerCount(db: SqlClient, orgId: string): Promise<number> {
  return (await db.one<{ n: number }>("SELECT count(*) AS n FROM memberships WHERE org_id = ? AND role = 'owner'", [orgId]))!.n;
}

/**
 * Gives a user a role in an organization (adds the membership or changes its role). Inside the
 * caller's transaction when `db` is one, else in one of its own.
 */
export async function setMembership(db: SqlClient, clock: Clock, orgId: string, userId: string, role: Role): Promise<void> {
  const set = async (tx: SqlClient) => {
    await lockOrganization(tx, orgId);
    const current = await membership(tx, orgId, userId);
    // An organization always keeps an owner: someone must be able to manage it.
    if (current?.role === "owner" && role !== "owner" && (await ownerCount(tx, orgId)) === 1) {
      throw new ApiError("LAST_OWNER", "the organization's last owner cannot be demoted; make another member owner first");
    }
    await tx.run(
      `INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (org_id, user_id) DO UPDATE SET role = excluded.role`,
      [orgId, userId, role, isoAt(clock.now())],
    );
  };
  await atomically(db, set);
}

/** Takes a user out of an organization; their sessions there end with the membership. */
export function removeMembership(db: SqlClient, orgId: string, userId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    await lockOrganization(tx, orgId);
    const current = await membership(tx, orgId, userId);
    if (!current) return false;
    if (current.role === "owner" && (await ownerCount(tx, orgId)) === 1) {
      throw new ApiError("LAST_OWNER", "the organization's last owner cannot be removed; make another member owner first");
    }
    await tx.run("DELETE FROM memberships WHERE org_id = ? AND user_id = ?", [orgId, userId]);
    return true;
  });
}
