/**
 * A browser for dashboard tests: a cookie jar (Set-Cookie in, Cookie out, Max-Age=0 deletes),
 * one client IP, and the dashboard's habit of echoing the mediabox_csrf cookie in X-CSRF-Token
 * on writes (turned off per request to test the refusal).
 */
import { freshIp, type ApiResponse } from "./server.ts";

export interface StoredCookie {
  value: string;
  attributes: string[];
}

export class CookieJar {
  readonly cookies = new Map<string, StoredCookie>();

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";").map((s) => s.trim());
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq);
      const value = decodeURIComponent(pair.slice(eq + 1));
      if (attributes.some((a) => /^max-age=0$/i.test(a)) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, { value, attributes });
    }
  }

  get(name: string): string | null {
    return this.cookies.get(name)?.value ?? null;
  }

  /** The Cookie header for a path (cookies with a Path attribute only below it). */
  header(path: string): string {
    return [...this.cookies.entries()]
      .filter(([, c]) => {
        const p = c.attributes.find((a) => /^path=/i.test(a))?.slice(5) ?? "/";
        return path.startsWith(p);
      })
      .map(([name, c]) => `${name}=${encodeURIComponent(c.value)}`)
      .join("; ");
  }
}

export class Browser {
  readonly jar = new CookieJar();
  readonly ip: string;

  constructor(
    readonly baseUrl: string,
    ip?: string,
  ) {
    this.ip = ip ?? freshIp();
  }

  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    options: { csrf?: boolean; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> {
    const url = path.startsWith("http") ? path : path.startsWith("/api/") ? this.baseUrl + path : `${this.baseUrl}/api/v2${path}`;
    const csrf = this.jar.get("mediabox_csrf");
    const response = await fetch(url, {
      method,
      redirect: "manual",
      headers: {
        "x-forwarded-for": this.ip,
        cookie: this.jar.header(new URL(url).pathname),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...(csrf && options.csrf !== false && method !== "GET" ? { "x-csrf-token": csrf } : {}),
        ...options.headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    this.jar.store(response);
    const text = await response.text();
    const parsed = (response.headers.get("content-type") ?? "").includes("json") && text ? JSON.parse(text) : text;
    return { status: response.status, headers: response.headers, body: parsed as T };
  }

  get<T = any>(path: string) {
    return this.request<T>("GET", path);
  }
  post<T = any>(path: string, body: unknown = {}, options?: { csrf?: boolean; headers?: Record<string, string> }) {
    return this.request<T>("POST", path, body, options);
  }
  delete<T = any>(path: string) {
    return this.request<T>("DELETE", path);
  }
}
