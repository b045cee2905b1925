/**
 * Cloud drive connections: the OAuth 2.0 authorization-code flow with PKCE (S256) and a random,
 * single-use, short-lived state bound to the organization and the API key that started it; the
 * connections with their tokens sealed by the token vault, refreshed before they expire (and once
 * more when the provider refuses one early), revoked at the provider on removal; browsing; picker
 * sessions and the picker proxy. This module is the only writer of `cloud_connections`,
 * `cloud_oauth_states` and `cloud_picker_sessions`.
 */
import { createHash, randomBytes } from "node:crypto";
import { isoAt, type Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { ApiError, errorMessage, forTenants } from "../errors.ts";
import type { Logger } from "../log.ts";
import { GoogleDriveProvider } from "./google-drive.ts";
import { NextcloudProvider } from "./nextcloud.ts";
import { PROVIDER_NAMES, ProviderError, type Access, type CloudProvider, type FolderPage, type ProviderName, type TokenSet } from "./provider.ts";
import { TokenVault } from "./token-vault.ts";

/** A token is refreshed when it has less than this left, so a call never starts with a dying token. */
export const REFRESH_MARGIN_MS = 60_000;
/** Picker sessions live as long as the access token they hand out, at most this. */
const PICKER_SESSION_MAX_MS = 3600_000;
/** States older than this are deleted (used or not) by the next flow that starts. */
const STATE_RETENTION_MS = 24 * 3600_000;

export interface ConnectionRow {
  id: string;
  org_id: string;
  provider: ProviderName;
  provider_user_id: string;
  provider_email: string | null;
  provider_display_name: string | null;
  access_token: string;
  refresh_token: string | null;
  token_expires_at: number | null;
  scope: string | null;
  is_active: number;
  grant_error: string | null;
  created_by: string | null;
  connected_at: string;
  last_used_at: string | null;
  updated_at: string;
}

interface StateRow {
  state_hash: string;
  org_id: string;
  key_id: string;
  provider: string;
  code_verifier: string;
  redirect_uri: string;
  created_at: string;
  expires_at: number;
  used_at: string | null;
}

export interface ConnectionView {
  id: string;
  provider: ProviderName;
  provider_email: string | null;
  provider_display_name: string | null;
  is_active: boolean;
  is_token_expired: boolean;
  connected_at: string;
  last_used_at: string | null;
}

/** The connection as the callback page's `oauth-complete` message carries it (spec, Events 2). */
export interface PopupConnection {
  id: string;
  provider: ProviderName;
  provider_email: string | null;
  display_name: string | null;
  is_token_expired: boolean;
}

/** Who completes a flow: the POST callback's caller, or nobody known (the GET callback in the popup). */
export interface Completer {
  orgId: string;
  keyId: string;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const randomToken = () => randomBytes(32).toString("base64url");

/** The provider's failure as the API answers it: never a 500. */
export function apiErrorOf(err: unknown): unknown {
  if (!(err instanceof ProviderError)) return err;
  switch (err.kind) {
    case "not_found":
      return new ApiError("CLOUD_FILE_NOT_FOUND", err.message);
    case "unauthorized":
    case "grant_revoked":
      return new ApiError("CLOUD_CONNECTION_EXPIRED", `${err.message}; connect the drive again (POST /cloud-storage/auth/{provider})`);
    case "rate_limited":
    case "unavailable":
      return new ApiError("CLOUD_PROVIDER_UNAVAILABLE", err.message, { "retry-after": String(err.retryAfterSeconds ?? 30) });
    case "refused":
      return new ApiError("CLOUD_PROVIDER_REFUSED", err.message);
  }
}

export class CloudConnections {
  readonly vault: TokenVault;
  private readonly providers = new Map<ProviderName, CloudProvider>();
  /** One refresh per connection at a time: concurrent callers share it (a refresh token may be single-use). */
  private readonly refreshing = new Map<string, Promise<ConnectionRow>>();

  constructor(
    private readonly sql: SqlClient,
    private readonly clock: Clock,
    private readonly config: Config,
    private readonly log: Logger,
    vault: TokenVault,
  ) {
    this.vault = vault;
    if (config.googleDriveClientId) this.providers.set("google_drive", new GoogleDriveProvider(config));
    if (config.nextcloudUrl) this.providers.set("nextcloud", new NextcloudProvider(config));
  }

  /** Every provider, and whether this appliance has the settings to connect it. */
  providerStates(): { name: ProviderName; configured: boolean }[] {
    return PROVIDER_NAMES.map((name) => ({ name, configured: this.providers.has(name) }));
  }

  /** The provider of that name, or 404 naming what exists. */
  provider(name: string): CloudProvider {
    if (!(PROVIDER_NAMES as readonly string[]).includes(name)) {
      throw new ApiError("CLOUD_PROVIDER_NOT_FOUND", `unknown cloud provider "${name}"; providers are ${PROVIDER_NAMES.join(", ")}`);
    }
    const provider = this.providers.get(name as ProviderName);
    if (!provider) {
      throw new ApiError("CLOUD_PROVIDER_NOT_CONFIGURED", `the ${name} provider is not configured on this appliance (its OAuth client settings are unset)`);
    }
    return provider;
  }

  private now(): string {
    return isoAt(this.clock.now());
  }

  // ---- the OAuth flow -------------------------------------------------------------------------

  /** Starts a flow: a fresh state and PKCE verifier, kept (hashed, sealed) until the callback. */
  async startAuthorization(who: Completer, providerName: string, origin: string) {
    const provider = this.provider(providerName);
    const state = randomToken();
    const verifier = randomToken();
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const redirectUri = `${origin}/api/v2/cloud-storage/auth/${provider.name}/callback`;
    const now = this.clock.now();
    await this.sql.transaction(async (tx) => {
      await tx.run("DELETE FROM cloud_oauth_states WHERE expires_at < ?", [now - STATE_RETENTION_MS]);
      await tx.run(
        `INSERT INTO cloud_oauth_states (state_hash, org_id, key_id, provider, code_verifier, redirect_uri, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [sha256(state), who.orgId, who.keyId, provider.name, this.vault.encrypt(verifier), redirectUri, isoAt(now), now + this.config.cloudOauthStateTtlSeconds * 1000],
      );
    });
    return {
      authorization_url: provider.oauth.authorizationUrl({ state, codeChallenge: challenge, redirectUri }),
      state,
      provider: provider.name,
    };
  }

  /**
   * Uses up a state: it must exist, be unused, unexpired, of this provider and, when the caller is
   * known, of the caller's organization and key. A state that fails the caller check is left
   * alone, so nobody else can burn a user's flow.
   */
  private consumeState(providerName: string, state: string, who: Completer | null): Promise<StateRow> {
    return this.sql.transaction(async (tx) => {
      const row = await tx.one<StateRow>(`SELECT * FROM cloud_oauth_states WHERE state_hash = ? ${tx.dialect.forUpdate}`, [sha256(state)]);
      const invalid = (why: string) => new ApiError("OAUTH_STATE_INVALID", `the OAuth state ${why}; start again with POST /cloud-storage/auth/${providerName}`);
      if (!row) throw invalid("is unknown");
      if (who && (row.org_id !== who.orgId || row.key_id !== who.keyId)) throw invalid("was not issued to this API key");
      if (row.used_at) throw invalid("was already used");
      if (row.provider !== providerName) throw invalid(`was issued for ${row.provider}`);
      if (row.expires_at < this.clock.now()) throw invalid("has expired");
      await tx.run("UPDATE cloud_oauth_states SET used_at = ? WHERE state_hash = ?", [this.now(), row.state_hash]);
      return row;
    });
  }

  /**
   * Completes a flow: consumes the state, then (unless the provider reported an error) exchanges
   * the code with the PKCE verifier, asks who the account is, and records the connection. The same
   * account connected again updates its connection (`is_new` false).
   */
  async completeAuthorization(
    providerName: string,
    params: { code?: string | undefined; state?: string | undefined; error?: string | undefined; error_description?: string | undefined },
    who: Completer | null,
  ): Promise<{ connection: ConnectionRow; is_new: boolean; openerOrigin: string }> {
    const provider = this.provider(providerName);
    if (!params.state) throw new ApiError("OAUTH_STATE_INVALID", "the callback has no state");
    const state = await this.consumeState(provider.name, params.state, who);
    if (params.error) {
      throw new ApiError("OAUTH_PROVIDER_ERROR", `${provider.name} ended the authorization: ${params.error}${params.error_description ? ` (${params.error_description})` : ""}`);
    }
    if (!params.code) throw new ApiError("OAUTH_PROVIDER_ERROR", `${provider.name} sent no authorization code`);
    let tokens: TokenSet;
    try {
      tokens = await provider.oauth.exchangeCode({ code: params.code, codeVerifier: this.vault.decrypt(state.code_verifier), redirectUri: state.redirect_uri });
    } catch (err) {
      if (err instanceof ProviderError && (err.kind === "grant_revoked" || err.kind === "refused")) throw new ApiError("OAUTH_PROVIDER_ERROR", err.message);
      throw apiErrorOf(err);
    }
    let identity;
    try {
      identity = await provider.identity({ accessToken: tokens.accessToken, providerUserId: tokens.userId ?? "" });
    } catch (err) {
      throw apiErrorOf(err);
    }
    const now = this.now();
    const result = await this.sql.transaction(async (tx) => {
      const existing = await tx.one<{ id: string }>(`SELECT id FROM cloud_connections WHERE org_id = ? AND provider = ? AND provider_user_id = ? ${tx.dialect.forUpdate}`, [
        state.org_id,
        provider.name,
        identity.userId,
      ]);
      const id = existing?.id ?? crypto.randomUUID();
      await tx.run(
          `INSERT INTO cloud_connections (id, org_id, provider, provider_user_id, provider_email, provider_display_name, access_token,
             refresh_token, token_expires_at, scope, is_active, grant_error, created_by, connected_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, NULL, ?, ?, ?)
           ON CONFLICT (org_id, provider, provider_user_id) DO UPDATE SET
             provider_email = excluded.provider_email, provider_display_name = excluded.provider_display_name,
             access_token = excluded.access_token, refresh_token = coalesce(excluded.refresh_token, cloud_connections.refresh_token),
             token_expires_at = excluded.token_expires_at, scope = excluded.scope, is_active = 1, grant_error = NULL,
             connected_at = excluded.connected_at, updated_at = excluded.updated_at`,
        [
          id, state.org_id, provider.name, identity.userId, identity.email, identity.displayName, this.vault.encrypt(tokens.accessToken),
          tokens.refreshToken ? this.vault.encrypt(tokens.refreshToken) : null, tokens.expiresAt, tokens.scope, state.key_id, now, now,
        ],
      );
      return { connection: await this.row(state.org_id, id, tx), is_new: !existing };
    });
    return { ...result, openerOrigin: this.openerOrigin(state.redirect_uri) };
  }

  /** Where the callback page may post its message: the setting, else the callback's own origin. */
  openerOrigin(redirectUri: string | null): string {
    return this.config.cloudOauthOpenerOrigin ?? (redirectUri ? new URL(redirectUri).origin : "null");
  }

  // ---- connections ------------------------------------------------------------------------------

  private async row(orgId: string, id: string, sql: SqlClient = this.sql): Promise<ConnectionRow> {
    const row = await sql.one<ConnectionRow>("SELECT * FROM cloud_connections WHERE id = ? AND org_id = ?", [id, orgId]);
    if (!row) throw new ApiError("CLOUD_CONNECTION_NOT_FOUND", `cloud connection ${id} not found`);
    return row;
  }

  /** The organization's connection, or 404 (another organization's is indistinguishable from none). */
  connection(orgId: string, id: string): Promise<ConnectionRow> {
    return this.row(orgId, id.toLowerCase());
  }

  isTokenExpired(row: ConnectionRow): boolean {
    if (row.grant_error) return true;
    return row.token_expires_at !== null && row.token_expires_at <= this.clock.now() && row.refresh_token === null;
  }

  view(row: ConnectionRow): ConnectionView {
    return {
      id: row.id,
      provider: row.provider,
      provider_email: row.provider_email,
      provider_display_name: row.provider_display_name,
      is_active: row.is_active === 1 && row.grant_error === null,
      is_token_expired: this.isTokenExpired(row),
      connected_at: row.connected_at,
      last_used_at: row.last_used_at,
    };
  }

  popupView(row: ConnectionRow): PopupConnection {
    return { id: row.id, provider: row.provider, provider_email: row.provider_email, display_name: row.provider_display_name, is_token_expired: this.isTokenExpired(row) };
  }

  async list(orgId: string, query: { provider?: string | undefined; activeOnly: boolean; limit: number; offset: number }) {
    const where = ["org_id = ?"];
    const params: (string | number)[] = [orgId];
    if (query.provider) {
      this.provider(query.provider);
      where.push("provider = ?");
      params.push(query.provider);
    }
    if (query.activeOnly) where.push("is_active = 1 AND grant_error IS NULL");
    const clause = where.join(" AND ");
    const total = (await this.sql.one<{ n: number }>(`SELECT count(*) AS n FROM cloud_connections WHERE ${clause}`, params))!.n;
    const rows = await this.sql.all<ConnectionRow>(`SELECT * FROM cloud_connections WHERE ${clause} ORDER BY connected_at DESC, id LIMIT ? OFFSET ?`, [...params, query.limit, query.offset]);
    return { items: rows.map((r) => this.view(r)), total_count: total, limit: query.limit, offset: query.offset, has_more: query.offset + rows.length < total };
  }

  /**
   * Revokes the grant at the provider (when it offers revocation) and removes the connection.
   * A provider that cannot be reached does not keep the connection here: the tokens are deleted
   * all the same, and the message says the provider may still list the grant.
   */
  async remove(orgId: string, id: string): Promise<{ success: boolean; message: string }> {
    const row = await this.connection(orgId, id);
    const provider = this.providers.get(row.provider);
    let revoked = "the provider offers no revocation; remove the app's access in the provider's settings if needed";
    if (provider?.oauth.revocable) {
      try {
        // Revoking the refresh token ends the whole grant; the access token goes with it.
        await provider.oauth.revoke(this.vault.decrypt(row.refresh_token ?? row.access_token));
        revoked = "its grant was revoked at the provider";
      } catch (err) {
        this.log.warn("cloud token revocation failed; the connection is removed anyway", { connection_id: row.id, err: errorMessage(err) });
        revoked = `revocation at the provider failed (${errorMessage(err)}); the tokens were deleted here all the same`;
      }
    }
    await this.sql.run("DELETE FROM cloud_connections WHERE id = ? AND org_id = ?", [row.id, orgId]);
    return { success: true, message: `connection ${row.id} removed; ${revoked}` };
  }

  /** Re-encrypts tokens sealed with a previous key (after a key rotation); returns how many rows. */
  async resealStaleTokens(): Promise<number> {
    const rows = await this.sql.all<Pick<ConnectionRow, "id" | "access_token" | "refresh_token">>("SELECT id, access_token, refresh_token FROM cloud_connections");
    let changed = 0;
    for (const row of rows) {
      if (!this.vault.isStale(row.access_token) && !(row.refresh_token && this.vault.isStale(row.refresh_token))) continue;
      try {
        const access = this.vault.encrypt(this.vault.decrypt(row.access_token));
        const refresh = row.refresh_token ? this.vault.encrypt(this.vault.decrypt(row.refresh_token)) : null;
        await this.sql.run("UPDATE cloud_connections SET access_token = ?, refresh_token = ? WHERE id = ?", [access, refresh, row.id]);
        changed += 1;
      } catch (err) {
        this.log.error("a cloud connection's tokens cannot be decrypted with the configured keys; it must be connected again", { connection_id: row.id, err: errorMessage(err) });
      }
    }
    return changed;
  }

  // ---- calling the provider -----------------------------------------------------------------

  private async markGrantRevoked(row: ConnectionRow, why: string): Promise<void> {
    await this.sql.run("UPDATE cloud_connections SET grant_error = ?, updated_at = ? WHERE id = ?", [forTenants(why), this.now(), row.id]);
  }

  private refresh(row: ConnectionRow): Promise<ConnectionRow> {
    const running = this.refreshing.get(row.id);
    if (running) return running;
    const work = (async () => {
      const provider = this.provider(row.provider);
      if (!row.refresh_token) throw new ProviderError("grant_revoked", `${row.provider}: the access token expired and the connection has no refresh token`);
      let tokens: TokenSet;
      try {
        tokens = await provider.oauth.refresh(this.vault.decrypt(row.refresh_token));
      } catch (err) {
        if (err instanceof ProviderError && (err.kind === "grant_revoked" || err.kind === "unauthorized")) await this.markGrantRevoked(row, err.message);
        throw err;
      }
      await this.sql.run("UPDATE cloud_connections SET access_token = ?, refresh_token = coalesce(?, refresh_token), token_expires_at = ?, updated_at = ? WHERE id = ?", [
        this.vault.encrypt(tokens.accessToken),
        tokens.refreshToken ? this.vault.encrypt(tokens.refreshToken) : null,
        tokens.expiresAt,
        this.now(),
        row.id,
      ]);
      return this.row(row.org_id, row.id);
    })();
    this.refreshing.set(row.id, work);
    return work.finally(() => this.refreshing.delete(row.id));
  }

  private access(row: ConnectionRow): Access {
    return { accessToken: this.vault.decrypt(row.access_token), providerUserId: row.provider_user_id };
  }

  /**
   * Runs `call` with a live access token of the connection: refreshed first when it is about to
   * expire, refreshed once more and retried when the provider refuses it anyway (revoked early,
   * clock skew). A grant the provider no longer honours marks the connection expired.
   * Throws ProviderError (jobs decide about retries; routes map it with apiErrorOf).
   */
  async withAccess<T>(row: ConnectionRow, call: (access: Access, provider: CloudProvider) => Promise<T>): Promise<T> {
    const provider = this.provider(row.provider);
    if (row.grant_error) throw new ProviderError("grant_revoked", `${row.provider} refused the connection's grant earlier (${row.grant_error})`);
    let current = row;
    if (current.token_expires_at !== null && current.token_expires_at - this.clock.now() < REFRESH_MARGIN_MS) current = await this.refresh(current);
    try {
      return await this.used(current, await call(this.access(current), provider));
    } catch (err) {
      if (!(err instanceof ProviderError) || err.kind !== "unauthorized") throw err;
      current = await this.refresh(current);
      try {
        return await this.used(current, await call(this.access(current), provider));
      } catch (again) {
        if (again instanceof ProviderError && again.kind === "unauthorized") await this.markGrantRevoked(current, again.message);
        throw again;
      }
    }
  }

  private async used<T>(row: ConnectionRow, value: T): Promise<T> {
    await this.sql.run("UPDATE cloud_connections SET last_used_at = ? WHERE id = ?", [this.now(), row.id]);
    return value;
  }

  /** withAccess for routes: provider failures become API errors. */
  async call<T>(row: ConnectionRow, call: (access: Access, provider: CloudProvider) => Promise<T>): Promise<T> {
    try {
      return await this.withAccess(row, call);
    } catch (err) {
      throw apiErrorOf(err);
    }
  }

  async browse(orgId: string, id: string, query: { folderId: string | null; pageToken: string | null; pageSize: number }): Promise<FolderPage & { provider: ProviderName }> {
    const row = await this.connection(orgId, id);
    const page = await this.call(row, (access, provider) => provider.list(access, query));
    return { ...page, provider: row.provider };
  }

  // ---- picker -----------------------------------------------------------------------------------

  async pickerSession(orgId: string, id: string) {
    const row = await this.connection(orgId, id);
    const provider = this.provider(row.provider);
    if (!provider.picker) throw new ApiError("CLOUD_NOT_SUPPORTED", `the ${row.provider} provider has no picker; list its folders with GET /cloud-storage/connections/${row.id}/browse`);
    // withAccess refreshes a token about to expire, so the picker starts with a live one.
    const live = await this.call(row, async () => this.row(orgId, row.id));
    const now = this.clock.now();
    const expiresAt = Math.min(now + PICKER_SESSION_MAX_MS, live.token_expires_at ?? now + PICKER_SESSION_MAX_MS);
    const sessionId = crypto.randomUUID();
    await this.sql.transaction(async (tx) => {
      await tx.run("DELETE FROM cloud_picker_sessions WHERE expires_at < ?", [now]);
      await tx.run("INSERT INTO cloud_picker_sessions (id, org_id, connection_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)", [sessionId, orgId, row.id, isoAt(now), expiresAt]);
    });
    return {
      session: {
        session_id: sessionId,
        access_token: this.vault.decrypt(live.access_token),
        app_id: provider.picker.appId,
        developer_key: provider.picker.developerKey,
        expires_at: isoAt(expiresAt),
      },
    };
  }

  /** Calls the provider for the picker, through the session, on the allowed endpoints only. */
  async pickerProxy(orgId: string, request: { session_id: string; endpoint: string; params?: Record<string, string> | undefined }) {
    const session = await this.sql.one<{ connection_id: string; expires_at: number }>("SELECT connection_id, expires_at FROM cloud_picker_sessions WHERE id = ? AND org_id = ?", [
      request.session_id.toLowerCase(),
      orgId,
    ]);
    if (!session || session.expires_at < this.clock.now()) {
      throw new ApiError("PICKER_SESSION_NOT_FOUND", `picker session ${request.session_id} is unknown or expired; get a new one from GET /cloud-storage/connections/{id}/picker-token`);
    }
    const row = await this.sql.one<ConnectionRow>("SELECT * FROM cloud_connections WHERE id = ? AND org_id = ?", [session.connection_id, orgId]);
    if (!row) throw new ApiError("PICKER_SESSION_NOT_FOUND", `the connection of picker session ${request.session_id} was removed`);
    const picker = this.provider(row.provider).picker!;
    const endpoint = request.endpoint.replace(/^\/+/, "");
    if (!picker.allowedEndpoints.some((pattern) => pattern.test(endpoint))) {
      throw new ApiError("PICKER_ENDPOINT_FORBIDDEN", `the picker proxy reaches only files, files/{id}, files/{id}/export and about; "${request.endpoint}" is not one of them`);
    }
    const params = request.params ?? {};
    // Media downloads go through imports, where the ingest path checks them; the proxy answers metadata.
    // Any spelling of the name: a provider may read ALT=media as alt=media.
    const mediaAsked = Object.entries(params).some(([name, value]) => name.toLowerCase() === "alt" && String(value).toLowerCase() !== "json");
    if (mediaAsked) throw new ApiError("PICKER_ENDPOINT_FORBIDDEN", "the picker proxy does not download media (alt=media); import the file instead");
    const data = await this.call(row, (access) => picker.call(access, endpoint, params));
    return { data };
  }
}
