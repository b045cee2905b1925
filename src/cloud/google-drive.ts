/**
 * The `google_drive` provider: Google's OAuth 2.0 endpoints and the Drive v3 REST API (files.list
 * with `q` on parents, files.get, `alt=media` downloads, exports of native Google documents,
 * resumable uploads of originals, folders, about), a Picker capability whose proxy reaches only the
 * files and about endpoints, and hosted spreadsheets (a small CSV sent as one multipart upload with
 * conversion to a Google Sheet).
 * Every base URL is a setting, so an on-prem deployment points them at its own servers.
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

const NAME = "google_drive";
const FOLDER = "application/vnd.google-apps.folder";
const SPREADSHEET = "application/vnd.google-apps.spreadsheet";
const FIELDS = "id,name,mimeType,size,modifiedTime,webViewLink,thumbnailLink,parents";
/** Native Google documents have no bytes of their own; they are imported as an export. */
const EXPORTS: Record<string, { mime: string; suffix: string }> = {
  "application/vnd.google-apps.document": { mime: "application/pdf", suffix: ".pdf" },
  "application/vnd.google-apps.spreadsheet": { mime: "application/pdf", suffix: ".pdf" },
  "application/vnd.google-apps.presentation": { mime: "application/pdf", suffix: ".pdf" },
  "application/vnd.google-apps.drawing": { mime: "image/png", suffix: ".png" },
};
/** Breadcrumbs stop climbing here (Drive folders may be deep; the path is only a convenience). */
const MAX_BREADCRUMBS = 20;
/** An id as Drive makes them (letters, digits, - and _), or the `root` alias. */
const ID = "[A-Za-z0-9_-]{1,200}";
/** Bytes of a non-JSON answer the picker proxy passes on (an export of a native document). */
const PROXY_MAX_BYTES = 10 * 1024 * 1024;

interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  size?: string;
  modifiedTime?: string;
  webViewLink?: string;
  thumbnailLink?: string;
  parents?: string[];
}

function entry(file: DriveFile): CloudEntry {
  const isFolder = file.mimeType === FOLDER;
  return {
    id: file.id,
    name: file.name,
    mime_type: file.mimeType,
    size_bytes: file.size !== undefined ? Number(file.size) : null,
    modified_at: file.modifiedTime ?? null,
    is_folder: isFolder,
    web_view_link: file.webViewLink ?? null,
    thumbnail_url: file.thumbnailLink ?? null,
    is_importable: !isFolder && file.mimeType in EXPORTS,
  };
}

/** Drive's query language quotes with single quotes; backslash escapes them. */
const quote = (value: string) => `'${value.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;

/** A multipart/related body: JSON metadata, then the media (Drive's uploadType=multipart). */
function related(metadata: unknown, mime: string, body: Uint8Array): { body: Uint8Array; contentType: string } {
  const boundary = `mediabox-${crypto.randomUUID()}`;
  const head = `--${boundary}\r\ncontent-type: application/json; charset=UTF-8\r\n\r\n${JSON.stringify(metadata)}\r\n--${boundary}\r\ncontent-type: ${mime}\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  const encoder = new TextEncoder();
  return { body: Buffer.concat([encoder.encode(head), body, encoder.encode(tail)]), contentType: `multipart/related; boundary=${boundary}` };
}

export class GoogleDriveProvider implements CloudProvider {
  readonly name = NAME;
  readonly oauth: OAuthClient;
  readonly picker;

