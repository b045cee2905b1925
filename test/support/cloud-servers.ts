/**
 * The servers cloud storage tests talk to, all on 127.0.0.1 and started by the tests:
 * - an OAuth 2.0 authorization server: oidc-provider (npm) with PKCE required, refresh tokens,
 *   revocation, and a one-button consent page (`Allow` / `Deny`) instead of a login form;
 * - a Google-Drive-v3-shaped API (files.list with `q` on parents, files.get, alt=media, export,
 *   multipart upload, folder create, about) that accepts the authorization server's tokens;
 * - a Nextcloud-shaped server: OCS user info and WebDAV under remote.php/dav/files/<user> served
 *   by webdav-server (npm) over a directory on disk.
 * Each API server can be told to fail the next requests matching a pattern (429, 503, ...).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Provider from "oidc-provider";
import { v2 as webdav } from "webdav-server";

export const ACCOUNT = { id: "alice", email: "alice@example.test", name: "Alice Example" };

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections?.();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

export interface AuthServer {
  url: string;
  provider: any;
  /** (Re)creates the provider with these clients (redirect URIs are known once Mediabox listens). */
  configure(clients: OAuthClient[]): void;
  /** The account id a live access token belongs to, or null (unknown, expired, revoked). */
  validate(token: string): Promise<string | null>;
  /** Lifetime of access tokens issued from now on. */
  setAccessTokenTtl(seconds: number): void;
  /** The provider forgets this access token (revoked early); the grant and refresh token stay. */
  expireAccessToken(token: string): Promise<void>;
  /** The user revokes the app at the provider: the token's grant and the token go. */
  revokeGrantOf(token: string): Promise<void>;
  stop(): Promise<void>;
}

const consentPage = (uid: string) => `<!doctype html><html><body>
<h1>Allow Mediabox to use your drive?</h1>
<form method="post" action="/interaction/${uid}/allow"><button id="allow" type="submit">Allow</button></form>
<form method="post" action="/interaction/${uid}/deny"><button id="deny" type="submit">Deny</button></form>
</body></html>`;

export async function startAuthServer(options: { accessTokenTtlSeconds?: number } = {}): Promise<AuthServer> {
  let provider: any = null;
  let url = "";
  let accessTokenTtl = options.accessTokenTtlSeconds ?? 3600;
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    try {
      if (!provider) throw new Error("authorization server not configured");
      const match = /^\/interaction\/([^/?]+)(?:\/(allow|deny))?/.exec(req.url ?? "");
      if (!match) return provider.callback()(req, res);
      const details = await provider.interactionDetails(req, res);
      if (!match[2]) {
        res.writeHead(200, { "content-type": "text/html" });
        return res.end(consentPage(details.uid));
      }
      if (match[2] === "deny") {
        return provider.interactionFinished(req, res, { error: "access_denied", error_description: "the user denied access" }, { mergeWithLastSubmission: false });
      }
      const grant = new provider.Grant({ accountId: ACCOUNT.id, clientId: details.params.client_id });
      grant.addOIDCScope(String(details.params.scope ?? "openid"));
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId: ACCOUNT.id }, consent: { grantId } }, { mergeWithLastSubmission: false });
    } catch (err) {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(err));
    }
  });
  const port = await listen(server);
  url = `http://127.0.0.1:${port}`;
  const create = (clients: OAuthClient[]) =>
    new Provider(url, {
        clients: clients.map((c) => ({
          client_id: c.clientId,
          client_secret: c.clientSecret,
          redirect_uris: [c.redirectUri],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          token_endpoint_auth_method: "client_secret_post",
        })),
        // Every client must use PKCE, confidential ones included (OAuth 2.1).
        pkce: { required: () => true },
        features: { devInteractions: { enabled: false }, revocation: { enabled: true, allowedPolicy: async () => true } },
        interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
        issueRefreshToken: async (_ctx: unknown, client: any) => client.grantTypeAllowed("refresh_token"),
        rotateRefreshToken: false,
        findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id, email: ACCOUNT.email, name: ACCOUNT.name }) }),
        claims: { openid: ["sub"], email: ["email"], profile: ["name"] },
        ttl: { AccessToken: () => accessTokenTtl, AuthorizationCode: 60, IdToken: 3600, Interaction: 600, Session: 3600, Grant: 3600, RefreshToken: 86400 },
        cookies: { keys: ["test-cookie-key"] },
    });
  return {
    url,
    get provider() {
      return provider;
    },
    configure(clients) {
      // Its development-mode warnings (in-memory adapter, generated keys) are what a test wants; keep them quiet.
      const warn = console.warn;
      console.warn = () => {};
      try {
        provider = create(clients);
      } finally {
        console.warn = warn;
      }
      // Errors of refused requests are part of the tests; only real faults are worth printing.
      provider.on("server_error", (_ctx: unknown, err: unknown) => console.error("oidc-provider server_error", err));
    },
    async validate(token) {
      if (!provider) return null;
      const found = await provider.AccessToken.find(token);
      if (!found || found.isExpired) return null;
      return found.accountId as string;
    },
    setAccessTokenTtl(seconds) {
      accessTokenTtl = seconds;
    },
    async expireAccessToken(token) {
      const found = await provider.AccessToken.find(token);
      if (!found) throw new Error("no such access token");
      await found.destroy();
    },
    async revokeGrantOf(token) {
      const found = await provider.AccessToken.find(token);
      if (!found) throw new Error("no such access token");
      const grant = await provider.Grant.find(found.grantId);
      await grant?.destroy();
      await found.destroy();
    },
    stop: () => close(server),
  };
}

