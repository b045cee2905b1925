/**
 * Sign-in through the site's OpenID Connect provider (Keycloak, Authentik, Entra ID, Google
 * Workspace...): the only writer of `oidc_flows` (sign-ins in flight) and `identities` (a
 * provider's subject linked to a user). Authorization code flow with PKCE (S256), `state` and
 * `nonce`: each random, stored hashed, used once, valid for ten minutes, and bound to the browser
 * that started the flow by a random value in an HttpOnly cookie whose hash the flow row keeps, so
 * a callback URL replayed in another browser (login CSRF, a leaked link) is refused.
 */
import * as oidc from "openid-client";
import { isoAt, type Clock } from "../clock.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { Config } from "../config.ts";
import { ApiError, errorMessage } from "../errors.ts";
import type { Logger } from "../log.ts";
import { randomToken, sha256Hex } from "./secrets.ts";

export const FLOW_LIFETIME_MS = 10 * 60_000;
export type FlowPurpose = "login" | "link";

export interface StartedFlow {
  authorizationUrl: string;
  /** Goes into the browser's flow cookie. */
  browserBinding: string;
}

export interface FlowResult {
  purpose: FlowPurpose;
  /** The user who started a link flow. */
  userId: string | null;
  returnTo: string;
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
}

export interface Identity {
  provider: string;
  issuer: string;
  subject: string;
  email: string | null;
  created_at: string;
}

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/;

/** The configured provider; discovery runs on first use and is kept until it fails. */
export class OidcProvider {
  private discovered: Promise<oidc.Configuration> | null = null;

  constructor(
    private readonly config: Pick<Config, "oidcDiscoveryUrl" | "oidcClientId" | "oidcClientSecret" | "oidcProviderName">,
    private readonly log: Logger,
  ) {}

  get name(): string {
    return this.config.oidcProviderName;
  }

  get configured(): boolean {
    return this.config.oidcDiscoveryUrl !== null && this.config.oidcClientId !== null;
  }

  requireConfigured(provider?: string): void {
    if (!this.configured) {
      throw new ApiError("OIDC_NOT_CONFIGURED", "sign-in through an identity provider is not configured on this appliance (MEDIABOX_OIDC_DISCOVERY_URL)");
    }
    if (provider !== undefined && provider !== this.name) {
      throw new ApiError("OIDC_NOT_CONFIGURED", `no identity provider named "${provider}" is configured (this appliance has "${this.name}")`);
    }
  }

  private configuration(): Promise<oidc.Configuration> {
    this.requireConfigured();
    if (!this.discovered) {
      const server = new URL(this.config.oidcDiscoveryUrl!);
      // Plain HTTP only to the same machine (a provider beside the appliance, or the tests); anywhere
      // else tokens would cross the network readable.
      const insecure = server.protocol === "http:" && LOOPBACK.test(server.hostname);
      this.discovered = oidc
        .discovery(server, this.config.oidcClientId!, this.config.oidcClientSecret ?? undefined, this.config.oidcClientSecret ? undefined : oidc.None(), {
          ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
          timeout: 15,
        })
        .catch((err) => {
          this.discovered = null;
          this.log.error("identity provider discovery failed", { url: server.href, err: errorMessage(err) });
          throw new ApiError("OIDC_NOT_CONFIGURED", `the identity provider cannot be reached or described itself wrongly: ${errorMessage(err)}`);
        });
    }
    return this.discovered;
  }

