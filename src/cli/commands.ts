/**
 * Administrative commands run against the server's data directory: organizations and API keys.
 * Each returns the text to print, so tests can call them directly as well as through the binary.
 */
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Clock } from "../clock.ts";
import { createApiKey, listApiKeys, revokeApiKey } from "../auth/api-keys.ts";
import { parsePermissions } from "../auth/permissions.ts";
import { createOrganization, listOrganizations, setOrganizationTier } from "../tenancy/organizations.ts";
import { parseTier } from "../tenancy/tiers.ts";

export class UsageError extends Error {}

export interface CommandOutput {
  /** Machine-readable result for stdout (the API key for `keys create`). */
  stdout: string;
  /** Human notes for stderr. */
  stderr?: string;
}

function required(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

export function orgsCommand(db: Database, clock: Clock, args: string[], flags: { tier?: string | undefined }): CommandOutput {
  const [action, ...rest] = args;
  switch (action) {
    case "create": {
      const org = createOrganization(db, clock, required(rest[0], "organization NAME"), parseTier(flags.tier ?? "STARTER"));
      return { stdout: `${org.id}\t${org.name}\t${org.tier}`, stderr: `created organization "${org.name}" (${org.tier}) with its Default project` };
    }
    case "list":
      return { stdout: listOrganizations(db).map((o) => `${o.id}\t${o.name}\t${o.tier}\t${o.created_at}`).join("\n") };
    case "set-tier": {
      const org = setOrganizationTier(db, required(rest[0], "organization NAME"), parseTier(required(rest[1], "TIER")));
      return { stdout: `${org.id}\t${org.name}\t${org.tier}` };
    }
    default:
      throw new UsageError(`unknown orgs command "${action ?? ""}" (expected create, list or set-tier)`);
  }
}

export function keysCommand(
  db: Database,
  clock: Clock,
  args: string[],
  flags: { org?: string | undefined; permissions?: string | undefined; name?: string | undefined },
): CommandOutput {
  const [action, ...rest] = args;
  switch (action) {
    case "create": {
      const { key, info } = createApiKey(db, clock, required(flags.org, "--org NAME"), {
        name: flags.name ?? null,
        ...(flags.permissions ? { permissions: parsePermissions(flags.permissions) } : {}),
      });
      return {
        stdout: key,
        stderr: `created API key ${info.id} (${info.permissions.join(",")}); it is shown only once, store it now`,
      };
    }
    case "list": {
      const rows = listApiKeys(db, required(flags.org, "--org NAME")).map((k) =>
        [k.id, k.display_prefix + "…", k.name ?? "-", k.permissions.join(","), k.created_at, k.last_used_at ?? "never", k.revoked_at ? `revoked ${k.revoked_at}` : "active"].join("\t"),
      );
      return { stdout: rows.join("\n") };
    }
    case "revoke": {
      const info = revokeApiKey(db, clock, required(rest[0], "key ID"));
      return { stdout: `${info.id}\trevoked ${info.revoked_at}` };
    }
    default:
      throw new UsageError(`unknown keys command "${action ?? ""}" (expected create, list or revoke)`);
  }
}

/**
 * A consistent copy of the database taken while the server runs (SQLite's VACUUM INTO reads one
 * snapshot, so concurrent writes neither block it nor tear it).
 */
export function backupCommand(db: Database, args: string[]): CommandOutput {
  const target = resolve(required(args[0], "backup FILE"));
  if (existsSync(target)) throw new UsageError(`${target} already exists; choose a new file name`);
  db.query("VACUUM INTO ?").run(target);
  return { stdout: target, stderr: "database backup written; copy the data directory's blob folders alongside it" };
}
