/**
 * The `nextcloud` provider, the common on-prem drive: Nextcloud's OAuth 2.0 app for the grant,
 * OCS for the account's identity, and WebDAV for files (PROPFIND listings, GET, PUT, MKCOL) under
 * `remote.php/dav/files/<user>`. Ids are paths below the user's root ("/" is the root), so folders
 * navigate by their path. WebDAV has no paging: a page token is the offset into the listing.
 * Nextcloud has no token revocation endpoint; one can be set for servers that offer it.
 */
import type { Config } from "../config.ts";
import {
  errorFromResponse,
  OAuthClient,
  ProviderError,
  providerFetch,
  type Access,
  type Breadcrumb,
  type CloudEntry,
  type CloudProvider,
  type Download,
  type FolderPage,
  type Identity,
  type Upload,
} from "./provider.ts";

const NAME = "nextcloud";
const PROPFIND_BODY = `<?xml version="1.0" encoding="UTF-8"?>
<d:propfind xmlns:d="DAV:"><d:prop><d:displayname/><d:getcontenttype/><d:getcontentlength/><d:getlastmodified/><d:resourcetype/></d:prop></d:propfind>`;
/** Names tried when the wanted one is taken (an export never overwrites a file in the drive). */
const MAX_NAME_TRIES = 50;

const XML_ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const unescapeXml = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) =>
    name.startsWith("#x") || name.startsWith("#X") ? String.fromCodePoint(parseInt(name.slice(2), 16))
      : name.startsWith("#") ? String.fromCodePoint(Number(name.slice(1)))
        : (XML_ENTITIES[name] ?? whole));

/** The text of the first element named `local` in any namespace prefix, or null. */
function element(xml: string, local: string): string | null {
  const match = new RegExp(`<(?:[\\w.-]+:)?${local}\\b[^>]*?(?:/>|>([\\s\\S]*?)</(?:[\\w.-]+:)?${local}>)`, "i").exec(xml);
  if (!match) return null;
  return match[1] ?? "";
}

interface DavEntry {
  path: string;
  name: string;
  isFolder: boolean;
  mime: string;
  size: number | null;
  modified: string | null;
}

/** Joins a folder path and a name into a path below the user's root ("/a/b"). */
export function childPath(folder: string, name: string): string {
  return `${folder.replace(/\/+$/, "")}/${name}`;
}

function normalizePath(id: string | null): string {
  if (!id || id === "/") return "/";
  const segments = id.split("/").filter(Boolean);
  if (segments.some((s) => s === "." || s === "..")) throw new ProviderError("not_found", `nextcloud: ${id} is not a path in the drive`);
  return `/${segments.join("/")}`;
}

export class NextcloudProvider implements CloudProvider {
  readonly name = NAME;
  readonly oauth: OAuthClient;
  private readonly base: string;

  constructor(config: Config) {
    this.base = config.nextcloudUrl!;
    this.oauth = new OAuthClient(NAME, { id: config.nextcloudClientId!, secret: config.nextcloudClientSecret! }, {
      authorizeUrl: config.nextcloudAuthUrl ?? `${this.base}/index.php/apps/oauth2/authorize`,
      tokenUrl: config.nextcloudTokenUrl ?? `${this.base}/index.php/apps/oauth2/api/v1/token`,
      revokeUrl: config.nextcloudRevokeUrl,
      scope: config.nextcloudScopes,
    });
  }

  async identity(access: Access): Promise<Identity> {
    const response = await providerFetch(NAME, `${this.base}/ocs/v2.php/cloud/user?format=json`, {
      headers: { authorization: `Bearer ${access.accessToken}`, "ocs-apirequest": "true", accept: "application/json" },
    });
    if (!response.ok) throw await errorFromResponse(NAME, "the OCS user request", response);
    const body = (await response.json()) as { ocs?: { data?: { id?: string; email?: string | null; displayname?: string | null; "display-name"?: string | null } } };
    const data = body.ocs?.data;
    if (!data?.id) throw new ProviderError("refused", "nextcloud's OCS user answer names no user");
    return { userId: data.id, email: data.email ?? null, displayName: data.displayname ?? data["display-name"] ?? null };
  }

  private davUrl(access: Access, path: string): string {
    const encoded = path.split("/").map(encodeURIComponent).join("/");
    return `${this.base}/remote.php/dav/files/${encodeURIComponent(access.providerUserId)}${encoded}`;
  }

