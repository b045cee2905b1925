/**
 * The cloud drive provider interface, in the manner of tusd's stores: a small core every
 * provider implements (OAuth, identity, listing, metadata, download, upload, folders) and
 * optional capabilities a provider may lack (the picker and its proxy, hosted spreadsheets),
 * which callers ask for by checking the member; revocation is the OAuth client's to offer. Providers speak HTTP to base URLs
 * that are settings and throw ProviderError, whose kind says what the caller may do about it.
 */

export const PROVIDER_NAMES = ["google_drive", "nextcloud"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export interface TokenSet {
  accessToken: string;
  /** Providers may omit it on refresh: the previous one stays valid then. */
  refreshToken: string | null;
  /** ms since epoch, or null when the provider does not say. */
  expiresAt: number | null;
  scope: string | null;
  /** What the token response says about the account (Nextcloud's user_id). */
  userId: string | null;
}

/** What calls to the provider's API need. */
export interface Access {
  accessToken: string;
  providerUserId: string;
}

export interface Identity {
  userId: string;
  email: string | null;
  displayName: string | null;
}

/** One file or folder as the browse response shows it. */
export interface CloudEntry {
  id: string;
  name: string;
  mime_type: string;
  size_bytes: number | null;
  modified_at: string | null;
  is_folder: boolean;
  web_view_link: string | null;
  thumbnail_url: string | null;
  /**
   * The provider's own part: a file it converts on import (a Google Doc exported as DOCX). The
   * listing adds the files a media kind's hints forecast (connections' browse).
   */
  is_importable: boolean;
}

export interface Breadcrumb {
  id: string;
  name: string;
}

export interface FolderPage {
  files: CloudEntry[];
  next_page_token: string | null;
  current_folder_id: string;
  breadcrumbs: Breadcrumb[];
}

export interface Download {
  body: ReadableStream<Uint8Array>;
  /** The content type the provider declared (detection decides; this is only a hint). */
  contentType: string | null;
  /** A native document exported to a file format gets that format's extension. */
  filenameSuffix: string | null;
}

export interface Upload {
  folderId: string | null;
  name: string;
  mimeType: string;
  /** A Blob so the bytes can stay on disk (Bun.file) and be sent with their length, never read into memory. */
  body: Blob;
}

export interface CloudProvider {
  readonly name: ProviderName;
  /** The grant: authorization URL, code exchange, refresh and (where the provider offers it) revocation. */
  readonly oauth: OAuthClient;
  identity(access: Access): Promise<Identity>;
  list(access: Access, request: { folderId: string | null; pageToken: string | null; pageSize: number }): Promise<FolderPage>;
  metadata(access: Access, id: string): Promise<CloudEntry>;
  download(access: Access, entry: { id: string; mimeType: string | null }, signal?: AbortSignal): Promise<Download>;
  upload(access: Access, upload: Upload): Promise<CloudEntry>;
  createFolder(access: Access, request: { parentId: string | null; name: string }): Promise<CloudEntry>;
  /** Optional: a client-side picker the browser runs with the access token. */
  picker?: PickerCapability;
  /** Optional: writes a spreadsheet the provider hosts; returns its URL. */
  hostSpreadsheet?(access: Access, request: { title: string; csv: Uint8Array; xlsx: Uint8Array }): Promise<{ id: string; url: string }>;
}

export interface PickerCapability {
  appId: string | null;
  developerKey: string | null;
  /** The provider's API paths the proxy may reach, as patterns over `endpoint`. */
  allowedEndpoints: readonly RegExp[];
  /** Calls one allowed endpoint with GET and the given query; answers its JSON. */
  call(access: Access, endpoint: string, params: Record<string, string>): Promise<unknown>;
}

export type ProviderErrorKind =
  /** The access token was refused (expired or revoked): refresh, then reconnect. */
  | "unauthorized"
  /** The grant itself is gone (refresh refused): the user must reconnect. */
  | "grant_revoked"
  | "not_found"
  /** 429: retry after a while. */
  | "rate_limited"
  /** 5xx, network failure: retry. */
  | "unavailable"
  /** Anything else the provider refused (bad request, forbidden, OAuth error). */
  | "refused";

export class ProviderError extends Error {
  override name = "ProviderError";
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }

  get retryable(): boolean {
    return this.kind === "rate_limited" || this.kind === "unavailable";
  }
}

/** Fetch that turns network failures into ProviderError("unavailable"). */
export async function providerFetch(provider: string, url: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(url, { redirect: "manual", ...init });
  } catch (err) {
    if ((err as { name?: string }).name === "AbortError") throw err;
    throw new ProviderError("unavailable", `${provider} is unreachable at ${new URL(url).origin}: ${(err as Error).message}`);
  }
}

