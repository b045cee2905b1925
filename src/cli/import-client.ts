/**
 * `mediabox import`: the HTTP side. Every call goes through `send`, which waits out 429 (rate
 * limit or upload backpressure) for as long as Retry-After says and retries network errors and
 * 502/503/504 with backoff; the upload paths are the API's own: the streaming upload for files
 * within its limit, the upload-intent flow (presigned PUTs, part confirmation, completion) above it.
 */
import { basename } from "node:path";

/** Streaming uploads take files up to 100 MiB, documents up to 50 MiB (src/tenancy/tiers.ts). */
export const STREAMING_LIMIT_BYTES = 100 * 1024 ** 2;
export const STREAMING_DOCUMENT_LIMIT_BYTES = 50 * 1024 ** 2;
const DOCUMENT_EXTENSIONS = new Set(["pdf", "docx", "doc", "txt", "text", "md", "markdown"]);

/**
 * The upload path for a file: the streaming upload within its limits, an upload intent above
 * them. `mediaType` is what the file's first bytes say (null when they say nothing supported);
 * without it a document extension stands in. A streaming 413 still falls back to an intent.
 */
export function chooseUploadPath(size: number, mediaType: string | null, filename: string): "streaming" | "intent" {
  if (size > STREAMING_LIMIT_BYTES) return "intent";
  if (size <= STREAMING_DOCUMENT_LIMIT_BYTES) return "streaming";
  const extension = filename.includes(".") ? filename.slice(filename.lastIndexOf(".") + 1).toLowerCase() : "";
  const document = mediaType === null ? DOCUMENT_EXTENSIONS.has(extension) : mediaType === "document";
  return document ? "intent" : "streaming";
}

/** A condition that ends the whole import (the key is refused, the server cannot be reached). */
export class ImportAbort extends Error {}

/** The server refused one file (or one step of its upload); the import goes on with the others. */
export class FileRefused extends Error {}

export interface ClientOptions {
  server: string;
  key: string;
  fetch: typeof fetch;
  sleep: (ms: number) => Promise<void>;
  /** Told when the client waits (rate limit, backpressure, retry after a network error). */
  onWait?: (seconds: number, why: string) => void;
  /** Told about bytes as they leave for the server. */
  onBytes?: (bytes: number) => void;
}

const NETWORK_ATTEMPTS = 5;
const MAX_RATE_LIMIT_WAITS = 100;
const RETRY_STATUSES = new Set([502, 503, 504]);

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: any;
}

/** `detail (status CODE)` from an error answer, or what little a non-JSON answer says. */
export function describeRefusal(answer: ApiAnswer): string {
  const body = answer.body;
  if (body && typeof body === "object" && typeof body.detail === "string") return `${body.detail} (${answer.status}${body.code ? ` ${body.code}` : ""})`;
  const text = typeof body === "string" ? body.trim().slice(0, 200) : "";
  return `HTTP ${answer.status}${text ? `: ${text}` : ""}`;
}

function retryAfterSeconds(headers: Headers): number {
  const raw = headers.get("retry-after");
  if (raw === null) return 1;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.min(Math.max(seconds, 0), 3600);
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.min(Math.max((at - Date.now()) / 1000, 0), 3600) : 1;
}