  constructor(private readonly config: Config) {
    this.oauth = new OAuthClient(NAME, { id: config.googleDriveClientId!, secret: config.googleDriveClientSecret! }, {
      authorizeUrl: config.googleDriveAuthUrl,
      tokenUrl: config.googleDriveTokenUrl,
      revokeUrl: config.googleDriveRevokeUrl,
      scope: config.googleDriveScopes,
      // A refresh token, and asked for again on reconnect (Google issues it only with consent).
      authorizeParams: { access_type: "offline", prompt: "consent", include_granted_scopes: "true" },
    });
    this.picker = {
      appId: config.googlePickerAppId,
      developerKey: config.googlePickerDeveloperKey,
      // The spec's list, and nothing else: no uploads, no permissions, no changes feed.
      allowedEndpoints: [new RegExp("^files$"), new RegExp(`^files/${ID}$`), new RegExp(`^files/${ID}/export$`), new RegExp("^about$")] as const,
      call: (access: Access, endpoint: string, params: Record<string, string>) => this.proxyCall(access, endpoint, params),
    };
  }

  private async api<T>(access: Access, path: string, what: string, init: RequestInit = {}, base = this.config.googleDriveApiUrl): Promise<T> {
    const response = await providerFetch(NAME, `${base}/${path}`, {
      ...init,
      headers: { authorization: `Bearer ${access.accessToken}`, accept: "application/json", ...(init.headers as Record<string, string> | undefined) },
    });
    if (!response.ok) throw await errorFromResponse(NAME, what, response);
    return (await response.json()) as T;
  }

  async identity(access: Access): Promise<Identity> {
    const about = await this.api<{ user?: { permissionId?: string; emailAddress?: string; displayName?: string } }>(access, "about?fields=user", "about");
    const user = about.user ?? {};
    const userId = user.permissionId ?? user.emailAddress;
    if (!userId) throw new ProviderError("refused", "google_drive's about answer names no user");
    return { userId, email: user.emailAddress ?? null, displayName: user.displayName ?? null };
  }

  async list(access: Access, request: { folderId: string | null; pageToken: string | null; pageSize: number }): Promise<FolderPage> {
    const folderId = request.folderId ?? "root";
    const query = new URLSearchParams({
      q: `${quote(folderId)} in parents and trashed = false`,
      pageSize: String(request.pageSize),
      fields: `nextPageToken,files(${FIELDS})`,
      orderBy: "folder,name",
    });
    if (request.pageToken) query.set("pageToken", request.pageToken);
    const [listing, breadcrumbs] = await Promise.all([
      this.api<{ files?: DriveFile[]; nextPageToken?: string }>(access, `files?${query}`, "files.list"),
      this.breadcrumbs(access, folderId),
    ]);
    return {
      files: (listing.files ?? []).map(entry),
      next_page_token: listing.nextPageToken ?? null,
      current_folder_id: breadcrumbs.at(-1)?.id ?? folderId,
      breadcrumbs,
    };
  }

  /** Root first, the folder last, climbing the first parent of each. */
  private async breadcrumbs(access: Access, folderId: string): Promise<Breadcrumb[]> {
    const trail: Breadcrumb[] = [];
    let id: string | undefined = folderId;
    while (id && trail.length < MAX_BREADCRUMBS) {
      const file: DriveFile = await this.api<DriveFile>(access, `files/${encodeURIComponent(id)}?fields=id,name,mimeType,parents`, "files.get");
      if (file.mimeType !== FOLDER) throw new ProviderError("not_found", `google_drive: ${id} is not a folder`);
      trail.unshift({ id: file.id, name: file.name });
      id = file.parents?.[0];
    }
    return trail;
  }

  async metadata(access: Access, id: string): Promise<CloudEntry> {
    return entry(await this.api<DriveFile>(access, `files/${encodeURIComponent(id)}?fields=${FIELDS}`, "files.get"));
  }

  async download(access: Access, file: { id: string; mimeType: string | null }, signal?: AbortSignal): Promise<Download> {
    const mime = file.mimeType ?? (await this.metadata(access, file.id)).mime_type;
    const exported = EXPORTS[mime];
    const path = exported ? `files/${encodeURIComponent(file.id)}/export?mimeType=${encodeURIComponent(exported.mime)}` : `files/${encodeURIComponent(file.id)}?alt=media`;
    const response = await providerFetch(NAME, `${this.config.googleDriveApiUrl}/${path}`, { headers: { authorization: `Bearer ${access.accessToken}` }, ...(signal ? { signal } : {}) });
    if (!response.ok || !response.body) throw await errorFromResponse(NAME, `the download of ${file.id}`, response);
    return { body: response.body, contentType: response.headers.get("content-type"), filenameSuffix: exported?.suffix ?? null };
  }

