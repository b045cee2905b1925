/** HTTP binding of `/account/invitations`: inviting people into the session's organization (the mailed link, or the link to pass on). */
import { Elysia, t } from "elysia";
import { isoAt } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { publicOrigin } from "../http/request-context.ts";
import { errorResponses } from "../http/shapes.ts";
import { accountGate, requireManager, sessionOf } from "./account-gate.ts";
import { pendingInvitations, revokeInvitation } from "./email-tokens.ts";
import type { AccountRouteDeps } from "./session-answers.ts";
import { membership } from "./users.ts";
import { InvitationBody, InvitationList, InvitationParams, InvitationSent, SESSION_ERRORS } from "./model.ts";

export function invitationRoutes(ctx: AccountRouteDeps) {
  const { sql: db, clock, config, accounts } = ctx;
  return new Elysia({ tags: ["Accounts"] })
    .use(accountGate)
    .post(
      "/account/invitations",
      async ({ request, body, set }) => {
        const session = sessionOf(request);
        requireManager(session, body.role);
        const org = (await membership(db, session.orgId, session.userId))!;
        const invitation = await accounts.invite(
          { orgId: session.orgId, orgName: org.org_name, email: body.email, role: body.role, invitedBy: session.email },
          publicOrigin(config, request),
          false,
        );
        set.status = 202;
        // Without a mail server nothing reaches the invitee: the inviter (an owner or admin, who could print it with the CLI) gets the link to pass on.
        const mailed = accounts.mailer.configured;
        return { email: body.email, role: body.role, organization_id: session.orgId, expires_at: isoAt(invitation.expiresAtMs), mailed, ...(mailed ? {} : { invite_url: invitation.link }) };
      },
      {
        account: "manager",
        body: InvitationBody,
        response: {
          202: InvitationSent, ...SESSION_ERRORS,
          ...errorResponses([400], { public: true }),
        },
        detail: {
          summary: "Invite someone into the organization",
          description:
            "Owners and admins; only owners invite owners. With SMTP (MEDIABOX_SMTP_HOST) the link is mailed and never answered; without, nothing is sent and the answer carries `invite_url` for the inviter to pass on (extension). Needs X-CSRF-Token.",
        },
      },
    )
    .get(
      "/account/invitations",
      async ({ request }) => ({
        items: (await pendingInvitations(db, clock, sessionOf(request).orgId)).map((i) => ({ email: i.email, role: i.role, invited_at: i.created_at, expires_at: isoAt(i.expires_ms) })),
      }),
      {
        account: "manager",
        response: { 200: InvitationList, ...SESSION_ERRORS },
        detail: { summary: "Pending invitations of the organization (extension)", description: "Owners and admins. Not yet accepted, revoked or expired; newest first." },
      },
    )
    .delete(
      "/account/invitations/:email",
      async ({ request, params, set }) => {
        const session = sessionOf(request);
        if (!(await revokeInvitation(db, clock, session.orgId, params.email))) throw new ApiError("INVITATION_NOT_FOUND", `no pending invitation of ${params.email} in this organization`);
        set.status = 204;
        return undefined;
      },
      {
        account: "manager",
        params: InvitationParams,
        response: { 204: t.Void(), ...SESSION_ERRORS, ...errorResponses([404], { public: true }) },
        detail: { summary: "Revoke a pending invitation (extension)", description: "Owners and admins; the link stops working at once. Needs X-CSRF-Token." },
      },
    );
}