async function readAnswer(response: Response): Promise<ApiAnswer> {
  const text = await response.text();
  let body: unknown = text;
  if ((response.headers.get("content-type") ?? "").includes("json") && text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return { status: response.status, headers: response.headers, body };
}

export class ImportClient {
  constructor(private readonly options: ClientOptions) {}

  private url(path: string): string {
    return path.startsWith("http://") || path.startsWith("https://") ? path : `${this.options.server}/api/v2${path}`;
  }

  /**
   * Sends a request built afresh for each attempt. 429 waits Retry-After and tries again; network
   * errors and 502/503/504 back off (0.5, 1, 2, 4 s) and try again, then abort the import.
   * 401 and 403 abort the import: no other file would fare better.
   */
  async send(
    what: string,
    build: () => { url: string; init: RequestInit },
    options: { api?: boolean; localFailure?: () => unknown } = {},
  ): Promise<ApiAnswer> {
    const api = options.api ?? true;
    let networkFailures = 0;
    let rateLimitWaits = 0;
    for (;;) {
      const { url, init } = build();
      let answer: ApiAnswer;
      try {
        answer = await readAnswer(await this.options.fetch(url, init));
      } catch (err) {
        const local = options.localFailure?.();
        if (local) throw new FileRefused(`cannot read the file: ${local instanceof Error ? local.message : String(local)}`);
        networkFailures += 1;
        const why = err instanceof Error ? err.message : String(err);
        if (networkFailures >= NETWORK_ATTEMPTS) throw new ImportAbort(`cannot reach ${new URL(url).origin} (${what}): ${why}`);
        await this.wait(0.5 * 2 ** (networkFailures - 1), `network error (${why}); retrying`);
        continue;
      }
      if (answer.status === 429 && rateLimitWaits < MAX_RATE_LIMIT_WAITS) {
        rateLimitWaits += 1;
        const code = answer.body?.code === "UPLOAD_BACKPRESSURE" ? "upload backpressure" : "rate limited";
        await this.wait(retryAfterSeconds(answer.headers), code);
        continue;
      }
      if (RETRY_STATUSES.has(answer.status) && networkFailures < NETWORK_ATTEMPTS - 1) {
        networkFailures += 1;
        await this.wait(0.5 * 2 ** (networkFailures - 1), `server answered ${answer.status}; retrying`);
        continue;
      }
      if (api && answer.status === 401) throw new ImportAbort(`the server refused the API key: ${describeRefusal(answer)}`);
      if (api && answer.status === 403) throw new ImportAbort(`the API key may not do this (${what}): ${describeRefusal(answer)}`);
      return answer;
    }
  }

  private async wait(seconds: number, why: string): Promise<void> {
    this.options.onWait?.(seconds, why);
    await this.options.sleep(seconds * 1000);
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.options.key}`, "user-agent": "mediabox-import", ...extra };
  }

  async json(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
    return this.send(`${method} ${path.split("?")[0]}`, () => ({
      url: this.url(path),
      init: {
        method,
        headers: this.headers(body === undefined ? {} : { "content-type": "application/json" }),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      },
    }));
  }

  /** GET/POST that must succeed; anything else ends the import with the server's detail. */
  async required(method: string, path: string, body?: unknown): Promise<any> {
    const answer = await this.json(method, path, body);
    if (answer.status < 200 || answer.status > 299) throw new ImportAbort(`${method} ${path.split("?")[0]} failed: ${describeRefusal(answer)}`);
    return answer.body;
  }

  /**
   * `POST /files/upload`: the file streamed from disk inside a multipart body of known length
   * (nothing is held in memory), field `file` plus the given text fields.
   */
  async streamingUpload(path: string, size: number, fields: Record<string, string>): Promise<ApiAnswer> {
    const encoder = new TextEncoder();
    const onBytes = this.options.onBytes;
    const safeName = basename(path).replace(/[\r\n"]/g, (c) => encodeURIComponent(c));
    let readFailure: unknown = null;
    return this.send("POST /files/upload", () => {
      const boundary = `----mediabox-import-${crypto.randomUUID()}`;
      let head = "";
      for (const [name, value] of Object.entries(fields)) {
        head += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
      }
      head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${safeName}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
      const headBytes = encoder.encode(head);
      const tailBytes = encoder.encode(`\r\n--${boundary}--\r\n`);
      const parts = (async function* () {
        yield headBytes;
        try {
          for await (const chunk of Bun.file(path).stream()) {
            onBytes?.(chunk.byteLength);
            yield chunk;
          }
        } catch (err) {
          readFailure = err;
          throw err;
        }
        yield tailBytes;
      })();
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await parts.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
        async cancel() {
          await parts.return(undefined);
        },
      });
      return {
        url: this.url("/files/upload"),
        init: {
          method: "POST",
          body,
          headers: this.headers({
            "content-type": `multipart/form-data; boundary=${boundary}`,
            "content-length": String(headBytes.byteLength + size + tailBytes.byteLength),
          }),
        },
      };
    }, { localFailure: () => readFailure });
  }

  /**
   * The upload-intent flow: create (idempotently, so an interrupted upload resumes with the parts
   * it still needs), PUT the bytes to the presigned URL(s), confirm each part, complete.
   * Returns the completion's body: `{file_id, deduplicated, ...}`.
   */
  async intentUpload(
    file: { path: string; filename: string; size: number; sha256: string; contentType: string },
    options: { tags: string[]; projectId: string | null; folderId: string | null; skipDuplicates: boolean },
  ): Promise<{ file_id: string; deduplicated: boolean }> {
    const contentType = file.contentType;
    const nameHash = new Bun.CryptoHasher("sha256").update(file.filename).digest("hex").slice(0, 16);
    const createBody = {
      filename: file.filename,
      content_type: contentType,
      size_bytes: file.size,
      claimed_file_hash: file.sha256,
      ...(options.tags.length ? { tags: options.tags } : {}),
      ...(options.projectId ? { project_id: options.projectId } : {}),
      ...(options.folderId ? { folder_id: options.folderId } : {}),
      ...(options.skipDuplicates ? { skip_duplicates: true } : {}),
    };
    let created = await this.json("POST", "/files/uploads", { ...createBody, idempotency_key: `mediabox-import-${file.sha256}-${nameHash}` });
    if (created.status === 409 && created.body?.code === "IDEMPOTENCY_KEY_REUSED") created = await this.json("POST", "/files/uploads", createBody);
    if (created.status === 200) {
      // A replay: an earlier run's intent. Only one still open can be resumed.
      const state = await this.json("GET", `/files/uploads/${created.body.upload_id}`);
      if (state.status !== 200 || !["PENDING", "UPLOADED"].includes(state.body.status) || Date.parse(state.body.expires_at) < Date.now() + 60_000) {
        created = await this.json("POST", "/files/uploads", createBody);
      }
    }
    if (created.status !== 200 && created.status !== 201) throw new FileRefused(describeRefusal(created));
    const intent = created.body;

    if (intent.upload_mode === "single_shot") {
      await this.put(intent.presigned_url, Bun.file(file.path), file.size, intent.headers ?? {}, "the file");
    } else {
      for (const part of intent.part_urls as { part_number: number; url: string }[]) {
        const start = (part.part_number - 1) * intent.part_size_bytes;
        const end = Math.min(start + intent.part_size_bytes, file.size);
        const etag = await this.put(part.url, Bun.file(file.path).slice(start, end), end - start, {}, `part ${part.part_number}`);
        const confirmed = await this.json("POST", `/files/uploads/${intent.upload_id}/parts/confirm`, {
          part_number: part.part_number,
          etag,
          size_bytes: end - start,
        });
        if (confirmed.status !== 200) throw new FileRefused(`part ${part.part_number} was not confirmed: ${describeRefusal(confirmed)}`);
      }
    }
    const done = await this.json("POST", `/files/uploads/${intent.upload_id}/complete`, {});
    if (done.status !== 200) throw new FileRefused(describeRefusal(done));
    return done.body;
  }

  /** PUTs bytes to a presigned URL; returns the store's ETag. */
  private async put(url: string, body: Blob, size: number, headers: Record<string, string>, what: string): Promise<string> {
    const answer = await this.send(`PUT ${what}`, () => ({ url, init: { method: "PUT", body, headers: { ...headers, "content-length": String(size) } } }), { api: false });
    if (answer.status !== 200) throw new FileRefused(`the object store refused ${what}: ${describeRefusal(answer)}`);
    this.options.onBytes?.(size);
    return answer.headers.get("etag") ?? "";
  }
}
