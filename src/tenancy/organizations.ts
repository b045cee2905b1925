/**
 * Organizations: the tenant every row belongs to. Creating one also creates its Default
 * project, in the same transaction, so an organization is never seen without it.
 */
import type { Database } from "bun:sqlite";
import type { SqlClient } from "../db/sql-client.ts";
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

export function createOrganization(db: Database, clock: Clock, name: string, tier: Tier): Organization {
  let clean: string;
  try {
    clean = validName("name", name);
  } catch (err) {
    throw new OrganizationError(errorMessage(err));
  }
  const org: Organization = { id: crypto.randomUUID(), name: clean, tier, created_at: isoAt(clock.now()) };
  db.transaction(() => {
    if (findOrganization(db, clean)) throw new OrganizationError(`organization "${clean}" already exists`);
    db.query("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, ?, ?)").run(
      org.id,
      org.name,
      nameKey(org.name),
      org.tier,
      org.created_at,
    );
    createDefaultProject(db, clock, org.id);
  }).immediate();
  return org;
}

export function findOrganization(db: Database, name: string): Organization | null {
  return db
    .query<Organization, [string]>("SELECT id, name, tier, created_at FROM organizations WHERE name_key = ?")
    .get(nameKey(name.trim()));
}

export function requireOrganization(db: Database, name: string): Organization {
  const org = findOrganization(db, name);
  if (!org) throw new OrganizationError(`no organization named "${name}"`);
  return org;
}

export function listOrganizations(db: Database): Organization[] {
  return db.query<Organization, []>("SELECT id, name, tier, created_at FROM organizations ORDER BY name_key").all();
}

/** On the data-access port (docs/scale-out.md): the payments webhook runs it inside its transaction. */
export async function setOrganizationTier(db: SqlClient, name: string, tier: Tier): Promise<Organization> {
  const org = await db.one<Organization>("UPDATE organizations SET tier = ? WHERE name_key = ? RETURNING id, name, tier, created_at", [tier, nameKey(name.trim())]);
  if (!org) throw new OrganizationError(`no organization named "${name}"`);
  return org;
}
