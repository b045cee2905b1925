/**
 * Test harness: a real Mediabox server on an ephemeral port with its own data directory,
 * plus helpers to create organizations and keys and to call the API over HTTP.
 */
import { rmSync } from "node:fs";
import type { Permission } from "../../src/auth/permissions.ts";
import type { KindFactory } from "../../src/app.ts";
import type { Clock } from "../../src/clock.ts";
import { loadConfig, type Config } from "../../src/config.ts";
import type { QueueDefinition } from "../../src/jobs/runner.ts";
import { insertApiKeyRow, insertTenantRows } from "./rows.ts";
import { engineEnvironment, releaseEngine, workerDataDir } from "./suite-database.ts";
import { tempDir } from "./temp-dir.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import type { Tier } from "../../src/tenancy/tiers.ts";

export interface TestServer extends RunningServer {
  dataDir: string;
  config: Config;
  /** Creates an organization with one key; returns an API client bound to that key. */
  tenant(options?: { tier?: Tier; permissions?: Permission[] }): Promise<Tenant>;
  /** A client without a key. */
  anonymous(ip?: string): ApiClient;
  close(): Promise<void>;
}

export interface Tenant {
  orgId: string;
  orgName: string;
  key: string;
  api: ApiClient;
  /** Another key of the same organization. */
  keyWith(permissions: Permission[]): Promise<ApiClient>;
}

let counter = 0;

/**
 * Test servers started and not yet closed, with the test file that started each: a server left
 * running holds its port, timers and (on PostgreSQL) a pool of connections for the rest of the
 * run, so preload.ts names the files that left any.
 */
const openServers = new Map<TestServer, string>();

export function serversLeftOpen(): string[] {
  return [...openServers.values()];
}

