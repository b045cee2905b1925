/**
 * HTTP binding of the dashboard's sessions: `/auth/session/*` without the identity provider (sign-in
 * options, the first run's owner, sign-in, registration, email verification, password reset,
 * invitations accepted, the session, rotation, switching organization, sign-out). The flows are in
 * accounts.ts.
 */
import { Elysia, t } from "elysia";
import { ApiError } from "../errors.ts";
import { publicOrigin, requestInfo } from "../http/request-context.ts";
import { errorResponses } from "../http/shapes.ts";
import { accountGate, sessionOf } from "./account-gate.ts";
import { clearedSessionCookies } from "./cookies.ts";
import { isLoopback, OWNER_TIER } from "./first-run.ts";
import { client, sessionAnswers, type AccountRouteDeps } from "./session-answers.ts";
import { revokeSession, revokeUserSessions } from "./sessions.ts";
import { getUser, membership } from "./users.ts";
import { Accepted, Credentials, EmailBody, InvitationAcceptance, Joined, OrganizationChoice, OwnerSetup, PasswordReset, Registration, ResetTokenCheck, SESSION_ERRORS, SessionsEnded, SessionView, SignInOptions, TokenBody } from "./model.ts";

export function sessionRoutes(ctx: AccountRouteDeps) {
  const { sql: db, clock, config, accounts } = ctx;
  const { view, endPrevious, signedIn, rotated } = sessionAnswers(ctx);
  return new Elysia({ tags: ["Accounts"] })
    .use(accountGate)
    .get(
      "/auth/session/options",
      async ({ request, set }) => {
        set.headers["cache-control"] = "no-store";
        const needsOwner = await accounts.firstRun.open();
        return {
          signed_in: Boolean(requestInfo(request).principal?.session),
          needs_owner: needsOwner,
          setup_token_required: needsOwner && !isLoopback(requestInfo(request).ip),
          identity_provider: accounts.oidc.configured ? accounts.oidc.name : null,
          registration_open: config.allowRegistration,
          mail_configured: accounts.mailer.configured,
        };
      },
      {
        response: { 200: SignInOptions, ...errorResponses([429], { public: true }) },
        detail: {
          summary: "How one may sign in here (extension)",
          description:
            "What the sign-in page offers: `needs_owner` while no user exists (the first run: POST /auth/session/setup-owner), whether this caller must present the setup token " +
            "(any address but loopback), the identity provider's name when one is configured, whether self-registration is open and whether mail is sent.",
        },
      },
    )
    .post(
      "/auth/session/setup-owner",
      async ({ body, request, set }) => {
        const user = await accounts.firstRun.createOwner(body, requestInfo(request).ip);
        const result = await accounts.startSession(user, client(request));
        set.status = 201;
        return signedIn(set, result);
      },
      {
        body: OwnerSetup,
        response: { 201: SessionView, ...errorResponses([400, 403, 409, 429], { public: true }) },
        detail: {
          summary: "First run: create the appliance's owner (extension)",
          description:
            `Only while no user exists (else 409 SETUP_COMPLETE). Creates an organization (tier ${OWNER_TIER}) and its owner with a verified address, and signs them in (201, session cookies). ` +
            "From loopback as is; from another address with `setup_token`, the one-time token the server logs at start (403 SETUP_TOKEN_REQUIRED otherwise). 5 requests/minute per IP.",
        },
      },
    )
    .post(
      "/auth/session/login",
      async ({ body, request, set }) => {
        const result = await accounts.login({ email: body.email, password: body.password, ...(body.organization_id ? { organizationId: body.organization_id } : {}) }, client(request));
        await endPrevious(request);
        return signedIn(set, result);
      },
      {
        body: Credentials,
        response: { 200: SessionView, ...errorResponses([400, 401, 403, 429], { public: true }) },
        detail: {
          summary: "Sign in with email and password",
          description:
            "Starts a dashboard session: sets the HttpOnly `mediabox_session` cookie and the `mediabox_csrf` cookie, and returns the session with its `csrf_token`. " +
            "Wrong email and wrong password give the same 401 INVALID_CREDENTIALS. Repeated failures lock the account (5) or the address (30) for a growing while (429 LOGIN_THROTTLED). " +
            "An unverified address is 403 EMAIL_NOT_VERIFIED (only with the right password). 5 requests/minute per IP.",
        },
      },
    )
    .post(
      "/auth/session/register",
      async ({ body, request, set }) => {
        await accounts.register(body, publicOrigin(config, request));
        set.status = 202;
        return { status: "verification_sent" };
      },
      {
        body: Registration,
        response: { 202: Accepted, ...errorResponses([400, 403, 429], { public: true }) },
        detail: {
          summary: "Register (when self-registration is on)",
          description:
            "Off by default (MEDIABOX_ALLOW_REGISTRATION): 403 REGISTRATION_CLOSED. Creates a user and a new FREE organization they own and mails a verification link. " +
            "An address that already has an account gets the same 202 (and a mail saying so), so the answer tells nothing about who has an account. 10 requests/minute per IP.",
        },
      },
    )
    .post(
      "/auth/session/verify-email",
      async ({ body }) => {
        await accounts.verifyEmail(body.token);
        return { status: "verified" };
      },
      {
        body: TokenBody,
        response: { 200: Accepted, ...errorResponses([400, 429], { public: true }) },
        detail: { summary: "Verify an email address with the mailed token", description: "Single use; 48 hours. 400 TOKEN_INVALID otherwise. 5 requests/minute per IP." },
      },
    )
    .post(
      "/auth/session/resend-verification",
      async ({ request, set }) => {
        const session = sessionOf(request);
        const user = (await getUser(db, session.userId))!;
        set.status = 202;
        if (user.email_verified_at) return { status: "already_verified" };
        await accounts.sendVerification(user, publicOrigin(config, request), false);
        return { status: "verification_sent" };
      },
      {
        response: { 202: Accepted, ...SESSION_ERRORS },
        detail: { summary: "Mail a new verification link to the signed-in user", description: "Session only. 5 requests/minute per IP." },
      },
    )
    .post(
      "/auth/session/resend-verification-by-email",
      async ({ body, request, set }) => {
        await accounts.resendVerificationByEmail(body.email, publicOrigin(config, request));
        set.status = 202;
        return { status: "verification_sent_if_unverified" };
      },
      {
        body: EmailBody,
        response: { 202: Accepted, ...errorResponses([400, 429], { public: true }) },
        detail: { summary: "Mail a new verification link to an address", description: "The same 202 whether or not the address has an unverified account. 5 requests/minute per IP." },
      },
    )
    .post(
      "/auth/session/password-reset/request",
      async ({ body, request, set }) => {
        await accounts.requestPasswordReset(body.email, publicOrigin(config, request));
        set.status = 202;
        return { status: "reset_mailed_if_account_exists" };
      },
      {
        body: EmailBody,
        response: { 202: Accepted, ...errorResponses([400, 429], { public: true }) },
        detail: { summary: "Ask for a password reset link", description: "Mails a link valid for one hour; the same 202 for any address. 3 requests/minute per IP." },
      },
    )
    .post(
      "/auth/session/password-reset/validate",
      async ({ body }) => ({ valid: true, ...(await accounts.validateResetToken(body.token)) }),
      {
        body: TokenBody,
        response: { 200: ResetTokenCheck, ...errorResponses([400, 429], { public: true }) },
        detail: { summary: "Check a reset token before asking for the new password", description: "Does not use the token. 10 requests/minute per IP." },
      },
    )
    .post(
      "/auth/session/password-reset/complete",
      async ({ body }) => {
        await accounts.completePasswordReset(body.token, body.password);
        return { status: "password_changed" };
      },
      {
        body: PasswordReset,
        response: { 200: Accepted, ...errorResponses([400, 429], { public: true }) },
        detail: {
          summary: "Set a new password with a reset token",
          description: "Ends every session of the user (sign in again) and clears their sign-in lock. 400 PASSWORD_REJECTED leaves the token usable. 5 requests/minute per IP.",
        },
      },
    )
    .post(
      "/auth/session/accept-invite",
      async ({ body, request, set }) => {
        const result = await accounts.acceptInvite(body, client(request));
        if (result.signedIn) {
          await endPrevious(request);
          set.status = 201;
          return signedIn(set, result.signedIn);
        }
        return { status: "joined", organization: { id: result.joined.org_id, name: result.joined.org_name, role: result.joined.role } };
      },
      {
        body: InvitationAcceptance,
        response: {
          200: Joined,
          201: SessionView,
          ...errorResponses([400, 429], { public: true }),
        },
        detail: {
          summary: "Accept an invitation",
          description:
            "A new address: `password` is required; the account is created (verified by the mailed link) and signed in (201, session cookies). " +
            "An address that already has an account joins the organization (200) and signs in as usual. 5 requests/minute per IP.",
        },
      },
    )
    .get(
      "/auth/session",
      ({ request, set }) => {
        const session = sessionOf(request);
        set.headers["cache-control"] = "no-store";
        return view(session.userId, session.orgId, session);
      },
      { response: { 200: SessionView, ...SESSION_ERRORS }, detail: { summary: "The signed-in user, organization, role and session" } },
    )
    .post(
      "/auth/session/rotate-session",
      ({ request, set }) => rotated(set, sessionOf(request), request),
      {
        response: { 200: SessionView, ...SESSION_ERRORS },
        detail: {
          summary: "Replace the session id and CSRF token",
          description: "The old cookie stops working at once; the absolute expiry stays. Needs X-CSRF-Token. 10 requests/minute per IP.",
        },
      },
    )
    .post(
      "/auth/session/switch-organization",
      async ({ request, set, body }) => {
        const session = sessionOf(request);
        if (!(await membership(db, body.organization_id, session.userId))) {
          throw new ApiError("ORGANIZATION_NOT_FOUND", "organization_id: you are not a member of that organization");
        }
        return rotated(set, session, request, body.organization_id);
      },
      {
        account: "member",
        body: OrganizationChoice,
        response: { 200: SessionView, ...SESSION_ERRORS, ...errorResponses([404], { public: true }) },
        detail: { summary: "Act in another organization the user belongs to", description: "Rotates the session (new cookies and CSRF token). Needs X-CSRF-Token." },
      },
    )
    .post(
      "/auth/session/logout",
      async ({ request, set }) => {
        await revokeSession(db, clock, sessionOf(request).idHash);
        set.headers["set-cookie"] = clearedSessionCookies(config);
        set.status = 204;
        return undefined;
      },
      { response: { 204: t.Void(), ...SESSION_ERRORS }, detail: { summary: "Sign out this session", description: "Needs X-CSRF-Token." } },
    )
    .post(
      "/auth/session/logout-all",
      async ({ request, set }) => {
        const ended = await revokeUserSessions(db, clock, sessionOf(request).userId);
        set.headers["set-cookie"] = clearedSessionCookies(config);
        return { sessions_ended: ended };
      },
      {
        response: { 200: SessionsEnded, ...SESSION_ERRORS },
        detail: { summary: "Sign out everywhere", description: "Ends every session of the user, this one included. Needs X-CSRF-Token." },
      },
    );
}
