/**
 * The first run: while no user exists, the appliance can make its owner (an organization and
 * the user who owns it) from the browser, once. Only a person at the machine may do that: a
 * request from loopback (after trusted proxies, so a proxy on the same host does not count as
 * local for its clients), or one that presents the setup token the server printed at start. The
 * token lives in the database, made by the first process that asks, so every api process of a
 * deployment prints and accepts the same one. The check that no user exists and the creation run
 * in one transaction, so two racing requests cannot both become owner (on PostgreSQL the
 * transaction first takes an advisory lock held to its end, as there is no row yet to lock); once
 * a user exists the token is worth nothing.
 */
import ipaddr from "ipaddr.js";
import type { Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { ApiError, errorMessage } from "../errors.ts";
import { createOrganization, OrganizationError } from "../tenancy/organizations.ts";
import type { Tier } from "../tenancy/tiers.ts";
import { checkNewPassword, hashPassword } from "./passwords.ts";
import { randomToken, sameSecret } from "./secrets.ts";
import { createUser, setMembership, UserError, validEmail, type UserRow } from "./users.ts";

/** The site's own organization: the person who owns the machine is not rate limited by it (`mediabox orgs set-tier` changes it). */
export const OWNER_TIER: Tier = "CUSTOM";

export interface OwnerInput {
  organization_name: string;
  email: string;
  password: string;
  name?: string | undefined;
  setup_token?: string | undefined;
}

export function isLoopback(ip: string): boolean {
  try {
    const parsed = ipaddr.process(ip);
    return parsed.range() === "loopback";
  } catch {
    return false;
  }
}

export async function hasUsers(db: SqlClient): Promise<boolean> {
  return (await db.one<{ n: number }>("SELECT count(*) AS n FROM (SELECT 1 FROM users LIMIT 1) AS one_user"))!.n === 1;
}

export class FirstRun {
  private known: string | null = null;

  constructor(
    private readonly db: SqlClient,
    private readonly clock: Clock,
  ) {}

  /** Printed at start while no user exists, for whoever sets the appliance up from another machine. */
  async token(): Promise<string> {
    if (this.known) return this.known;
    await this.db.run("INSERT INTO first_run_token (slot, token, created_at) VALUES ('owner', ?, ?) ON CONFLICT (slot) DO NOTHING", [randomToken(), this.clock.now()]);
    this.known = (await this.db.one<{ token: string }>("SELECT token FROM first_run_token WHERE slot = 'owner'"))!.token;
    return this.known;
  }

  /** True while the owner may still be made from the browser. */
  async open(): Promise<boolean> {
    return !(await hasUsers(this.db));
  }

  /** Makes the owner: a new organization, and its owner with a verified address (they are at the machine). */
  async createOwner(input: OwnerInput, ip: string): Promise<UserRow> {
    if (!(await this.open())) throw closed();
    if (!isLoopback(ip) && !(input.setup_token && sameSecret(input.setup_token, await this.token()))) {
      throw new ApiError(
        "SETUP_TOKEN_REQUIRED",
        input.setup_token
          ? "setup_token: is not the token this server printed at start (look for \"first run\" in its log)"
          : "setup_token: is required from another machine: copy it from the server's log (\"first run\"), or open the dashboard on the machine itself (http://127.0.0.1)",
      );
    }
    let email: string;
    try {
      email = validEmail(input.email);
    } catch (err) {
      throw new ApiError("VALIDATION_ERROR", `email: ${err instanceof UserError ? "is not an email address" : errorMessage(err)}`);
    }
    checkNewPassword(input.password, email);
    const passwordHash = await hashPassword(input.password);
    return this.db.transaction(async (tx) => {
      await tx.one(tx.dialect.transactionLock("mediabox_first_run"));
      if (await hasUsers(tx)) throw closed();
      let orgId: string;
      try {
        orgId = (await createOrganization(tx, this.clock, input.organization_name, OWNER_TIER)).id;
      } catch (err) {
        if (err instanceof OrganizationError) throw new ApiError("VALIDATION_ERROR", `organization_name: ${errorMessage(err).replace(/^name: /, "")}`);
        throw err;
      }
      const user = await createUser(tx, this.clock, { email, name: input.name ?? null, passwordHash, verified: true });
      await setMembership(tx, this.clock, orgId, user.id, "owner");
      await tx.run("DELETE FROM first_run_token");
      return user;
    });
  }
}

function closed(): ApiError {
  return new ApiError("SETUP_COMPLETE", "this appliance already has its owner; sign in, or ask an admin for an invitation");
}
