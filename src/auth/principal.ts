/**
 * Who is calling: an API key, or a dashboard session and its role. The guard resolves it before
 * routing; routes, rate limits and the work they start read it.
 */
import type { Tier } from "../tenancy/tiers.ts";
import type { Permission } from "./permissions.ts";
import type { Role } from "./roles.ts";

/** A live session as the guard resolves it. */
export interface ActiveSession {
  idHash: string;
  userId: string;
  email: string;
  orgId: string;
  tier: Tier;
  role: Role;
  csrfHash: string;
  createdAt: string;
  idleExpiresMs: number;
  absoluteExpiresMs: number;
}

/** Who is calling: resolved from a valid key or dashboard session on every authenticated request. */
export interface Principal {
  /**
   * The credential acting: the API key's id, or `user:<user id>` for a dashboard session
   * (recorded as created_by / uploaded_by, and the rate-limit bucket).
   */
  keyId: string;
  orgId: string;
  tier: Tier;
  permissions: ReadonlySet<Permission>;
  /** Present when the caller is a dashboard session (cookie), absent for API keys. */
  session?: ActiveSession;
}
