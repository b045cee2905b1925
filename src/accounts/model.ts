/** The account routes' request and response schemas (TypeBox). */
import { t } from "elysia";
import { PERMISSIONS } from "../auth/permissions.ts";
import { ROLES } from "../auth/roles.ts";
import { Enum, Nullable, Timestamp, errorResponses } from "../http/shapes.ts";
import { TIERS } from "../tenancy/tiers.ts";

export const Email = t.String({ minLength: 3, maxLength: 320, error: "email must be an email address of at most 320 characters" });
export const Password = t.String({ minLength: 1, maxLength: 1024, error: "password must be a string of at most 1024 characters" });
export const Token = t.String({ minLength: 10, maxLength: 200, error: "token must be the token from the mailed link" });
export const RoleField = Enum(ROLES, { error: "role must be owner, admin, member or viewer" });
export const ReturnTo = t.String({ maxLength: 2000, pattern: "^/(?![/\\\\]).*$", error: "return_to must be a path on this appliance starting with a single /" });

export const SessionView = t.Object(
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

export const SignInOptions = t.Object(
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

export const Accepted = t.Object({ status: t.String() }, { title: "Accepted" });

export const ApiKeySchema = t.Object(
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

export const SESSION_ERRORS = errorResponses([401, 403, 429], { public: true });

export const FlowBody = t.Object({ return_to: t.Optional(ReturnTo) });
export const IdentityProviderRedirect = t.Object({ authorization_url: t.String(), provider: t.String() }, { title: "IdentityProviderRedirect" });
export const OwnerSetup = t.Object({
  organization_name: t.String({ minLength: 1, maxLength: 255, error: "organization_name must be a string of 1-255 characters" }),
  email: Email,
  password: Password,
  name: t.Optional(t.String({ maxLength: 200, error: "name must be at most 200 characters" })),
  setup_token: t.Optional(t.String({ maxLength: 200, error: "setup_token must be the token the server printed at start" })),
});
export const Credentials = t.Object({ email: Email, password: Password, organization_id: t.Optional(t.String({ maxLength: 64 })) });
export const Registration = t.Object({
  email: Email,
  password: Password,
  name: t.Optional(t.String({ maxLength: 200, error: "name must be at most 200 characters" })),
  organization_name: t.String({ minLength: 1, maxLength: 255, error: "organization_name must be a string of 1-255 characters" }),
});
export const TokenBody = t.Object({ token: Token });
export const EmailBody = t.Object({ email: Email });
export const ResetTokenCheck = t.Object({ valid: t.Boolean(), expires_at: Timestamp });
export const PasswordReset = t.Object({ token: Token, password: Password });
export const InvitationAcceptance = t.Object({
  token: Token,
  password: t.Optional(Password),
  name: t.Optional(t.String({ maxLength: 200, error: "name must be at most 200 characters" })),
});
export const Joined = t.Object({ status: t.String(), organization: t.Object({ id: t.String(), name: t.String(), role: RoleField }) });
export const OrganizationChoice = t.Object({ organization_id: t.String({ maxLength: 64 }) });
export const SessionsEnded = t.Object({ sessions_ended: t.Integer() });
export const CallbackQuery = t.Object({ state: t.Optional(t.String()), code: t.Optional(t.String()), iss: t.Optional(t.String()), error: t.Optional(t.String()), error_description: t.Optional(t.String()) }, { additionalProperties: true });
export const LinkBody = t.Object({ provider: t.Optional(t.String({ maxLength: 32 })), return_to: t.Optional(ReturnTo) });
export const UnlinkBody = t.Object({ provider: t.String({ minLength: 1, maxLength: 32 }) });
export const Unlinked = t.Object({ provider: t.String(), unlinked: t.Boolean() });
export const MemberList = t.Object({ items: t.Array(t.Object({ id: t.String(), email: t.String(), name: Nullable(t.String()), email_verified: t.Boolean(), role: RoleField })) });
export const MemberParams = t.Object({ user_id: t.String({ maxLength: 64 }) });
export const RoleChange = t.Object({ role: RoleField });
export const MemberRole = t.Object({ id: t.String(), role: RoleField });
export const InvitationBody = t.Object({ email: Email, role: RoleField });
export const InvitationSent = t.Object({
  email: t.String(), role: RoleField, organization_id: t.String(), expires_at: Timestamp,
  mailed: t.Boolean({ description: "Extension: an SMTP server is set and the link was mailed" }),
  invite_url: t.Optional(t.String({ description: "Extension, only when mailed is false: the invitation link to pass on (nothing was sent)" })),
});
export const InvitationList = t.Object({ items: t.Array(t.Object({ email: t.String(), role: RoleField, invited_at: Timestamp, expires_at: Timestamp })) });
export const InvitationParams = t.Object({ email: t.String({ maxLength: 320 }) });
export const ApiKeyList = t.Object({ items: t.Array(ApiKeySchema) });
export const NewApiKey = t.Object({
  name: t.Optional(t.String({ maxLength: 100, error: "name must be at most 100 characters" })),
  permissions: t.Optional(t.Array(Enum(PERMISSIONS, { error: "permissions must be view, edit or delete" }), { minItems: 1, maxItems: 3, uniqueItems: true })),
});
export const ApiKeyWithSecret = t.Composite([ApiKeySchema, t.Object({ key: t.String({ description: "Shown once; only its hash is kept" }) })]);
export const ApiKeyParams = t.Object({ key_id: t.String({ maxLength: 64 }) });