/** Makes the next `times` requests whose "METHOD path" matches `pattern` fail with `status`. */
export interface Fault {
  pattern: RegExp;
  status: number;
  times: number;
  retryAfter?: number;
}

function takeFault(faults: Fault[], line: string): Fault | null {
  const fault = faults.find((f) => f.times > 0 && f.pattern.test(line));
  if (!fault) return null;
  fault.times -= 1;
  return fault;
}

// ---- Drive v3 ---------------------------------------------------------------------------------

interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  bytes: Uint8Array | null;
  modifiedTime: string;
}

export interface DriveServer {
  url: string;
  files: Map<string, DriveFile>;
  faults: Fault[];
  /** Every request as "METHOD path?query". */
  requests: string[];
  /** Access tokens the server was called with, in order. */
  tokens: string[];
  add(file: { id?: string; name: string; mimeType: string; parent?: string; bytes?: Uint8Array }): string;
  stop(): Promise<void>;
}

const FOLDER = "application/vnd.google-apps.folder";

export function startDriveServer(auth: AuthServer): DriveServer {
  const files = new Map<string, DriveFile>();
  files.set("root", { id: "root", name: "My Drive", mimeType: FOLDER, parents: [], bytes: null, modifiedTime: new Date().toISOString() });
  const faults: Fault[] = [];
  const requests: string[] = [];
  const tokens: string[] = [];
  let counter = 0;
  const add: DriveServer["add"] = (f) => {
    const id = f.id ?? `f${++counter}x${crypto.randomUUID().slice(0, 8)}`;
    files.set(id, { id, name: f.name, mimeType: f.mimeType, parents: [f.parent ?? "root"], bytes: f.bytes ?? null, modifiedTime: new Date().toISOString() });
    return id;
  };
  let base = "";
  const view = (f: DriveFile) => ({
    id: f.id,
    name: f.name,
    mimeType: f.mimeType,
    ...(f.bytes ? { size: String(f.bytes.byteLength) } : {}),
    modifiedTime: f.modifiedTime,
    webViewLink: `${base}/view/${f.id}`,
    parents: f.parents,
  });
  const json = (body: unknown, status = 200) => Response.json(body, { status });
  const error = (status: number, message: string) => json({ error: { code: status, message } }, status);

  const uploadSessions = new Map<string, { metadata: { name: string; parents?: string[]; mimeType?: string }; mediaType: string; length: number }>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const line = `${request.method} ${url.pathname}${url.search}`;
      requests.push(line);
      const fault = takeFault(faults, line);
      if (fault) return new Response(JSON.stringify({ error: { code: fault.status } }), { status: fault.status, headers: fault.retryAfter !== undefined ? { "retry-after": String(fault.retryAfter) } : {} });
      const token = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
      if (!token || !(await auth.validate(token))) return error(401, "Invalid Credentials");
      tokens.push(token);
      let path = url.pathname;
      const upload = path.startsWith("/upload/drive/v3/");
      path = path.replace(/^\/(upload\/)?drive\/v3\//, "");
      if (path === "about") return json({ user: { displayName: ACCOUNT.name, emailAddress: ACCOUNT.email, permissionId: "perm-alice" } });
      if (path === "files" && request.method === "GET") {
        const q = url.searchParams.get("q") ?? "";
        const parent = /^'((?:[^'\\]|\\.)*)' in parents/.exec(q)?.[1] ?? "root";
        const children = [...files.values()].filter((f) => f.parents.includes(parent)).sort((a, b) => Number(b.mimeType === FOLDER) - Number(a.mimeType === FOLDER) || a.name.localeCompare(b.name));
        const size = Number(url.searchParams.get("pageSize") ?? 100);
        const offset = Number(url.searchParams.get("pageToken") ?? 0);
        const page = children.slice(offset, offset + size);
        return json({ files: page.map(view), ...(offset + size < children.length ? { nextPageToken: String(offset + size) } : {}) });
      }
      if (path === "files" && upload && url.searchParams.get("uploadType") === "resumable") {
        // Drive's resumable protocol: the POST opens a session (its URI in Location), one PUT sends the bytes.
        if (request.method === "POST") {
          const metadata = (await request.json()) as { name: string; parents?: string[]; mimeType?: string };
          const sessionId = crypto.randomUUID();
          uploadSessions.set(sessionId, { metadata, mediaType: request.headers.get("x-upload-content-type") ?? "application/octet-stream", length: Number(request.headers.get("x-upload-content-length")) });
          return new Response(null, { status: 200, headers: { location: `${base}/upload/drive/v3/files?uploadType=resumable&upload_id=${sessionId}` } });
        }
        const session = uploadSessions.get(url.searchParams.get("upload_id") ?? "");
        if (request.method !== "PUT" || !session) return error(404, "No such upload session");
        const bytes = new Uint8Array(await request.arrayBuffer());
        // The client announced the length when it opened the session, and sent it with the bytes.
        if (bytes.length !== session.length || request.headers.get("content-length") !== String(bytes.length)) return error(400, `expected ${session.length} bytes with their content-length`);
        uploadSessions.delete(url.searchParams.get("upload_id")!);
        const id = add({ name: session.metadata.name, mimeType: session.metadata.mimeType ?? session.mediaType, parent: session.metadata.parents?.[0] ?? "root", bytes });
        return json(view(files.get(id)!));
      }
      if (path === "files" && request.method === "POST") {
        if (upload) {
          const type = request.headers.get("content-type") ?? "";
          const boundary = /boundary=(.+)$/.exec(type)?.[1];
          if (!boundary) return error(400, "multipart/related expected");
          const raw = Buffer.from(await request.arrayBuffer());
          const parts: Buffer[] = [];
          const delimiter = Buffer.from(`--${boundary}`);
          let start = raw.indexOf(delimiter);
          while (start !== -1) {
            const next = raw.indexOf(delimiter, start + delimiter.length);
            if (next === -1) break;
            parts.push(raw.subarray(start + delimiter.length + 2, next - 2));
            start = next;
          }
          const body = (part: Buffer) => part.subarray(part.indexOf("\r\n\r\n") + 4);
          const metadata = JSON.parse(body(parts[0]!).toString("utf8")) as { name: string; parents?: string[]; mimeType?: string };
          const media = body(parts[1]!);
          const mediaType = /content-type: ([^\r\n]+)/i.exec(parts[1]!.subarray(0, parts[1]!.indexOf("\r\n\r\n")).toString())?.[1] ?? "application/octet-stream";
          const id = add({ name: metadata.name, mimeType: metadata.mimeType ?? mediaType, parent: metadata.parents?.[0] ?? "root", bytes: new Uint8Array(media) });
          return json(view(files.get(id)!));
        }
        const metadata = (await request.json()) as { name: string; mimeType: string; parents?: string[] };
        const id = add({ name: metadata.name, mimeType: metadata.mimeType, parent: metadata.parents?.[0] ?? "root" });
        return json(view(files.get(id)!));
      }
      const match = /^files\/([^/]+)(\/export)?$/.exec(path);
      if (match) {
        const file = files.get(decodeURIComponent(match[1]!));
        if (!file) return error(404, `File not found: ${match[1]}`);
        if (match[2]) {
          if (!file.mimeType.startsWith("application/vnd.google-apps.")) return error(403, "Export only supports Docs Editors files.");
          return new Response(file.bytes as Uint8Array<ArrayBuffer>, { headers: { "content-type": url.searchParams.get("mimeType") ?? "application/pdf" } });
        }
        if (url.searchParams.get("alt") === "media") {
          if (!file.bytes || file.mimeType.startsWith("application/vnd.google-apps.")) return error(403, "Only files with binary content can be downloaded. Use Export with Docs Editors files.");
          return new Response(file.bytes as Uint8Array<ArrayBuffer>, { headers: { "content-type": file.mimeType } });
        }
        return json(view(file));
      }
      return error(404, `no route ${path}`);
    },
  });
  base = `http://127.0.0.1:${server.port}`;
  return { url: base, files, faults, requests, tokens, add, stop: async () => void server.stop(true) };
}

