/**
 * Organizations: the tenant every row belongs to. Creating one also creates its Default
 * project, in the same transaction, so an organization is never seen without it. On the
 * data-access port (docs/scale-out.md).
 */
import { atomically, type SqlClient } from "../db/sql-client.ts";
import { isoAt, type Clock } from "../clock.ts";
import { createDefaultProject } from "./projects.ts";
import { nameKey, validName } from "./names.ts";
import type { Tier } from "./tiers.ts";
import { errorMessage } from "../errors.ts";

export interface Organization {
  id: string;
  name: string;
  tier: Tier;
  created_at: string;
}

export class OrganizationError extends Error {}

/**
 * Inside the caller's transaction when `db` is one (registration and the first run create the
 * organization with its owner), else in one of its own.
 */
export async function createOrganization(db: SqlClient, clock: Clock, name: string, tier: Tier): Promise<Organization> {
  let clean: string;
  try {
    clean = validName("name", name);
  } catch (err) {
    throw new OrganizationError(errorMessage(err));
  }
  const org: Organization = { id: crypto.randomUUID(), name: clean, tier, created_at: isoAt(clock.now()) };
  const create = async (tx: SqlClient) => {
    if (await findOrganization(tx, clean)) throw new OrganizationError(`organization "${clean}" already exists`);
    // A concurrent creation of the same name (another process) meets the unique name_key instead.
    const inserted = await tx.one("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (name_key) DO NOTHING RETURNING id", [
      org.id, org.name, nameKey(org.name), org.tier, org.created_at,
    ]);
    if (!inserted) throw new OrganizationError(`organization "${clean}" already exists`);
    await createDefaultProject(tx, clock, org.id);
  };
  await atomically(db, create);
  return org;
}

export function findOrganization(db: SqlClient, name: string): Promise<Organization | null> {
  return db.one<Organization>("SELECT id, name, tier, created_at FROM organizations WHERE name_key = ?", [nameKey(name.trim())]);
}

export async function requireOrganization(db: SqlClient, name: string): Promise<Organization> {
  const org = await findOrganization(db, name);
  if (!org) throw new OrganizationError(`no organization named "${name}"`);
  return org;
}

export function listOrganizations(db: SqlClient): Promise<Organization[]> {
  return db.all<Organization>("SELECT id, name, tier, created_at FROM organizations ORDER BY name_key");
}

/**
 * Makes changes to what the organization owns take turns until the transaction ends: its row is
 * locked on PostgreSQL (another process's check-then-write waits); SQLite's write transaction
 * already excludes other writers. Projects, memberships and custom schemas check their limits and
 * unique names under it.
 */
export async function lockOrganization(tx: SqlClient, orgId: string): Promise<void> {
  await tx.one(`SELECT id FROM organizations WHERE id = ? ${tx.dialect.forUpdate}`, [orgId]);
}

/** The payments webhook runs it inside its transaction. */
export async function setOrganizationTier(db: SqlClient, name: string, tier: Tier): Promise<Organization> {
  const org = await db.one<Organization>("UPDATE organizations SET tier = ? WHERE name_key = ? RETURNING id, name, tier, created_at", [tier, nameKey(name.trim())]);
  if (!org) throw new OrganizationError(`no organization named "${name}"`);
  return org;
}
