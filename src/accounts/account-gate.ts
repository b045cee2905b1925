/**
 * Who may call the account endpoints: a dashboard session (never an API key), and for managing the
 * organization an owner or admin. Shared by the account route modules.
 */
import { Elysia } from "elysia";
import type { ActiveSession } from "../auth/principal.ts";
import { managesOrganization, mayAssign, type Role } from "../auth/roles.ts";
import { ApiError } from "../errors.ts";
import { principalOf } from "../http/request-context.ts";

/** The caller's dashboard session; API keys are refused here (a key must not mint keys or manage people). */
export function sessionOf(request: Request): ActiveSession {
  const principal = principalOf(request);
  if (!principal.session) {
    throw new ApiError("SESSION_REQUIRED", "this endpoint needs a dashboard session (sign in); API keys cannot manage accounts, sessions or keys");
  }
  return principal.session;
}

/** Owners and admins manage the organization; `assigning` a role also needs the right to give (or take) it. */
export function requireManager(session: ActiveSession, assigning?: Role): void {
  if (!managesOrganization(session.role) || (assigning && !mayAssign(session.role, assigning))) {
    throw new ApiError("PERMISSION_DENIED", assigning === "owner" && session.role === "admin" ? "only owners give, take or invite the owner role" : `your role (${session.role}) cannot manage this organization`);
  }
}

/**
 * Route option `account: "member" | "manager"`: the session (and for "manager" a role that manages
 * the organization) is checked in transform, before the body is validated, so a viewer or an API
 * key learns 403 and nothing about the body's shape. Checks that need the body (which role may be
 * given) stay in the handlers.
 */
export const accountGate = new Elysia({ name: "mediabox-account-gate" }).macro({
  account: (needed: "member" | "manager") => ({
    transform({ request }) {
      const session = sessionOf(request);
      if (needed === "manager") requireManager(session);
    },
  }),
});