// ---- Nextcloud ----------------------------------------------------------------------------------

export interface NextcloudServer {
  url: string;
  /** The user's files on disk (what WebDAV serves under remote.php/dav/files/alice). */
  root: string;
  faults: Fault[];
  requests: string[];
  stop(): Promise<void>;
}

export async function startNextcloudServer(auth: AuthServer): Promise<NextcloudServer> {
  const dir = mkdtempSync(join(tmpdir(), "mediabox-nextcloud-"));
  const root = join(dir, ACCOUNT.id);
  mkdirSync(root);
  const dav = new webdav.WebDAVServer({ rootFileSystem: new webdav.PhysicalFileSystem(root) });
  const faults: Fault[] = [];
  const requests: string[] = [];
  const prefix = `/remote.php/dav/files/${ACCOUNT.id}`;
  const server = createServer(async (req, res) => {
    const line = `${req.method} ${req.url}`;
    requests.push(line);
    const fault = takeFault(faults, line);
    if (fault) {
      res.writeHead(fault.status, fault.retryAfter !== undefined ? { "retry-after": String(fault.retryAfter) } : {});
      return res.end();
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const account = token ? await auth.validate(token) : null;
    if (!account) {
      res.writeHead(401, { "www-authenticate": 'Bearer realm="nextcloud"' });
      return res.end();
    }
    if (req.url?.startsWith("/ocs/v2.php/cloud/user")) {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify({ ocs: { meta: { status: "ok" }, data: { id: account, email: ACCOUNT.email, displayname: ACCOUNT.name } } }));
    }
    if (req.url === prefix || req.url?.startsWith(`${prefix}/`)) {
      // The bearer token was checked above; webdav-server would read the header as Basic credentials.
      delete req.headers.authorization;
      // webdav-server serves paths from its root and writes hrefs under `prefix`.
      req.url = req.url.slice(prefix.length) || "/";
      return dav.executeRequest(req, res, prefix);
    }
    res.writeHead(404);
    res.end();
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    root,
    faults,
    requests,
    async stop() {
      await close(server);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---- driving the consent without a browser ----------------------------------------------------

/**
 * Follows an authorization URL the way a browser would (cookies, redirects), presses Allow or
 * Deny on the consent page, and returns the URL the authorization server finally redirects to
 * (Mediabox's callback, not fetched).
 */
export async function consent(authorizationUrl: string, action: "allow" | "deny", stopAt: string): Promise<URL> {
  const cookies = new Map<string, string>();
  let url = new URL(authorizationUrl);
  let method = "GET";
  for (let hop = 0; hop < 20; hop++) {
    const response = await fetch(url, {
      method,
      redirect: "manual",
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; "), ...(method === "POST" ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
      ...(method === "POST" ? { body: "" } : {}),
    });
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(";");
      const eq = pair!.indexOf("=");
      cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, url);
      await response.arrayBuffer();
      if (next.toString().startsWith(stopAt)) return next;
      url = next;
      method = "GET";
      continue;
    }
    const body = await response.text();
    if (response.status === 200 && url.pathname.startsWith("/interaction/")) {
      url = new URL(`${url.pathname}/${action}`, url);
      method = "POST";
      continue;
    }
    throw new Error(`consent: unexpected ${response.status} from ${url}: ${body.slice(0, 300)}`);
  }
  throw new Error("consent: too many redirects");
}