  /** Starts a flow: the provider's authorization URL and the value for the browser's flow cookie. */
  async start(
    db: SqlClient,
    clock: Clock,
    input: { purpose: FlowPurpose; userId: string | null; redirectUri: string; returnTo: string },
  ): Promise<StartedFlow> {
    const configuration = await this.configuration();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const browserBinding = randomToken();
    const now = clock.now();
    await db.run("DELETE FROM oidc_flows WHERE expires_ms < ?", [now]);
    await db.run(
      `INSERT INTO oidc_flows (state_hash, browser_hash, nonce, code_verifier, purpose, user_id, return_to, expires_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [sha256Hex(state), sha256Hex(browserBinding), nonce, codeVerifier, input.purpose, input.userId, input.returnTo, now + FLOW_LIFETIME_MS],
    );
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: input.redirectUri,
      scope: "openid email profile",
      response_type: "code",
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
    });
    return { authorizationUrl: url.href, browserBinding };
  }

  /**
   * Finishes a flow from the provider's redirect: the flow named by `state` is taken (deleted,
   * so it cannot be used twice), checked against the browser's cookie, and the code is exchanged
   * with the verifier; openid-client checks state, nonce, issuer, audience and the ID token's
   * signature and times.
   */
  async finish(db: SqlClient, clock: Clock, callbackUrl: URL, browserBinding: string | null): Promise<FlowResult> {
    const state = callbackUrl.searchParams.get("state");
    if (!state) throw new ApiError("VALIDATION_ERROR", "state: is required");
    const flow = await db.one<{ browser_hash: string; nonce: string; code_verifier: string; purpose: FlowPurpose; user_id: string | null; return_to: string; expires_ms: number }>(
      "DELETE FROM oidc_flows WHERE state_hash = ? RETURNING browser_hash, nonce, code_verifier, purpose, user_id, return_to, expires_ms",
      [sha256Hex(state)],
    );
    if (!flow || flow.expires_ms <= clock.now()) {
      throw new ApiError("VALIDATION_ERROR", "state: unknown, already used or expired; start the sign-in again");
    }
    if (!browserBinding || sha256Hex(browserBinding) !== flow.browser_hash) {
      throw new ApiError("CSRF_FAILED", "this sign-in was started in another browser (its flow cookie is missing or different); start it again here");
    }
    const providerError = callbackUrl.searchParams.get("error");
    if (providerError) {
      throw new ApiError("VALIDATION_ERROR", `the identity provider refused: ${providerError}${callbackUrl.searchParams.get("error_description") ? ` (${callbackUrl.searchParams.get("error_description")})` : ""}`);
    }
    const configuration = await this.configuration();
    let claims: oidc.IDToken | undefined;
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: flow.code_verifier,
        expectedState: state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims();
    } catch (err) {
      this.log.warn("identity provider sign-in failed", { err: errorMessage(err) });
      throw new ApiError("VALIDATION_ERROR", `the identity provider's answer was refused: ${errorMessage(err)}`);
    }
    if (!claims) throw new ApiError("VALIDATION_ERROR", "the identity provider sent no ID token");
    return {
      purpose: flow.purpose,
      userId: flow.user_id,
      returnTo: flow.return_to,
      issuer: claims.iss,
      subject: claims.sub,
      email: typeof claims.email === "string" ? claims.email : null,
      emailVerified: claims.email_verified === true,
    };
  }
}

export function findIdentity(db: SqlClient, issuer: string, subject: string): Promise<{ user_id: string } | null> {
  return db.one<{ user_id: string }>("SELECT user_id FROM identities WHERE issuer = ? AND subject = ?", [issuer, subject]);
}

export function identitiesOf(db: SqlClient, userId: string): Promise<Identity[]> {
  return db.all<Identity>("SELECT provider, issuer, subject, email, created_at FROM identities WHERE user_id = ? ORDER BY provider", [userId]);
}

/** A user's identities change one transaction at a time (the user's row locked on PostgreSQL). */
async function lockUser(tx: SqlClient, userId: string): Promise<void> {
  await tx.one(`SELECT id FROM users WHERE id = ? ${tx.dialect.forUpdate}`, [userId]);
}

export async function linkIdentity(
  db: SqlClient,
  clock: Clock,
  input: { provider: string; issuer: string; subject: string; userId: string; email: string | null },
): Promise<void> {
  await db.transaction(async (tx) => {
    await lockUser(tx, input.userId);
    const owner = await findIdentity(tx, input.issuer, input.subject);
    if (owner && owner.user_id !== input.userId) {
      throw new ApiError("IDENTITY_ALREADY_LINKED", "this identity is already linked to another user");
    }
    if (owner) return;
    const other = (await tx.one<{ n: number }>("SELECT count(*) AS n FROM identities WHERE user_id = ? AND provider = ?", [input.userId, input.provider]))!.n;
    if (other) throw new ApiError("IDENTITY_ALREADY_LINKED", `another ${input.provider} identity is linked to this user; unlink it first`);
    await tx.run("INSERT INTO identities (provider, issuer, subject, user_id, email, created_at) VALUES (?, ?, ?, ?, ?, ?)", [
      input.provider, input.issuer, input.subject, input.userId, input.email, isoAt(clock.now()),
    ]);
  });
}

/** Unlinks; refuses when the user would have no way left to sign in. Returns whether one was linked. */
export function unlinkIdentity(db: SqlClient, userId: string, provider: string, hasPassword: boolean): Promise<boolean> {
  return db.transaction(async (tx) => {
    await lockUser(tx, userId);
    const linked = (await tx.one<{ n: number }>("SELECT count(*) AS n FROM identities WHERE user_id = ?", [userId]))!.n;
    const mine = (await tx.one<{ n: number }>("SELECT count(*) AS n FROM identities WHERE user_id = ? AND provider = ?", [userId, provider]))!.n;
    if (!mine) return false;
    if (!hasPassword && linked - mine < 1) {
      throw new ApiError("LAST_SIGN_IN_METHOD", "this identity is your only way to sign in; set a password (password reset) before unlinking it");
    }
    await tx.run("DELETE FROM identities WHERE user_id = ? AND provider = ?", [userId, provider]);
    return true;
  });
}