function callerFile(): string {
  const line = (new Error().stack ?? "").split("\n").find((l) => /\.test\.ts/.test(l) || /test\/support\/(?!server\.ts)/.test(l));
  return /([\w./-]+\.ts)/.exec(line ?? "")?.[1]?.replace(/^.*\/test\//, "test/") ?? "unknown";
}

/** A distinct client IP per client, so per-IP rate limits of one test never leak into another. */
export function freshIp(): string {
  counter += 1;
  return `10.${(counter >> 16) & 255}.${(counter >> 8) & 255}.${counter & 255}`;
}

export { tempDir };

export async function startTestServer(
  /** `dataDir`: reuse a data directory (a "restart"); the caller removes it. By default each server gets its own, removed on close. */
  options: { env?: Record<string, string>; clock?: Clock; queues?: QueueDefinition<any>[]; kinds?: KindFactory[]; dataDir?: string } = {},
): Promise<TestServer> {
  // Read before the first await: the stack past it no longer names the caller.
  const origin = callerFile();
  const dataDir = options.dataDir ?? tempDir();
  // MEDIABOX_TEST_DATABASE=postgres: this server's rows in its own PostgreSQL database;
  // postgres-shared: and a worker process beside it (suite-database.ts).
  const engineEnv = await engineEnvironment(dataDir);
  const workerDir = workerDataDir(dataDir);
  const environment = (own: Record<string, string>) => ({
    MEDIABOX_PORT: "0",
    MEDIABOX_HOST: "127.0.0.1",
    MEDIABOX_DATA_DIR: dataDir,
    MEDIABOX_LOG_LEVEL: "error",
    MEDIABOX_TRUSTED_PROXIES: "loopback",
    // Preparing the text model's ~62,000 common words takes minutes of a core: tests that need it ask.
    MEDIABOX_TEXT_VOCABULARY_WORDS: "0",
    // The layout model the model sources step may have fetched into models/ would change how the
    // tests' PDFs are read: tests of it (layout-model.test.ts) ask for it with a fixture model.
    MEDIABOX_LAYOUT_MODEL: "none",
    // The built-in text model, whatever `npm run models` installed in models/: tests that want a
    // folder model build a fixture one and name it.
    MEDIABOX_TEXT_EMBEDDING_MODEL: "use-lite-sif",
    // Tesseract reads unless a test asks for PP-OCR: a worktree's fetched models/ppocr would otherwise change what tests read.
    MEDIABOX_OCR_ENGINE: "tesseract",
    ...engineEnv,
    ...(workerDir ? { MEDIABOX_ROLE: "api" } : {}),
    ...options.env,
    ...own,
  });
  const config = loadConfig({}, environment({}));
  const serverOptions = { ...(options.clock ? { clock: options.clock } : {}), queues: options.queues ?? [], kinds: options.kinds ?? [] };
  const server = await startServer(config, serverOptions);
  // Started after the api, which has migrated the database; the test's settings are the worker's too, as on a real site.
  let worker: RunningServer | null = null;
  if (workerDir) {
    try {
      worker = await startServer(loadConfig({}, environment({ MEDIABOX_ROLE: "worker", MEDIABOX_DATA_DIR: workerDir, MEDIABOX_PORT: "0" })), serverOptions);
    } catch (err) {
      await server.stop();
      throw err;
    }
  }
  const { sql, clock } = server.ctx;
  const stop = async () => {
    openServers.delete(testServer);
    await Promise.all([server.stop(), worker?.stop()]);
  };
  const testServer: TestServer = {
    ...server,
    stop,
    dataDir,
    config,
    async tenant(opts = {}) {
      counter += 1;
      const name = `org-${counter}-${crypto.randomUUID().slice(0, 6)}`;
      const { orgId, key } = await insertTenantRows(sql, clock, { name, tier: opts.tier ?? "PROFESSIONAL", ...(opts.permissions ? { permissions: opts.permissions } : {}) });
      return {
        orgId,
        orgName: name,
        key,
        api: new ApiClient(server.url, key),
        keyWith: async (permissions) => new ApiClient(server.url, await insertApiKeyRow(sql, clock, orgId, permissions)),
      };
    },
    anonymous(ip) {
      return new ApiClient(server.url, null, ip);
    },
    async close() {
      await stop();
      if (!options.dataDir) {
        rmSync(dataDir, { recursive: true, force: true });
        await releaseEngine(dataDir);
      }
    },
  };
  openServers.set(testServer, origin);
  return testServer;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** Minimal HTTP client for the API: JSON in, JSON out, one client IP per client. */
export class ApiClient {
  readonly ip: string;

  constructor(
    readonly baseUrl: string,
    readonly key: string | null,
    ip?: string,
  ) {
    this.ip = ip ?? freshIp();
  }

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const url = path.startsWith("/api/") || path.startsWith("/healthz") || path.startsWith("/readyz") || path.startsWith("/docs")
      ? this.baseUrl + path
      : `${this.baseUrl}/api/v2${path}`;
    const init: RequestInit = {
      method,
      headers: {
        "x-forwarded-for": this.ip,
        ...(this.key ? { authorization: `Bearer ${this.key}` } : {}),
        ...(body !== undefined && typeof body !== "string" ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      redirect: "manual",
    };
    if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
    const response = await fetch(url, init);
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get("content-type") ?? "").includes("json") && text) parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T };
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>("GET", path, undefined, headers);
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>("POST", path, body ?? {}, headers);
  }
  patch<T = any>(path: string, body: unknown) {
    return this.request<T>("PATCH", path, body);
  }
  put<T = any>(path: string, body: unknown) {
    return this.request<T>("PUT", path, body);
  }
  delete<T = any>(path: string) {
    return this.request<T>("DELETE", path);
  }
  /** POSTs a multipart form (fetch sets the boundary). */
  async form<T = any>(path: string, form: FormData): Promise<ApiResponse<T>> {
    const response = await fetch(`${this.baseUrl}/api/v2${path}`, {
      method: "POST",
      body: form,
      headers: { "x-forwarded-for": this.ip, ...(this.key ? { authorization: `Bearer ${this.key}` } : {}) },
    });
    const text = await response.text();
    const json = (response.headers.get("content-type") ?? "").includes("json") && text ? JSON.parse(text) : text;
    return { status: response.status, headers: response.headers, body: json as T };
  }
}
