/**
 * The dashboard's way to the API: every call goes to /api/v2 with the signed-in credential, and
 * every failure becomes an ApiFailure carrying the server's `detail` and `code` to show as is.
 */
const KEY_STORAGE = "mediabox.apiKey";

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(detail);
  }
}

/** What the page says of a failure: the server's `detail` as it is, anything else as it stringifies. */
export function errorText(err: unknown): string {
  return err instanceof ApiFailure ? err.message : String(err);
}

export const credentials = {
  key(): string | null {
    return sessionStorage.getItem(KEY_STORAGE);
  },
  signIn(key: string): void {
    sessionStorage.setItem(KEY_STORAGE, key);
  },
  signOut(): void {
    sessionStorage.removeItem(KEY_STORAGE);
  },
};

/** The session's CSRF token, from the script-readable cookie the server set at sign-in. */
function csrfToken(): string | null {
  const match = /(?:^|;\s*)mediabox_csrf=([^;]+)/.exec(document.cookie);
  return match ? decodeURIComponent(match[1]!) : null;
}

/** A key when signed in with one; else the session cookie goes by itself, and writes echo its CSRF token. */
function headers(extra: Record<string, string> = {}, write = false): Record<string, string> {
  const key = credentials.key();
  if (key) return { ...extra, authorization: `Bearer ${key}` };
  const csrf = write ? csrfToken() : null;
  return csrf ? { ...extra, "x-csrf-token": csrf } : extra;
}

async function failure(res: Response): Promise<ApiFailure> {
  const body = (await res.json().catch(() => null)) as { detail?: string; code?: string } | null;
  return new ApiFailure(res.status, body?.code ?? "HTTP_ERROR", body?.detail ?? `${res.status} ${res.statusText}`);
}

/** `signal` abandons the request (a view that no longer needs its answer). */
export async function api<T = any>(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  const res = await fetch(`/api/v2${path}`, {
    method: init.method ?? "GET",
    ...(init.signal ? { signal: init.signal } : {}),
    credentials: "same-origin",
    headers: headers(init.body === undefined ? {} : { "content-type": "application/json" }, (init.method ?? "GET") !== "GET"),
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  if (!res.ok) throw await failure(res);
  return (res.status === 204 ? null : await res.json()) as T;
}

/** A multipart upload with progress (fetch cannot report upload progress; XHR can). */
export function uploadFile(file: File, onProgress: (fraction: number) => void): Promise<any> {
  const form = new FormData();
  form.append("file", file, file.name);
  return postForm("/files/upload", form, onProgress);
}

/** Any multipart POST under /api/v2 with upload progress. */
export function postForm(path: string, form: FormData, onProgress: (fraction: number) => void): Promise<any> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/api/v2${path}`);
    for (const [name, value] of Object.entries(headers({}, true))) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onerror = () => reject(new ApiFailure(0, "NETWORK", "the upload was interrupted (network error)"));
    xhr.onload = () => {
      const body = (() => {
        try {
          return JSON.parse(xhr.responseText);
        } catch {
          return null;
        }
      })();
      if (xhr.status >= 200 && xhr.status < 300) resolve(body);
      else reject(new ApiFailure(xhr.status, body?.code ?? "HTTP_ERROR", body?.detail ?? `${xhr.status} ${xhr.statusText}`));
    };
    xhr.send(form);
  });
}

export interface SessionInfo {
  user: { id: string; email: string; name: string | null };
  organization: { id: string; name: string; tier: string; api_keys_allowed: boolean };
  role: string;
  permissions: string[];
  organizations: { id: string; name: string; role: string }[];
}

/** The signed-in session, or null (no session, or a server without accounts). */
export async function currentSession(): Promise<SessionInfo | null> {
  if (credentials.key()) return null;
  const res = await fetch("/api/v2/auth/session", { credentials: "same-origin" });
  return res.ok ? ((await res.json()) as SessionInfo) : null;
}

/**
 * A WebSocket subscribed to one channel (`batch.<session_id>`); each message goes to `onMessage`.
 * A key rides in the query (browsers cannot set headers on a WebSocket); a session's cookie goes by itself.
 */
export function subscribe(channel: string, onMessage: (message: any) => void): WebSocket {
  const key = credentials.key();
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/v2/ws${key ? `?access_token=${encodeURIComponent(key)}` : ""}`;
  const socket = new WebSocket(url);
  socket.onopen = () => socket.send(JSON.stringify({ action: "subscribe", channel }));
  socket.onmessage = (event) => {
    try {
      onMessage(JSON.parse(String(event.data)));
    } catch {
      // A message that is not JSON is not ours.
    }
  };
  return socket;
}
