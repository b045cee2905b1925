/**
 * HTTP binding of the account endpoints: `/auth/session/*` (sign-in, registration, email
 * verification, password reset, invitations, the identity provider, session rotation and
 * sign-out) and `/account/*` (members, invitations and API keys of the session's organization,
 * the dashboard's "API Keys" tab). Routes only bind; the flows are in accounts.ts.
 */
import { Elysia, t } from "elysia";
import type { Database } from "bun:sqlite";
import type { Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { insertApiKey, listApiKeysOf, revokeApiKeyOf, type ApiKeyInfo } from "../auth/api-keys.ts";
import { PERMISSIONS, type Permission } from "../auth/permissions.ts";
import { ApiError } from "../errors.ts";
import { principalOf, publicOrigin, requestInfo } from "../http/request-context.ts";
import { Enum, Nullable, Timestamp, errorResponses } from "../http/shapes.ts";
import { TIER_LIMITS, TIERS } from "../tenancy/tiers.ts";
import { API_PREFIX } from "../http/api-prefix.ts";
import type { Accounts, ClientMeta, SignedIn } from "./accounts.ts";
import { isLoopback, OWNER_TIER } from "./first-run.ts";
import { clearedSessionCookies, OIDC_COOKIE, oidcCookie, readCookie, sessionCookies } from "./cookies.ts";
import { pendingInvitations, revokeInvitation } from "./email-tokens.ts";
import { FLOW_LIFETIME_MS, identitiesOf, findIdentity, linkIdentity, unlinkIdentity } from "./oidc.ts";
import { managesOrganization, mayAssign, ROLE_PERMISSIONS, ROLES, type Role } from "../auth/roles.ts";
import { revokeSession, revokeUserSessions, rotateSession, type IssuedSession } from "./sessions.ts";
import type { ActiveSession } from "../auth/principal.ts";
import { getUser, listUsers, membership, membershipsOf, publicUser, removeMembership, setMembership } from "./users.ts";

const CALLBACK_PATH = "/auth/session/oidc/callback";

const Email = t.String({ minLength: 3, maxLength: 320, error: "email must be an email address of at most 320 characters" });
const Password = t.String({ minLength: 1, maxLength: 1024, error: "password must be a string of at most 1024 characters" });
const Token = t.String({ minLength: 10, maxLength: 200, error: "token must be the token from the mailed link" });
const RoleField = Enum(ROLES, { error: "role must be owner, admin, member or viewer" });
const ReturnTo = t.String({ maxLength: 2000, pattern: "^/(?![/\\\\]).*$", error: "return_to must be a path on this appliance starting with a single /" });

const SessionView = t.Object(
  {
    user: t.Object({ id: t.String(), email: t.String(), name: Nullable(t.String()), email_verified: t.Boolean(), has_password: t.Boolean() }),
    organization: t.Object({ id: t.String(), name: t.String(), tier: Enum(TIERS), api_keys_allowed: t.Boolean() }),
    role: RoleField,
    permissions: t.Array(Enum(PERMISSIONS)),
    organizations: t.Array(t.Object({ id: t.String(), name: t.String(), tier: Enum(TIERS), role: RoleField })),
    identities: t.Array(t.Object({ provider: t.String(), email: Nullable(t.String()), linked_at: Timestamp })),
    session: t.Object({ created_at: Timestamp, idle_expires_at: Timestamp, expires_at: Timestamp }),
    csrf_token: t.Optional(t.String({ description: "Echo it in the X-CSRF-Token header of every write (also in the mediabox_csrf cookie). Only in answers that start or rotate a session." })),
  },
  { title: "Session" },
);

const SignInOptions = t.Object(
  {
    signed_in: t.Boolean({ description: "The request carries a live session cookie (the dashboard asks before GET /auth/session, which answers 401 without one)" }),
    needs_owner: t.Boolean({ description: "No user exists yet: the first run creates the owner" }),
    setup_token_required: t.Boolean({ description: "This caller (not on loopback) must send the setup token the server printed at start" }),
    identity_provider: Nullable(t.String({ description: "The configured OpenID Connect provider's name, or null" })),
    registration_open: t.Boolean(),
    mail_configured: t.Boolean({ description: "An SMTP server is set: mailed links reach people (else the dashboard shows invitation links to copy)" }),
  },
  { title: "SignInOptions" },
);

const Accepted = t.Object({ status: t.String() }, { title: "Accepted" });

const ApiKeySchema = t.Object(
  {
    id: t.String(),
    name: Nullable(t.String()),
    display_prefix: t.String(),
    permissions: t.Array(Enum(PERMISSIONS)),
    created_at: Timestamp,
    last_used_at: Nullable(Timestamp),
    revoked_at: Nullable(Timestamp),
  },
  { title: "ApiKey" },
);

const SESSION_ERRORS = errorResponses([401, 403, 429], { public: true });

function keyView(info: ApiKeyInfo) {
  const { org_id: _org, ...rest } = info;
  return rest;
}

function client(request: Request): ClientMeta {
  return { ip: requestInfo(request).ip, userAgent: request.headers.get("user-agent") };
}

/** The caller's dashboard session; API keys are refused here (a key must not mint keys or manage people). */
function sessionOf(request: Request): ActiveSession {
  const principal = principalOf(request);
  if (!principal.session) {
    throw new ApiError("SESSION_REQUIRED", "this endpoint needs a dashboard session (sign in); API keys cannot manage accounts, sessions or keys");
  }
  return principal.session;
}

/**
 * Route option `account: "member" | "manager"`: the session (and for "manager" a role that manages
 * the organization) is checked in transform, before the body is validated, so a viewer or an API
 * key learns 403 and nothing about the body's shape. Checks that need the body (which role may be
 * given) stay in the handlers.
 */
const accountGate = new Elysia({ name: "mediabox-account-gate" }).macro({
  account: (needed: "member" | "manager") => ({
    transform({ request }) {
      const session = sessionOf(request);
      if (needed === "manager") requireManager(session);
    },
  }),
});

export interface AccountRouteDeps {
  db: Database;
  clock: Clock;
  config: Config;
  log: Logger;
  accounts: Accounts;
}

export function accountRoutes(ctx: AccountRouteDeps) {
  const { db, clock, config, accounts } = ctx;
  const maxAge = (issued: IssuedSession) => (issued.expiresAtMs - clock.now()) / 1000;

  function view(userId: string, orgId: string, session: { createdAt: string; idleExpiresMs: number; absoluteExpiresMs: number }, csrfToken?: string) {
    const user = getUser(db, userId)!;
    const current = membership(db, orgId, userId)!;
    return {
      user: { ...pick(publicUser(user)), email_verified: user.email_verified_at !== null, has_password: user.password_hash !== null },
      organization: { id: current.org_id, name: current.org_name, tier: current.tier, api_keys_allowed: TIER_LIMITS[current.tier].apiKeys },
      role: current.role,
      permissions: [...ROLE_PERMISSIONS[current.role]] as Permission[],
      organizations: membershipsOf(db, userId).map((m) => ({ id: m.org_id, name: m.org_name, tier: m.tier, role: m.role })),
      identities: identitiesOf(db, userId).map((i) => ({ provider: i.provider, email: i.email, linked_at: i.created_at })),
      session: { created_at: session.createdAt, idle_expires_at: iso(session.idleExpiresMs), expires_at: iso(session.absoluteExpiresMs) },
      ...(csrfToken ? { csrf_token: csrfToken } : {}),
    };
  }
  const pick = (u: { id: string; email: string; name: string | null }) => ({ id: u.id, email: u.email, name: u.name });
  const iso = (ms: number) => new Date(ms).toISOString();

  /** A sign-in in a browser that still holds a session ends that session (no two live ones per cookie jar). */
  function endPrevious(request: Request): void {
    const previous = requestInfo(request).principal?.session;
    if (previous) revokeSession(db, clock, previous.idHash);
  }

  /** Answers a new session: its cookies and its view (with the CSRF token, shown only now). */
  function signedIn(set: { headers: Record<string, unknown> }, result: SignedIn) {
    set.headers["set-cookie"] = sessionCookies(config, result.issued.sessionId, result.issued.csrfToken, maxAge(result.issued));
    set.headers["cache-control"] = "no-store";
    const now = clock.now();
    return view(result.user.id, result.membership.org_id, {
      createdAt: iso(now), idleExpiresMs: Math.min(now + accounts.lifetimes.idleMs, result.issued.expiresAtMs), absoluteExpiresMs: result.issued.expiresAtMs,
    }, result.issued.csrfToken);
  }

  function rotated(set: { headers: Record<string, unknown> }, session: ActiveSession, request: Request, orgId?: string) {
    const issued = rotateSession(db, clock, accounts.lifetimes, session, { ...client(request), ...(orgId ? { orgId } : {}) });
    set.headers["set-cookie"] = sessionCookies(config, issued.sessionId, issued.csrfToken, maxAge(issued));
    set.headers["cache-control"] = "no-store";
    const now = clock.now();
    return view(session.userId, orgId ?? session.orgId, {
      createdAt: iso(now), idleExpiresMs: Math.min(now + accounts.lifetimes.idleMs, issued.expiresAtMs), absoluteExpiresMs: issued.expiresAtMs,
    }, issued.csrfToken);
  }

  /** Starts a sign-in or link at the identity provider; the browser gets the flow cookie, the caller the URL to open. */
  async function startFlow(request: Request, set: { headers: Record<string, unknown> }, purpose: "login" | "link", userId: string | null, returnTo: string | undefined) {
    accounts.oidc.requireConfigured();
    const origin = publicOrigin(config, request);
    const started = await accounts.oidc.start(db, clock, { purpose, userId, redirectUri: `${origin}${API_PREFIX}${CALLBACK_PATH}`, returnTo: returnTo ?? "/" });
    set.headers["set-cookie"] = oidcCookie(config, started.browserBinding, FLOW_LIFETIME_MS / 1000, `${API_PREFIX}${CALLBACK_PATH}`);
    set.headers["cache-control"] = "no-store";
    return { authorization_url: started.authorizationUrl, provider: accounts.oidc.name };
  }

  const flowBody = t.Object({ return_to: t.Optional(ReturnTo) });
  const flowResponse = t.Object({ authorization_url: t.String(), provider: t.String() }, { title: "IdentityProviderRedirect" });

  return new Elysia({ tags: ["Accounts"] })
    .use(accountGate)
    .get(
      "/auth/session/options",
      ({ request, set }) => {
        set.headers["cache-control"] = "no-store";
        const needsOwner = accounts.firstRun.open;
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
        const result = accounts.startSession(user, client(request));
        set.status = 201;
        return signedIn(set, result);
      },
      {
        body: t.Object({
          organization_name: t.String({ minLength: 1, maxLength: 255, error: "organization_name must be a string of 1-255 characters" }),
          email: Email,
          password: Password,
          name: t.Optional(t.String({ maxLength: 200, error: "name must be at most 200 characters" })),
          setup_token: t.Optional(t.String({ maxLength: 200, error: "setup_token must be the token the server printed at start" })),
        }),
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
        endPrevious(request);
        return signedIn(set, result);
      },
      {
        body: t.Object({ email: Email, password: Password, organization_id: t.Optional(t.String({ maxLength: 64 })) }),
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
        body: t.Object({
          email: Email,
          password: Password,
          name: t.Optional(t.String({ maxLength: 200, error: "name must be at most 200 characters" })),
          organization_name: t.String({ minLength: 1, maxLength: 255, error: "organization_name must be a string of 1-255 characters" }),
        }),
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
      ({ body }) => {
        accounts.verifyEmail(body.token);
        return { status: "verified" };
      },
      {
        body: t.Object({ token: Token }),
        response: { 200: Accepted, ...errorResponses([400, 429], { public: true }) },
        detail: { summary: "Verify an email address with the mailed token", description: "Single use; 48 hours. 400 TOKEN_INVALID otherwise. 5 requests/minute per IP." },
      },
    )
    .post(
      "/auth/session/resend-verification",
      async ({ request, set }) => {
        const session = sessionOf(request);
        const user = getUser(db, session.userId)!;
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
        body: t.Object({ email: Email }),
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
        body: t.Object({ email: Email }),
        response: { 202: Accepted, ...errorResponses([400, 429], { public: true }) },
        detail: { summary: "Ask for a password reset link", description: "Mails a link valid for one hour; the same 202 for any address. 3 requests/minute per IP." },
      },
    )
    .post(
      "/auth/session/password-reset/validate",
      ({ body }) => ({ valid: true, ...accounts.validateResetToken(body.token) }),
      {
        body: t.Object({ token: Token }),
        response: { 200: t.Object({ valid: t.Boolean(), expires_at: Timestamp }), ...errorResponses([400, 429], { public: true }) },
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
        body: t.Object({ token: Token, password: Password }),
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
          endPrevious(request);
          set.status = 201;
          return signedIn(set, result.signedIn);
        }
        return { status: "joined", organization: { id: result.joined.org_id, name: result.joined.org_name, role: result.joined.role } };
      },
      {
        body: t.Object({
          token: Token,
          password: t.Optional(Password),
          name: t.Optional(t.String({ maxLength: 200, error: "name must be at most 200 characters" })),
        }),
        response: {
          200: t.Object({ status: t.String(), organization: t.Object({ id: t.String(), name: t.String(), role: RoleField }) }),
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
      ({ request, set, body }) => {
        const session = sessionOf(request);
        if (!membership(db, body.organization_id, session.userId)) {
          throw new ApiError("ORGANIZATION_NOT_FOUND", "organization_id: you are not a member of that organization");
        }
        return rotated(set, session, request, body.organization_id);
      },
      {
        account: "member",
        body: t.Object({ organization_id: t.String({ maxLength: 64 }) }),
        response: { 200: SessionView, ...SESSION_ERRORS, ...errorResponses([404], { public: true }) },
        detail: { summary: "Act in another organization the user belongs to", description: "Rotates the session (new cookies and CSRF token). Needs X-CSRF-Token." },
      },
    )
    .post(
      "/auth/session/logout",
      ({ request, set }) => {
        revokeSession(db, clock, sessionOf(request).idHash);
        set.headers["set-cookie"] = clearedSessionCookies(config);
        set.status = 204;
        return undefined;
      },
      { response: { 204: t.Void(), ...SESSION_ERRORS }, detail: { summary: "Sign out this session", description: "Needs X-CSRF-Token." } },
    )
    .post(
      "/auth/session/logout-all",
      ({ request, set }) => {
        const ended = revokeUserSessions(db, clock, sessionOf(request).userId);
        set.headers["set-cookie"] = clearedSessionCookies(config);
        return { sessions_ended: ended };
      },
      {
        response: { 200: t.Object({ sessions_ended: t.Integer() }), ...SESSION_ERRORS },
        detail: { summary: "Sign out everywhere", description: "Ends every session of the user, this one included. Needs X-CSRF-Token." },
      },
    )
    .post("/auth/session/oidc/start", ({ request, set, body }) => startFlow(request, set, "login", null, body.return_to), {
      body: flowBody,
      response: { 200: flowResponse, ...errorResponses([404, 429], { public: true }) },
      detail: {
        summary: "Start sign-in at the site's identity provider (OpenID Connect)",
        description:
          "Returns the provider's authorization URL for the browser to open and sets a short-lived HttpOnly flow cookie; the provider sends the browser back to " +
          `${API_PREFIX}${CALLBACK_PATH}. 404 OIDC_NOT_CONFIGURED without MEDIABOX_OIDC_DISCOVERY_URL. 10 requests/minute per IP.`,
      },
    })
    .post("/auth/session/google", ({ request, set, body }) => startFlow(request, set, "login", null, body.return_to), {
      body: flowBody,
      response: { 200: flowResponse, ...errorResponses([404, 429], { public: true }) },
      detail: {
        summary: "Social sign-in (the spec's path): the same as /auth/session/oidc/start",
        description:
          "An appliance signs in through its site's OpenID Connect provider, whichever it is (Google Workspace included, by its discovery URL); " +
          "without one configured this answers 404 OIDC_NOT_CONFIGURED. 10 requests/minute per IP.",
      },
    })
    .get(
      CALLBACK_PATH,
      async ({ request, set }) => {
        // A browser navigation: the answer is a redirect to the dashboard, with the outcome in the query.
        set.headers["cache-control"] = "no-store";
        const cookies: string[] = [oidcCookie(config, "", 0, `${API_PREFIX}${CALLBACK_PATH}`)];
        let target = "/";
        try {
          const result = await accounts.oidc.finish(db, clock, callbackUrl(publicOrigin(config, request), request), readCookie(request, OIDC_COOKIE));
          target = result.returnTo;
          if (result.purpose === "link") {
            const user = result.userId ? getUser(db, result.userId) : null;
            if (!user) throw new ApiError("UNAUTHENTICATED", "the user who started the link is gone");
            linkIdentity(db, clock, { provider: accounts.oidc.name, issuer: result.issuer, subject: result.subject, userId: user.id, email: result.email });
            target = withQuery(target, { linked: accounts.oidc.name });
          } else {
            const linked = findIdentity(db, result.issuer, result.subject);
            const user = linked ? getUser(db, linked.user_id) : null;
            if (!user || user.disabled_at) {
              throw new ApiError("IDENTITY_NOT_LINKED", "no user has linked this identity; sign in with your password and link it, or accept an invitation first");
            }
            const signed = accounts.startSession(user, client(request));
            endPrevious(request);
            cookies.push(...sessionCookies(config, signed.issued.sessionId, signed.issued.csrfToken, maxAge(signed.issued)));
          }
        } catch (err) {
          const code = err instanceof ApiError ? err.code : "INTERNAL_ERROR";
          if (!(err instanceof ApiError)) ctx.log.error("identity provider callback failed", { err });
          target = withQuery(target, { sign_in_error: code });
        }
        set.headers["set-cookie"] = cookies;
        set.status = 303;
        set.headers.location = `${publicOrigin(config, request)}${target}`;
        return undefined;
      },
      {
        query: t.Object({ state: t.Optional(t.String()), code: t.Optional(t.String()), iss: t.Optional(t.String()), error: t.Optional(t.String()), error_description: t.Optional(t.String()) }, { additionalProperties: true }),
        response: { 303: t.Void({ description: "Redirect to return_to (with ?sign_in_error=CODE or ?linked=<provider>)" }), ...errorResponses([429], { public: true }) },
        detail: {
          summary: "Where the identity provider sends the browser back",
          description:
            "Checks state (single use, 10 minutes, bound to the browser's flow cookie), PKCE and the ID token's nonce, then signs in (login) or links the identity (link-provider), " +
            "and redirects (303) to `return_to` with `?sign_in_error=CODE` or `?linked=<provider>`. 10 requests/minute per IP.",
        },
      },
    )
    .post(
      "/auth/session/link-provider",
      ({ request, set, body }) => {
        const session = sessionOf(request);
        accounts.oidc.requireConfigured(body.provider);
        return startFlow(request, set, "link", session.userId, body.return_to);
      },
      {
        account: "member",
        body: t.Object({ provider: t.Optional(t.String({ maxLength: 32 })), return_to: t.Optional(ReturnTo) }),
        response: { 200: flowResponse, ...SESSION_ERRORS, ...errorResponses([404], { public: true }) },
        detail: {
          summary: "Link the site's identity provider to the signed-in user",
          description: "Returns the authorization URL; after the provider, the callback links the identity (409 IDENTITY_ALREADY_LINKED if another user has it). Needs X-CSRF-Token. 5 requests/minute per IP.",
        },
      },
    )
    .post(
      "/auth/session/unlink-provider",
      ({ request, body }) => {
        const session = sessionOf(request);
        const user = getUser(db, session.userId)!;
        const unlinked = unlinkIdentity(db, user.id, body.provider, user.password_hash !== null);
        return { provider: body.provider, unlinked };
      },
      {
        account: "member",
        body: t.Object({ provider: t.String({ minLength: 1, maxLength: 32 }) }),
        response: { 200: t.Object({ provider: t.String(), unlinked: t.Boolean() }), ...SESSION_ERRORS, ...errorResponses([409], { public: true }) },
        detail: {
          summary: "Unlink an identity provider from the signed-in user",
          description: "409 LAST_SIGN_IN_METHOD when the user has no password and no other identity. Needs X-CSRF-Token. 3 requests/minute per IP.",
        },
      },
    )
    .get(
      "/account/members",
      ({ request }) => {
        const session = sessionOf(request);
        return {
          items: listUsers(db, session.orgId).map((u) => ({
            id: u.id, email: u.email, name: u.name, email_verified: u.email_verified_at !== null,
            role: u.memberships.find((m) => m.org_id === session.orgId)!.role,
          })),
        };
      },
      {
        response: {
          200: t.Object({ items: t.Array(t.Object({ id: t.String(), email: t.String(), name: Nullable(t.String()), email_verified: t.Boolean(), role: RoleField })) }),
          ...SESSION_ERRORS,
        },
        detail: { summary: "Members of the session's organization" },
      },
    )
    .patch(
      "/account/members/:user_id",
      ({ request, params, body }) => {
        const session = sessionOf(request);
        const target = membership(db, session.orgId, params.user_id);
        if (!target) throw new ApiError("MEMBER_NOT_FOUND", `no member ${params.user_id} in this organization`);
        // Both the role taken away and the role given must be the actor's to give (admins leave owners alone).
        requireManager(session, target.role);
        requireManager(session, body.role);
        setMembership(db, clock, session.orgId, params.user_id, body.role);
        return { id: params.user_id, role: body.role };
      },
      {
        account: "manager",
        params: t.Object({ user_id: t.String({ maxLength: 64 }) }),
        body: t.Object({ role: RoleField }),
        response: { 200: t.Object({ id: t.String(), role: RoleField }), ...SESSION_ERRORS, ...errorResponses([404, 409], { public: true }) },
        detail: {
          summary: "Change a member's role",
          description: "Owners and admins; only owners give or take the owner role; 409 LAST_OWNER for the last owner. Applies to the member's sessions at once. Needs X-CSRF-Token.",
        },
      },
    )
    .delete(
      "/account/members/:user_id",
      ({ request, params, set }) => {
        const session = sessionOf(request);
        const target = membership(db, session.orgId, params.user_id);
        if (!target) throw new ApiError("MEMBER_NOT_FOUND", `no member ${params.user_id} in this organization`);
        requireManager(session, target.role);
        removeMembership(db, session.orgId, params.user_id);
        set.status = 204;
        return undefined;
      },
      {
        account: "manager",
        params: t.Object({ user_id: t.String({ maxLength: 64 }) }),
        response: { 204: t.Void(), ...SESSION_ERRORS, ...errorResponses([404, 409], { public: true }) },
        detail: {
          summary: "Remove a member from the organization",
          description: "Owners and admins (admins cannot remove owners); 409 LAST_OWNER for the last owner. The member's sessions in this organization end at once; the user keeps their account. Needs X-CSRF-Token.",
        },
      },
    )
    .post(
      "/account/invitations",
      async ({ request, body, set }) => {
        const session = sessionOf(request);
        requireManager(session, body.role);
        const org = membership(db, session.orgId, session.userId)!;
        const invitation = await accounts.invite(
          { orgId: session.orgId, orgName: org.org_name, email: body.email, role: body.role, invitedBy: session.email },
          publicOrigin(config, request),
          false,
        );
        set.status = 202;
        // Without a mail server nothing reaches the invitee: the inviter (an owner or admin, who could print it with the CLI) gets the link to pass on.
        const mailed = accounts.mailer.configured;
        return { email: body.email, role: body.role, organization_id: session.orgId, expires_at: iso(invitation.expiresAtMs), mailed, ...(mailed ? {} : { invite_url: invitation.link }) };
      },
      {
        account: "manager",
        body: t.Object({ email: Email, role: RoleField }),
        response: {
          202: t.Object({
            email: t.String(), role: RoleField, organization_id: t.String(), expires_at: Timestamp,
            mailed: t.Boolean({ description: "Extension: an SMTP server is set and the link was mailed" }),
            invite_url: t.Optional(t.String({ description: "Extension, only when mailed is false: the invitation link to pass on (nothing was sent)" })),
          }), ...SESSION_ERRORS,
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
      ({ request }) => ({
        items: pendingInvitations(db, clock, sessionOf(request).orgId).map((i) => ({ email: i.email, role: i.role, invited_at: i.created_at, expires_at: iso(i.expires_ms) })),
      }),
      {
        account: "manager",
        response: { 200: t.Object({ items: t.Array(t.Object({ email: t.String(), role: RoleField, invited_at: Timestamp, expires_at: Timestamp })) }), ...SESSION_ERRORS },
        detail: { summary: "Pending invitations of the organization (extension)", description: "Owners and admins. Not yet accepted, revoked or expired; newest first." },
      },
    )
    .delete(
      "/account/invitations/:email",
      ({ request, params, set }) => {
        const session = sessionOf(request);
        if (!revokeInvitation(db, clock, session.orgId, params.email)) throw new ApiError("INVITATION_NOT_FOUND", `no pending invitation of ${params.email} in this organization`);
        set.status = 204;
        return undefined;
      },
      {
        account: "manager",
        params: t.Object({ email: t.String({ maxLength: 320 }) }),
        response: { 204: t.Void(), ...SESSION_ERRORS, ...errorResponses([404], { public: true }) },
        detail: { summary: "Revoke a pending invitation (extension)", description: "Owners and admins; the link stops working at once. Needs X-CSRF-Token." },
      },
    )
    .get(
      "/account/api-keys",
      ({ request }) => {
        const session = sessionOf(request);
        requireManager(session);
        return { items: listApiKeysOf(db, session.orgId).map(keyView) };
      },
      { response: { 200: t.Object({ items: t.Array(ApiKeySchema) }), ...SESSION_ERRORS }, detail: { summary: "The organization's API keys (never the keys themselves)" } },
    )
    .post(
      "/account/api-keys",
      ({ request, body, set }) => {
        const session = sessionOf(request);
        requireManager(session);
        if (!TIER_LIMITS[session.tier].apiKeys) {
          throw new ApiError("API_KEYS_NOT_IN_TIER", "the FREE tier has no API key access (use the dashboard, or move to STARTER or higher)");
        }
        const { key, info } = insertApiKey(db, clock, session.orgId, { name: body.name ?? null, ...(body.permissions ? { permissions: PERMISSIONS.filter((p) => body.permissions!.includes(p)) } : {}) });
        set.status = 201;
        set.headers["cache-control"] = "no-store";
        return { ...keyView(info), key };
      },
      {
        account: "manager",
        body: t.Object({
          name: t.Optional(t.String({ maxLength: 100, error: "name must be at most 100 characters" })),
          permissions: t.Optional(t.Array(Enum(PERMISSIONS, { error: "permissions must be view, edit or delete" }), { minItems: 1, maxItems: 3, uniqueItems: true })),
        }),
        response: { 201: t.Composite([ApiKeySchema, t.Object({ key: t.String({ description: "Shown once; only its hash is kept" }) })]), ...SESSION_ERRORS, ...errorResponses([400], { public: true }) },
        detail: {
          summary: "Create an API key (the dashboard's API Keys tab)",
          description: "Owners and admins. 403 API_KEYS_NOT_IN_TIER for a FREE organization. The key is in this answer only. Needs X-CSRF-Token.",
        },
      },
    )
    .delete(
      "/account/api-keys/:key_id",
      ({ request, params }) => {
        const session = sessionOf(request);
        requireManager(session);
        const info = revokeApiKeyOf(db, clock, session.orgId, params.key_id);
        if (!info) throw new ApiError("API_KEY_NOT_FOUND", `no API key ${params.key_id} in this organization`);
        return keyView(info);
      },
      {
        account: "manager",
        params: t.Object({ key_id: t.String({ maxLength: 64 }) }),
        response: { 200: ApiKeySchema, ...SESSION_ERRORS, ...errorResponses([404], { public: true }) },
        detail: { summary: "Revoke an API key", description: "Takes effect on the key's next request. Needs X-CSRF-Token." },
      },
    );
}

/** Owners and admins manage the organization; `assigning` a role also needs the right to give (or take) it. */
function requireManager(session: ActiveSession, assigning?: Role): void {
  if (!managesOrganization(session.role) || (assigning && !mayAssign(session.role, assigning))) {
    throw new ApiError("PERMISSION_DENIED", assigning === "owner" && session.role === "admin" ? "only owners give, take or invite the owner role" : `your role (${session.role}) cannot manage this organization`);
  }
}

/**
 * The URL the provider redirected to, as the provider saw it: behind a proxy the request's own
 * origin is the internal one, and openid-client derives the redirect_uri it sends from this URL.
 */
function callbackUrl(origin: string, request: Request): URL {
  const url = new URL(request.url);
  return new URL(`${origin}${url.pathname}${url.search}`);
}

function withQuery(path: string, params: Record<string, string>): string {
  const url = new URL(path, "http://x");
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.pathname + url.search;
}