  private async dav(access: Access, method: string, path: string, what: string, init: { headers?: Record<string, string>; body?: BodyInit; signal?: AbortSignal } = {}): Promise<Response> {
    const response = await providerFetch(NAME, this.davUrl(access, path), {
      method,
      headers: { authorization: `Bearer ${access.accessToken}`, ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
      ...(init.signal ? { signal: init.signal } : {}),
    });
    return response.ok || response.status === 207 ? response : Promise.reject(await errorFromResponse(NAME, what, response));
  }

  private async propfind(access: Access, path: string, depth: 0 | 1): Promise<DavEntry[]> {
    const response = await this.dav(access, "PROPFIND", path, `the listing of ${path}`, {
      headers: { depth: String(depth), "content-type": "application/xml; charset=utf-8" },
      body: PROPFIND_BODY,
    });
    const xml = await response.text();
    const root = new URL(this.davUrl(access, "/")).pathname.replace(/\/+$/, "");
    const entries: DavEntry[] = [];
    for (const match of xml.matchAll(/<(?:[\w.-]+:)?response\b[^>]*>([\s\S]*?)<\/(?:[\w.-]+:)?response>/gi)) {
      const block = match[1]!;
      const href = unescapeXml(element(block, "href") ?? "");
      let hrefPath = decodeURIComponent(href.startsWith("http") ? new URL(href).pathname : href);
      if (!hrefPath.startsWith(decodeURIComponent(root))) continue;
      hrefPath = hrefPath.slice(decodeURIComponent(root).length);
      const entryPath = normalizePath(hrefPath);
      const isFolder = /<(?:[\w.-]+:)?collection\b/i.test(element(block, "resourcetype") ?? "");
      const length = element(block, "getcontentlength");
      const modified = element(block, "getlastmodified");
      entries.push({
        path: entryPath,
        name: entryPath === "/" ? "" : entryPath.split("/").at(-1)!,
        isFolder,
        mime: isFolder ? "httpd/unix-directory" : (element(block, "getcontenttype")?.trim() || "application/octet-stream"),
        size: length ? Number(length) : null,
        modified: modified ? new Date(unescapeXml(modified)).toISOString() : null,
      });
    }
    return entries;
  }

  private entry(dav: DavEntry): CloudEntry {
    const dir = dav.path.slice(0, dav.path.lastIndexOf("/")) || "/";
    return {
      id: dav.path,
      name: dav.name || "/",
      mime_type: dav.mime,
      size_bytes: dav.size,
      modified_at: dav.modified,
      is_folder: dav.isFolder,
      web_view_link: `${this.base}/index.php/apps/files/?dir=${encodeURIComponent(dav.isFolder ? dav.path : dir)}${dav.isFolder ? "" : `&scrollto=${encodeURIComponent(dav.name)}`}`,
      thumbnail_url: null,
      is_importable: false,
    };
  }

  async list(access: Access, request: { folderId: string | null; pageToken: string | null; pageSize: number }): Promise<FolderPage> {
    const folder = normalizePath(request.folderId);
    const all = await this.propfind(access, folder, 1);
    const self = all.find((e) => e.path === folder);
    if (!self?.isFolder) throw new ProviderError("not_found", `nextcloud: ${folder} is not a folder`);
    const children = all
      .filter((e) => e.path !== folder)
      .sort((a, b) => Number(b.isFolder) - Number(a.isFolder) || a.name.localeCompare(b.name));
    const offset = request.pageToken && /^\d+$/.test(request.pageToken) ? Number(request.pageToken) : 0;
    const page = children.slice(offset, offset + request.pageSize);
    const segments = folder.split("/").filter(Boolean);
    const breadcrumbs: Breadcrumb[] = [{ id: "/", name: "Home" }, ...segments.map((name, i) => ({ id: `/${segments.slice(0, i + 1).join("/")}`, name }))];
    return {
      files: page.map((e) => this.entry(e)),
      next_page_token: offset + page.length < children.length ? String(offset + page.length) : null,
      current_folder_id: folder,
      breadcrumbs,
    };
  }

  async metadata(access: Access, id: string): Promise<CloudEntry> {
    const path = normalizePath(id);
    const [found] = await this.propfind(access, path, 0);
    if (!found) throw new ProviderError("not_found", `nextcloud: ${path} not found`);
    return this.entry(found);
  }

  async download(access: Access, file: { id: string }, signal?: AbortSignal): Promise<Download> {
    const response = await this.dav(access, "GET", normalizePath(file.id), `the download of ${file.id}`, signal ? { signal } : {});
    if (!response.body) throw new ProviderError("unavailable", `nextcloud sent no body for ${file.id}`);
    return { body: response.body, contentType: response.headers.get("content-type"), filenameSuffix: null };
  }

  private async exists(access: Access, path: string): Promise<boolean> {
    try {
      await this.propfind(access, path, 0);
      return true;
    } catch (err) {
      if (err instanceof ProviderError && err.kind === "not_found") return false;
      throw err;
    }
  }

  /** `name`, else `name (2)`, `name (3)`… before the extension: the first that is free in the folder. */
  private async freePath(access: Access, folder: string, name: string): Promise<string> {
    const dot = name.lastIndexOf(".");
    const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
    for (let i = 1; i <= MAX_NAME_TRIES; i++) {
      const candidate = childPath(folder, i === 1 ? name : `${stem} (${i})${ext}`);
      if (!(await this.exists(access, candidate))) return candidate;
    }
    throw new ProviderError("refused", `nextcloud: ${MAX_NAME_TRIES} files named like ${name} already exist in ${folder}`);
  }

  async upload(access: Access, upload: Upload): Promise<CloudEntry> {
    const path = await this.freePath(access, normalizePath(upload.folderId), upload.name);
    await this.dav(access, "PUT", path, `the upload of ${upload.name}`, { headers: { "content-type": upload.mimeType }, body: upload.body });
    return this.metadata(access, path);
  }

  async createFolder(access: Access, request: { parentId: string | null; name: string }): Promise<CloudEntry> {
    const path = await this.freePath(access, normalizePath(request.parentId), request.name);
    await this.dav(access, "MKCOL", path, `the creation of folder ${request.name}`);
    return this.metadata(access, path);
  }

  async hostSpreadsheet(access: Access, request: { title: string; xlsx: Uint8Array }): Promise<{ id: string; url: string }> {
    const file = await this.upload(access, {
      folderId: "/",
      name: request.title.endsWith(".xlsx") ? request.title : `${request.title}.xlsx`,
      mimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      body: new Blob([request.xlsx as Uint8Array<ArrayBuffer>]),
    });
    return { id: file.id, url: file.web_view_link! };
  }
}