  /**
   * Drive's resumable upload: the metadata opens an upload session, then the bytes go in one PUT
   * with their length (a multipart upload is meant for files up to 5 MB and needs the whole body
   * in memory).
   */
  async upload(access: Access, upload: Upload): Promise<CloudEntry> {
    const metadata = { name: upload.name, ...(upload.folderId ? { parents: [upload.folderId] } : {}) };
    const session = await providerFetch(NAME, `${this.config.googleDriveUploadUrl}/files?uploadType=resumable&fields=${FIELDS}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${access.accessToken}`,
        "content-type": "application/json; charset=UTF-8",
        "x-upload-content-type": upload.mimeType,
        "x-upload-content-length": String(upload.body.size),
      },
      body: JSON.stringify(metadata),
    });
    if (!session.ok) throw await errorFromResponse(NAME, `the upload session for ${upload.name}`, session);
    const location = session.headers.get("location");
    if (!location) throw new ProviderError("refused", `google_drive opened no upload session for ${upload.name} (no Location header)`);
    const response = await providerFetch(NAME, new URL(location, this.config.googleDriveUploadUrl).href, {
      method: "PUT",
      headers: { authorization: `Bearer ${access.accessToken}`, "content-type": upload.mimeType },
      body: upload.body,
    });
    if (!response.ok) throw await errorFromResponse(NAME, `the upload of ${upload.name}`, response);
    return entry((await response.json()) as DriveFile);
  }

  private async multipartUpload(access: Access, metadata: Record<string, unknown>, mime: string, bytes: Uint8Array): Promise<CloudEntry> {
    const { body, contentType } = related(metadata, mime, bytes);
    const file = await this.api<DriveFile>(access, `files?uploadType=multipart&fields=${FIELDS}`, "files.create (upload)", {
      method: "POST",
      headers: { "content-type": contentType },
      body: body as Uint8Array<ArrayBuffer>,
    }, this.config.googleDriveUploadUrl);
    return entry(file);
  }

  async createFolder(access: Access, request: { parentId: string | null; name: string }): Promise<CloudEntry> {
    const file = await this.api<DriveFile>(access, `files?fields=${FIELDS}`, "files.create (folder)", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: request.name, mimeType: FOLDER, ...(request.parentId ? { parents: [request.parentId] } : {}) }),
    });
    return entry(file);
  }

  async hostSpreadsheet(access: Access, request: { title: string; csv: Uint8Array }): Promise<{ id: string; url: string }> {
    // Drive converts an uploaded CSV into a Google Sheet when the metadata asks for that type.
    const file = await this.multipartUpload(access, { name: request.title, mimeType: SPREADSHEET }, "text/csv", request.csv);
    return { id: file.id, url: file.web_view_link ?? `https://docs.google.com/spreadsheets/d/${file.id}` };
  }

  private async proxyCall(access: Access, endpoint: string, params: Record<string, string>): Promise<unknown> {
    const query = new URLSearchParams(params);
    const response = await providerFetch(NAME, `${this.config.googleDriveApiUrl}/${endpoint}${query.size ? `?${query}` : ""}`, {
      headers: { authorization: `Bearer ${access.accessToken}`, accept: "application/json" },
    });
    if (!response.ok) throw await errorFromResponse(NAME, endpoint, response);
    const type = response.headers.get("content-type") ?? "";
    if (type.includes("json")) return response.json();
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (bytes.length > PROXY_MAX_BYTES) throw new ProviderError("refused", `the answer of ${endpoint} is over ${PROXY_MAX_BYTES} bytes; import the file instead`);
    return { mime_type: type || null, size_bytes: bytes.length, content_base64: Buffer.from(bytes).toString("base64") };
  }
}
