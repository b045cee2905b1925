/** HTTP binding of `/account/members`: the session's organization's members and their roles. */
import { Elysia, t } from "elysia";
import { ApiError } from "../errors.ts";
import { errorResponses } from "../http/shapes.ts";
import { accountGate, requireManager, sessionOf } from "./account-gate.ts";
import type { AccountRouteDeps } from "./session-answers.ts";
import { listUsers, membership, removeMembership, setMembership } from "./users.ts";
import { MemberList, MemberParams, MemberRole, RoleChange, SESSION_ERRORS } from "./model.ts";

export function memberRoutes(ctx: AccountRouteDeps) {
  const { sql: db, clock } = ctx;
  return new Elysia({ tags: ["Accounts"] })
    .use(accountGate)
    .get(
      "/account/members",
      async ({ request }) => {
        const session = sessionOf(request);
        return {
          items: (await listUsers(db, session.orgId)).map((u) => ({
            id: u.id, email: u.email, name: u.name, email_verified: u.email_verified_at !== null,
            role: u.memberships.find((m) => m.org_id === session.orgId)!.role,
          })),
        };
      },
      {
        response: {
          200: MemberList,
          ...SESSION_ERRORS,
        },
        detail: { summary: "Members of the session's organization" },
      },
    )
    .patch(
      "/account/members/:user_id",
      async ({ request, params, body }) => {
        const session = sessionOf(request);
        const target = await membership(db, session.orgId, params.user_id);
        if (!target) throw new ApiError("MEMBER_NOT_FOUND", `no member ${params.user_id} in this organization`);
        // Both the role taken away and the role given must be the actor's to give (admins leave owners alone).
        requireManager(session, target.role);
        requireManager(session, body.role);
        await setMembership(db, clock, session.orgId, params.user_id, body.role);
        return { id: params.user_id, role: body.role };
      },
      {
        account: "manager",
        params: MemberParams,
        body: RoleChange,
        response: { 200: MemberRole, ...SESSION_ERRORS, ...errorResponses([404, 409], { public: true }) },
        detail: {
          summary: "Change a member's role",
          description: "Owners and admins; only owners give or take the owner role; 409 LAST_OWNER for the last owner. Applies to the member's sessions at once. Needs X-CSRF-Token.",
        },
      },
    )
    .delete(
      "/account/members/:user_id",
      async ({ request, params, set }) => {
        const session = sessionOf(request);
        const target = await membership(db, session.orgId, params.user_id);
        if (!target) throw new ApiError("MEMBER_NOT_FOUND", `no member ${params.user_id} in this organization`);
        requireManager(session, target.role);
        await removeMembership(db, session.orgId, params.user_id);
        set.status = 204;
        return undefined;
      },
      {
        account: "manager",
        params: MemberParams,
        response: { 204: t.Void(), ...SESSION_ERRORS, ...errorResponses([404, 409], { public: true }) },
        detail: {
          summary: "Remove a member from the organization",
          description: "Owners and admins (admins cannot remove owners); 409 LAST_OWNER for the last owner. The member's sessions in this organization end at once; the user keeps their account. Needs X-CSRF-Token.",
        },
      },
    );
}
