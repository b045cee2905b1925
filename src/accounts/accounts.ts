/**
 * The account flows that span several tables: sign-in, registration, email verification,
 * password reset and invitations. Each is a plain method the routes, the CLI and tests call.
 * Answers that could tell whether an address has an account (sign-in, reset, resend,
 * registration) are the same for every address, and take the same work: an unknown address is
 * still checked against an argon2id hash, and mails go out in the background.
 */
import type { Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { Config } from "../config.ts";
import { ApiError, errorMessage } from "../errors.ts";
import type { Logger } from "../log.ts";
import { createOrganization, findOrganization, OrganizationError } from "../tenancy/organizations.ts";
import { validName } from "../tenancy/names.ts";
import { consumeToken, issueToken, peekToken, type TokenKind } from "./email-tokens.ts";
import { FirstRun } from "./first-run.ts";
import { Mailer, type Mail } from "./mailer.ts";
import { OidcProvider } from "./oidc.ts";
import { checkNewPassword, hashPassword, verifyPassword } from "./passwords.ts";
import type { Role } from "../auth/roles.ts";
import { randomToken } from "./secrets.ts";
import { createSession, revokeUserSessions, type IssuedSession, type SessionLifetimes } from "./sessions.ts";
import { ACCOUNT_RULE, clearFailures, IP_RULE, lockedFor, recordFailure } from "./throttle.ts";
import {
  createUser, emailKey, findUserByEmail, getUser, markEmailVerified, membership, membershipsOf, setMembership, setPasswordHash,
  UserError, validEmail, type Membership, type UserRow,
} from "./users.ts";

/** Dashboard pages the mailed links open (the dashboard is a later issue; until then the token is posted to the API by hand). */
const LINK_PAGES: Record<TokenKind, string> = {
  verify_email: "/auth/verify-email",
  password_reset: "/auth/reset-password",
  invite: "/auth/accept-invite",
};

export interface ClientMeta {
  ip: string;
  userAgent: string | null;
}

export interface SignedIn {
  issued: IssuedSession;
  user: UserRow;
  membership: Membership;
}

export class Accounts {
  readonly mailer: Mailer;
  readonly oidc: OidcProvider;
  readonly firstRun: FirstRun;
  readonly lifetimes: SessionLifetimes;
  /** An argon2id hash of a random password, checked when the address has no account, so both cost the same. */
  private dummyHash: Promise<string> | null = null;

  constructor(
    private readonly db: SqlClient,
    private readonly clock: Clock,
    private readonly config: Config,
    log: Logger,
  ) {
    this.mailer = new Mailer(config, log.child({ component: "mail" }));
    this.oidc = new OidcProvider(config, log.child({ component: "oidc" }));
    this.firstRun = new FirstRun(db, clock);
    this.lifetimes = { idleMs: config.sessionIdleMinutes * 60_000, absoluteMs: config.sessionAbsoluteHours * 3_600_000 };
  }

  link(kind: TokenKind, origin: string, token: string): string {
    return `${origin}${LINK_PAGES[kind]}?token=${encodeURIComponent(token)}`;
  }

  private mail(mail: Mail, wait: boolean): Promise<void> {
    if (wait) return this.mailer.send(mail);
    this.mailer.sendLater(mail);
    return Promise.resolve();
  }

  /** Sign-in by email and password; starts a session in `orgId` if given and a member, else the first organization. */
  async login(input: { email: string; password: string; organizationId?: string }, client: ClientMeta): Promise<SignedIn> {
    const accountSubject = `account:${emailKey(input.email)}`;
    const ipSubject = `ip:${client.ip}`;
    const wait = Math.max(await lockedFor(this.db, this.clock, accountSubject), await lockedFor(this.db, this.clock, ipSubject));
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new ApiError("LOGIN_THROTTLED", `too many failed sign-ins; try again in ${seconds} s or reset the password`, { "retry-after": String(seconds) });
    }
    const user = await findUserByEmail(this.db, input.email);
    this.dummyHash ??= hashPassword(randomToken());
    const hash = user?.password_hash ?? (await this.dummyHash);
    const matches = await verifyPassword(input.password, hash);
    if (!user || !user.password_hash || user.disabled_at || !matches) {
      await recordFailure(this.db, this.clock, accountSubject, ACCOUNT_RULE);
      await recordFailure(this.db, this.clock, ipSubject, IP_RULE);
      throw new ApiError("INVALID_CREDENTIALS", "the email address or the password is wrong");
    }
    await clearFailures(this.db, accountSubject);
    // Said only to whoever knows the password, so it reveals nothing to a prober.
    if (!user.email_verified_at) {
      throw new ApiError("EMAIL_NOT_VERIFIED", "verify your email address first: open the link we mailed you, or ask for a new one (POST /auth/session/resend-verification-by-email)");
    }
    return this.startSession(user, client, input.organizationId);
  }

  /** A session for a user who has proved who they are (password, identity provider, invitation). */
  async startSession(user: UserRow, client: ClientMeta, organizationId?: string): Promise<SignedIn> {
    const memberships = await membershipsOf(this.db, user.id);
    const chosen = memberships.find((m) => m.org_id === organizationId) ?? memberships[0];
    if (!chosen) throw new ApiError("PERMISSION_DENIED", "your account belongs to no organization yet; ask an admin for an invitation");
    const issued = await createSession(this.db, this.clock, this.lifetimes, { userId: user.id, orgId: chosen.org_id, ip: client.ip, userAgent: client.userAgent });
    return { issued, user, membership: chosen };
  }

  /**
   * Self-registration (only when MEDIABOX_ALLOW_REGISTRATION is on): a user and a new FREE
   * organization they own, unverified until the mailed link is opened. An address that already
   * has an account gets the same answer, and a mail saying so instead of a link.
   */
  async register(input: { email: string; password: string; name?: string | undefined; organization_name: string }, origin: string): Promise<void> {
    if (!this.config.allowRegistration) {
      throw new ApiError("REGISTRATION_CLOSED", "self-registration is off on this appliance; ask an admin for an invitation");
    }
    const email = this.checkedEmail(input.email);
    checkNewPassword(input.password, email);
    // The organization name is judged before the address, so its refusal cannot tell whether the address is taken.
    try {
      const name = validName("organization_name", input.organization_name);
      if (await findOrganization(this.db, name)) throw new OrganizationError(`an organization named "${name}" already exists; choose another name`);
    } catch (err) {
      throw new ApiError("VALIDATION_ERROR", errorMessage(err).startsWith("organization_name") ? errorMessage(err) : `organization_name: ${errorMessage(err)}`);
    }
    // Hashed whatever happens next, so the answer takes as long for a taken address.
    const passwordHash = await hashPassword(input.password);
    const existing = await findUserByEmail(this.db, email);
    if (existing) {
      await this.mail({
        kind: "registration_existing", to: existing.email, subject: "Someone tried to register with your address",
        text: "Someone (perhaps you) tried to create a Mediabox account with this address, which already has one. " +
          "If it was you, sign in, or reset your password if you forgot it. If not, you can ignore this mail.",
      }, false);
      return;
    }
    let user: UserRow;
    try {
      user = await this.db.transaction(async (tx) => {
        const org = await createOrganization(tx, this.clock, input.organization_name, "FREE");
        const created = await createUser(tx, this.clock, { email, name: input.name ?? null, passwordHash, verified: false });
        await setMembership(tx, this.clock, org.id, created.id, "owner");
        return created;
      });
    } catch (err) {
      if (err instanceof OrganizationError) throw new ApiError("VALIDATION_ERROR", `organization_name: ${errorMessage(err)}`);
      throw err;
    }
    await this.sendVerification(user, origin, false);
  }

  private checkedEmail(raw: string): string {
    try {
      return validEmail(raw);
    } catch (err) {
      throw new ApiError("VALIDATION_ERROR", `email: ${err instanceof UserError ? "is not an email address" : errorMessage(err)}`);
    }
  }

  async sendVerification(user: UserRow, origin: string, wait: boolean): Promise<string> {
    const { token } = await issueToken(this.db, this.clock, { kind: "verify_email", email: user.email, userId: user.id });
    const link = this.link("verify_email", origin, token);
    await this.mail({
      kind: "verify_email", to: user.email, subject: "Verify your email address", link,
      text: `Open this link to verify your email address for Mediabox (valid for 48 hours):\n\n${link}\n\nIf you did not create an account, ignore this mail.`,
    }, wait);
    return link;
  }

  /** Resend to an address: the same answer whether or not it has an unverified account. */
  async resendVerificationByEmail(email: string, origin: string): Promise<void> {
    const user = await findUserByEmail(this.db, email);
    if (user && !user.email_verified_at && !user.disabled_at) await this.sendVerification(user, origin, false);
  }

  async verifyEmail(token: string): Promise<void> {
    const record = await consumeToken(this.db, this.clock, "verify_email", token);
    const user = record.user_id ? await getUser(this.db, record.user_id) : null;
    if (!user || emailKey(user.email) !== record.email_key) throw new ApiError("TOKEN_INVALID", "token: is invalid, already used or expired; ask for a new link");
    await markEmailVerified(this.db, this.clock, user.id);
  }

  /** Mails a reset link when the address has an active account; the caller answers the same either way. */
  async requestPasswordReset(email: string, origin: string, wait = false): Promise<string | null> {
    const user = await findUserByEmail(this.db, email);
    if (!user || user.disabled_at) return null;
    const { token } = await issueToken(this.db, this.clock, { kind: "password_reset", email: user.email, userId: user.id });
    const link = this.link("password_reset", origin, token);
    await this.mail({
      kind: "password_reset", to: user.email, subject: "Reset your Mediabox password", link,
      text: `Open this link to choose a new password (valid for one hour):\n\n${link}\n\nIf you did not ask for it, ignore this mail; your password stays as it is.`,
    }, wait);
    return link;
  }

  async validateResetToken(token: string): Promise<{ expires_at: string }> {
    const record = await peekToken(this.db, this.clock, "password_reset", token);
    return { expires_at: new Date(record.expires_ms).toISOString() };
  }

  /** Sets the new password, ends every session of the user and clears their sign-in lock. */
  async completePasswordReset(token: string, password: string): Promise<void> {
    const record = await peekToken(this.db, this.clock, "password_reset", token);
    const user = record.user_id ? await getUser(this.db, record.user_id) : null;
    if (!user) throw new ApiError("TOKEN_INVALID", "token: is invalid, already used or expired; ask for a new link");
    // Checked before the token is used, so a refused password does not burn the link.
    checkNewPassword(password, user.email);
    const hash = await hashPassword(password);
    await consumeToken(this.db, this.clock, "password_reset", token);
    await this.setPassword(user, hash);
  }

  /** A new password hash: every session of the user ends (whoever had the old password is out). */
  async setPassword(user: UserRow, hash: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await setPasswordHash(tx, this.clock, user.id, hash);
      // The link came through the mailbox, which proves the address as a verification link would.
      await markEmailVerified(tx, this.clock, user.id);
      await revokeUserSessions(tx, this.clock, user.id);
      await clearFailures(tx, `account:${emailKey(user.email)}`);
    });
  }

  /** Invites an address into an organization with a role; returns the link (printed by the CLI, never answered over HTTP). */
  async invite(input: { orgId: string; orgName: string; email: string; role: Role; invitedBy: string | null }, origin: string, wait: boolean): Promise<{ link: string; expiresAtMs: number }> {
    const email = this.checkedEmail(input.email);
    const existing = await findUserByEmail(this.db, email);
    const { token, expiresAtMs } = await issueToken(this.db, this.clock, { kind: "invite", email, userId: existing?.id ?? null, orgId: input.orgId, role: input.role });
    const link = this.link("invite", origin, token);
    await this.mail({
      kind: "invite", to: email, subject: `You are invited to ${input.orgName} on Mediabox`, link,
      text: `${input.invitedBy ? `${input.invitedBy} invites` : "You are invited"} you to join "${input.orgName}" on Mediabox as ${input.role}.\n\n` +
        `Open this link to accept (valid for 7 days):\n\n${link}\n`,
    }, wait);
    return { link, expiresAtMs };
  }

  /**
   * Accepts an invitation. A new address becomes a verified user with the password given and is
   * signed in; an existing user joins the organization and signs in as usual (the invitation
   * proves the mailbox, not the account's password).
   */
  async acceptInvite(input: { token: string; password?: string | undefined; name?: string | undefined }, client: ClientMeta): Promise<{ joined: Membership; user: UserRow; signedIn: SignedIn | null }> {
    const record = await peekToken(this.db, this.clock, "invite", input.token);
    if (!record.org_id || !record.role) throw new ApiError("TOKEN_INVALID", "token: is invalid, already used or expired; ask for a new link");
    const existing = await findUserByEmail(this.db, record.email_key);
    let passwordHash: string | null = null;
    if (!existing) {
      if (!input.password) throw new ApiError("VALIDATION_ERROR", "password: is required to create your account");
      checkNewPassword(input.password, record.email_key);
      passwordHash = await hashPassword(input.password);
    }
    const user = await this.db.transaction(async (tx) => {
      await consumeToken(tx, this.clock, "invite", input.token);
      const user = existing ?? (await createUser(tx, this.clock, { email: record.email_key, name: input.name ?? null, passwordHash, verified: true }));
      if (existing) await markEmailVerified(tx, this.clock, existing.id);
      // Joining never lowers a role the user already holds there.
      const current = await membership(tx, record.org_id!, user.id);
      if (!current) await setMembership(tx, this.clock, record.org_id!, user.id, record.role!);
      return user;
    });
    const joined = (await membership(this.db, record.org_id, user.id))!;
    return { joined, user, signedIn: existing ? null : await this.startSession(user, client, record.org_id) };
  }

  async close(): Promise<void> {
    await this.mailer.close();
  }
}
