/**
 * API keys: created for an organization, shown once, stored only as a SHA-256 hash.
 * Keys are 256 bits of randomness, so a plain hash is enough (no slow KDF needed): nothing
 * about them can be guessed from the hash. The tier is read from the organization on every
 * request, so an upgrade or downgrade applies to existing keys at once. On the data-access port
 * (docs/scale-out.md).
 */
import type { SqlClient } from "../db/sql-client.ts";
import { isoAt, type Clock } from "../clock.ts";
import { requireOrganization } from "../tenancy/organizations.ts";
import { TIER_LIMITS, type Tier } from "../tenancy/tiers.ts";
import type { Principal } from "./principal.ts";
import { PERMISSIONS, type Permission } from "./permissions.ts";

export const KEY_PREFIX = "mbx_";
const DISPLAY_LENGTH = KEY_PREFIX.length + 8;
/** last_used_at is refreshed at most this often, so reads do not turn into writes. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface ApiKeyInfo {
  id: string;
  org_id: string;
  name: string | null;
  display_prefix: string;
  permissions: Permission[];
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export class ApiKeyError extends Error {}

interface KeyRow {
  id: string;
  org_id: string;
  name: string | null;
  display_prefix: string;
  permissions: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

function toInfo(row: KeyRow): ApiKeyInfo {
  return { ...row, permissions: row.permissions.split(",") as Permission[] };
}

export function hashKey(key: string): string {
  return new Bun.CryptoHasher("sha256").update(key).digest("hex");
}

export async function createApiKey(
  db: SqlClient,
  clock: Clock,
  orgName: string,
  options: { name?: string | null; permissions?: Permission[] } = {},
): Promise<{ key: string; info: ApiKeyInfo }> {
  const org = await requireOrganization(db, orgName);
  if (!TIER_LIMITS[org.tier].apiKeys) {
    throw new ApiKeyError(
      `organization "${org.name}" is on the FREE tier, which has no API access; ` +
        "move it to STARTER or higher first (mediabox orgs set-tier)",
    );
  }
  return insertApiKey(db, clock, org.id, options);
}

/** Stores a new key for an organization whose tier the caller has checked; returns the key (shown once). */
export async function insertApiKey(
  db: SqlClient,
  clock: Clock,
  orgId: string,
  options: { name?: string | null; permissions?: Permission[] } = {},
): Promise<{ key: string; info: ApiKeyInfo }> {
  const permissions = options.permissions ?? [...PERMISSIONS];
  const key = KEY_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  const row: KeyRow = {
    id: crypto.randomUUID(),
    org_id: orgId,
    name: options.name ?? null,
    display_prefix: key.slice(0, DISPLAY_LENGTH),
    permissions: permissions.join(","),
    created_at: isoAt(clock.now()),
    last_used_at: null,
    revoked_at: null,
  };
  await db.run(
    `INSERT INTO api_keys (id, org_id, name, display_prefix, key_hash, permissions, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [row.id, row.org_id, row.name, row.display_prefix, hashKey(key), row.permissions, row.created_at],
  );
  return { key, info: toInfo(row) };
}

const KEY_COLUMNS = "id, org_id, name, display_prefix, permissions, created_at, last_used_at, revoked_at";

export async function listApiKeysOf(db: SqlClient, orgId: string): Promise<ApiKeyInfo[]> {
  return (await db.all<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE org_id = ? ORDER BY created_at, id`, [orgId])).map(toInfo);
}

/** Revokes a key of the organization; null when the organization has no key of that id. */
export async function revokeApiKeyOf(db: SqlClient, clock: Clock, orgId: string, keyId: string): Promise<ApiKeyInfo | null> {
  const owned = await db.one("SELECT id FROM api_keys WHERE id = ? AND org_id = ?", [keyId, orgId]);
  return owned ? revokeApiKey(db, clock, keyId) : null;
}

export async function listApiKeys(db: SqlClient, orgName: string): Promise<ApiKeyInfo[]> {
  return listApiKeysOf(db, (await requireOrganization(db, orgName)).id);
}

export async function revokeApiKey(db: SqlClient, clock: Clock, keyId: string): Promise<ApiKeyInfo> {
  const revokedAt = isoAt(clock.now());
  // One statement: of two revocations at once, the first sets the time and the second sees it.
  const revoked = await db.one<KeyRow>(`UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING ${KEY_COLUMNS}`, [revokedAt, keyId]);
  if (revoked) return toInfo(revoked);
  const row = await db.one<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`, [keyId]);
  if (!row) throw new ApiKeyError(`no API key with id ${keyId}`);
  return toInfo(row);
}

/** The principal for a presented key, or null when the key is unknown, malformed or revoked. */
export async function authenticateKey(db: SqlClient, clock: Clock, presented: string): Promise<Principal | null> {
  if (!presented.startsWith(KEY_PREFIX) || presented.length > 200) return null;
  const row = await db.one<{ id: string; org_id: string; tier: Tier; permissions: string; last_used_at: string | null }>(
    `SELECT k.id, k.org_id, o.tier, k.permissions, k.last_used_at
     FROM api_keys k JOIN organizations o ON o.id = k.org_id
     WHERE k.key_hash = ? AND k.revoked_at IS NULL`,
    [hashKey(presented)],
  );
  if (!row) return null;
  const now = clock.now();
  if (!row.last_used_at || now - Date.parse(row.last_used_at) > LAST_USED_RESOLUTION_MS) {
    await db.run("UPDATE api_keys SET last_used_at = ? WHERE id = ?", [isoAt(now), row.id]);
  }
  return {
    keyId: row.id,
    orgId: row.org_id,
    tier: row.tier,
    permissions: new Set(row.permissions.split(",") as Permission[]),
  };
}
