/**
 * Roles of a user in an organization and what each may do. The API's permissions stay the
 * three of API keys (view, edit, delete); a role is a set of them plus who may manage the
 * organization: owners and admins manage members, invitations and API keys, and only owners
 * may make or unmake owners (so an admin cannot take an organization over).
 */
import type { Permission } from "./permissions.ts";

export const ROLES = ["owner", "admin", "member", "viewer"] as const;
export type Role = (typeof ROLES)[number];

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  owner: ["view", "edit", "delete"],
  admin: ["view", "edit", "delete"],
  member: ["view", "edit"],
  viewer: ["view"],
};

/** Owners and admins manage the organization's members, invitations and API keys. */
export function managesOrganization(role: Role): boolean {
  return role === "owner" || role === "admin";
}

/** Whether `actor` may give or take away `target` (owner only handles owners). */
export function mayAssign(actor: Role, target: Role): boolean {
  if (!managesOrganization(actor)) return false;
  return target !== "owner" || actor === "owner";
}

export function parseRole(raw: string): Role {
  const role = raw.trim().toLowerCase();
  if (!(ROLES as readonly string[]).includes(role)) throw new Error(`unknown role "${raw}"; expected ${ROLES.join(", ")}`);
  return role as Role;
}