/** The ProviderError an unsuccessful API answer stands for. */
export async function errorFromResponse(provider: string, what: string, response: Response): Promise<ProviderError> {
  const text = await response.text().catch(() => "");
  const detail = text.slice(0, 300).replace(/\s+/g, " ").trim();
  const retryAfter = Number(response.headers.get("retry-after"));
  const message = `${provider} answered ${response.status} to ${what}${detail ? `: ${detail}` : ""}`;
  if (response.status === 401) return new ProviderError("unauthorized", message);
  if (response.status === 404) return new ProviderError("not_found", message);
  // Google reports per-user rate limits as 403 with a rateLimitExceeded reason.
  if (response.status === 403 && /(userRateLimitExceeded|rateLimitExceeded)/.test(detail)) return new ProviderError("rate_limited", message, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null);
  if (response.status === 429) return new ProviderError("rate_limited", message, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null);
  if (response.status >= 500) return new ProviderError("unavailable", message, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null);
  return new ProviderError("refused", message);
}

/** Where a provider does the OAuth 2.0 grant, and what it asks for. */
export interface OAuthEndpoints {
  authorizeUrl: string;
  tokenUrl: string;
  /** RFC 7009 revocation; null where the provider has none (Nextcloud by default). */
  revokeUrl: string | null;
  scope: string;
  /** Authorize parameters of the provider's own (Google: offline access, asked with consent). */
  authorizeParams?: Record<string, string>;
}

/**
 * The authorization-code grant with PKCE S256 (RFC 6749 §4.1 and §6, RFC 7636) and revocation
 * (RFC 7009): the same for every provider but for its endpoints and client.
 */
export class OAuthClient {
  constructor(
    private readonly provider: string,
    private readonly client: { id: string; secret: string },
    private readonly endpoints: OAuthEndpoints,
  ) {}

  /** Whether the provider offers revocation (otherwise the user removes the grant there). */
  get revocable(): boolean {
    return this.endpoints.revokeUrl !== null;
  }

  authorizationUrl(request: { state: string; codeChallenge: string; redirectUri: string }): string {
    const url = new URL(this.endpoints.authorizeUrl);
    const params = {
      response_type: "code",
      client_id: this.client.id,
      redirect_uri: request.redirectUri,
      scope: this.endpoints.scope,
      state: request.state,
      code_challenge: request.codeChallenge,
      code_challenge_method: "S256",
      ...this.endpoints.authorizeParams,
    };
    for (const [k, v] of Object.entries(params)) if (v) url.searchParams.set(k, v);
    return url.toString();
  }

  exchangeCode(request: { code: string; codeVerifier: string; redirectUri: string }): Promise<TokenSet> {
    return this.tokenRequest({ grant_type: "authorization_code", code: request.code, code_verifier: request.codeVerifier, redirect_uri: request.redirectUri });
  }

  refresh(refreshToken: string): Promise<TokenSet> {
    return this.tokenRequest({ grant_type: "refresh_token", refresh_token: refreshToken });
  }

  /** Revokes the grant; does nothing where the provider offers no revocation. An error answer throws: the caller logs it, it is never fatal. */
  async revoke(token: string): Promise<void> {
    if (this.endpoints.revokeUrl === null) return;
    const response = await providerFetch(this.provider, this.endpoints.revokeUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token, client_id: this.client.id, client_secret: this.client.secret }),
    });
    if (!response.ok) throw await errorFromResponse(this.provider, "the token revocation", response);
  }

  private async tokenRequest(params: Record<string, string>): Promise<TokenSet> {
    const provider = this.provider;
    const response = await providerFetch(provider, this.endpoints.tokenUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({ ...params, client_id: this.client.id, client_secret: this.client.secret }),
    });
    const text = await response.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Handled below: a token endpoint that does not answer JSON is refused.
    }
    if (!response.ok || typeof body.access_token !== "string") {
      const code = typeof body.error === "string" ? body.error : `HTTP ${response.status}`;
      const description = typeof body.error_description === "string" ? `: ${body.error_description}` : "";
      if (response.status >= 500) throw new ProviderError("unavailable", `${provider}'s token endpoint failed (${code})`);
      // invalid_grant: the code or refresh token is unknown, used, expired or revoked.
      throw new ProviderError(code === "invalid_grant" ? "grant_revoked" : "refused", `${provider} refused the token request (${code}${description})`);
    }
    const expiresIn = Number(body.expires_in);
    return {
      accessToken: body.access_token,
      refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : null,
      expiresAt: Number.isFinite(expiresIn) && expiresIn > 0 ? Date.now() + expiresIn * 1000 : null,
      scope: typeof body.scope === "string" ? body.scope : null,
      userId: typeof body.user_id === "string" ? body.user_id : null,
    };
  }
}

