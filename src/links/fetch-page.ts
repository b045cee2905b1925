/**
 * Fetching one resource of a link (the page, its icon, its main images) from the open web,
 * safely: every hop's hostname is resolved here and each of its addresses checked against the
 * address policy (url-policy.ts) before anything connects, and the connection goes to the
 * address that was checked (no second lookup for DNS rebinding to race). Redirects are followed
 * by hand, each one validated like the first URL; one deadline covers lookups, hops and body;
 * bodies are read as streams under a byte cap; HTML is decoded by its declared or sniffed
 * charset. Every refusal is a LinkFetchError whose `reason` a person can read.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { getEncoding } from "encoding-sniffer";
import { formatBytes } from "../byte-sizes.ts";
import { unlessAborted } from "../abort.ts";
import { checkEgressAddress, checkEgressPort, type EgressPolicy } from "../net/egress-policy.ts";
import { validateLinkUrl } from "../net/url-policy.ts";

/** What the caller wants: a page or a plain-text file such as robots.txt (decoded text), or an image/icon (raw bytes). */
export type AcceptKind = "html" | "text" | "image" | "icon";

export interface FetchOptions {
  accept: AcceptKind;
  /**
   * Body cap in bytes (after Content-Encoding is undone). A page over it is kept up to the cap
   * and flagged `truncated` (its head, where the metadata is, came first); an image over it is
   * refused, since a cut image is a broken one.
   */
  maxBytes: number;
  /** One deadline for the whole fetch: lookups, every redirect hop and the body. */
  timeoutMs: number;
  /** Redirects followed; one more is refused ("too many redirects (6)" for 5). */
  maxRedirects: number;
  /**
   * The addresses and ports this fetch may reach, on every hop (net/egress-policy.ts: the
   * crawler's, or webhook receivers'); what it refuses fails as "blocked".
   */
  egress: EgressPolicy;
  userAgent: string;
  /**
   * All addresses of a hostname; `dns.lookup` (the system resolver, /etc/hosts included) by
   * default. Tests pass a map of made-up names to loopback.
   */
  lookup?: (hostname: string) => Promise<string[]>;
  /** Extra trusted CA certificates (PEM), for sites behind a private CA and for tests. */
  ca?: string;
  /** Cancels the fetch from outside (a cancelled job). */
  signal?: AbortSignal;
}

interface FetchedBase {
  /** The URL that answered with the body, after redirects. */
  finalUrl: string;
  status: number;
  /** The media type, lowercased, without parameters. For images, the one the bytes show. */
  contentType: string;
  /** Every URL that answered with a redirect, in order (the final URL is not among them). */
  redirects: string[];
}

export interface FetchedPage extends FetchedBase {
  kind: "html";
  text: string;
  /** The encoding the text was decoded from ("UTF-8", "Shift_JIS", "windows-1252"). */
  charset: string;
  /** Bytes read (at most maxBytes). */
  byteLength: number;
  /** The page was longer than maxBytes and `text` holds its beginning only. */
  truncated: boolean;
}

export interface FetchedImage extends FetchedBase {
  kind: "image";
  bytes: Uint8Array;
  /** Always false: an image over the cap is refused. Here so both results read alike. */
  truncated: false;
}

export type FetchFailure =
  | "invalid-url" // the URL, or a redirect's Location, breaks validateLinkUrl
  | "blocked" // an address the policy refuses
  | "dns" // the name does not resolve
  | "connect" // refused, reset, TLS failure
  | "timeout"
  | "cancelled"
  | "http-status" // a non-2xx answer (status set)
  | "redirects" // too many, or one without a usable Location
  | "wrong-type" // not HTML, not an image
  | "too-large"; // an image over maxBytes

/**
 * Why a link resource was not fetched. `reason` is the message: short, for people ("blocked
 * address 10.0.0.1 (private)", "timed out after 10 s", "HTTP 404"). `kind` is for code
 * deciding what to do (a timeout may be retried, a blocked address never).
 */
export class LinkFetchError extends Error {
  constructor(
    readonly kind: FetchFailure,
    readonly reason: string,
    /** The URL being fetched when it failed (a redirect target, perhaps). */
    readonly url: string,
    /** The HTTP status, for kind "http-status". */
    readonly status?: number,
  ) {
    super(reason);
    this.name = "LinkFetchError";
  }
}

export function fetchResource(url: string | URL, options: FetchOptions & { accept: "html" | "text" }): Promise<FetchedPage>;
export function fetchResource(url: string | URL, options: FetchOptions & { accept: "image" | "icon" }): Promise<FetchedImage>;
export function fetchResource(url: string | URL, options: FetchOptions): Promise<FetchedPage | FetchedImage>;
/** GETs `url` under the options' policy; resolves with the body or rejects with a LinkFetchError. */
export async function fetchResource(url: string | URL, options: FetchOptions): Promise<FetchedPage | FetchedImage> {
  const deadline = new Deadline(options.timeoutMs, options.signal);
  let current = String(url);
  try {
    const { response, finalUrl, redirects } = await followRedirects(current, options, deadline, (at) => (current = at));
    current = finalUrl;
    const base = { finalUrl, status: response.status, redirects };
    return options.accept === "html" || options.accept === "text" ? { ...base, ...(await readPage(response, options, finalUrl)) } : { ...base, ...(await readImage(response, options, finalUrl)) };
  } catch (err) {
    throw deadline.explain(err, current);
  } finally {
    deadline.clear();
  }
}

/** The first non-redirect answer, after following at most maxRedirects hops, each validated. */
async function followRedirects(
  start: string,
  options: FetchOptions,
  deadline: Deadline,
  onHop: (url: string) => void,
): Promise<{ response: Response; finalUrl: string; redirects: string[] }> {
  const first = validateLinkUrl(start);
  if (!first.ok) throw new LinkFetchError("invalid-url", first.reason, start.slice(0, 2048));
  let url = first.url;
  const redirects: string[] = [];
  for (;;) {
    onHop(url.href);
    checkPort(url, options);
    const response = await requestPinned(url, options, deadline);
    if (!REDIRECT_STATUSES.has(response.status)) {
      if (response.status < 200 || response.status > 299) {
        await discard(response);
        throw new LinkFetchError("http-status", `HTTP ${response.status}`, url.href, response.status);
      }
      return { response, finalUrl: url.href, redirects };
    }
    await discard(response);
    redirects.push(url.href);
    if (redirects.length > options.maxRedirects) throw new LinkFetchError("redirects", `too many redirects (${redirects.length})`, url.href);
    url = nextHop(url, response);
  }
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Refuses a URL whose port (explicit, or its scheme's default) the policy does not allow. */
function checkPort(url: URL, options: FetchOptions): void {
  const verdict = checkEgressPort(options.egress, url);
  if (!verdict.ok) throw new LinkFetchError("blocked", verdict.reason, url.href);
}

/** Where a redirect leads: its Location resolved against the URL that sent it, then validated. */
function nextHop(from: URL, response: Response): URL {
  const location = response.headers.get("location");
  if (!location) throw new LinkFetchError("redirects", `redirect without a Location (HTTP ${response.status})`, from.href);
  let target: URL;
  try {
    target = new URL(location, from);
  } catch {
    throw new LinkFetchError("redirects", `redirect to an unparseable Location (${location.slice(0, 200)})`, from.href);
  }
  const verdict = validateLinkUrl(target);
  if (!verdict.ok) throw new LinkFetchError("invalid-url", `redirect refused: ${verdict.reason}`, target.href.slice(0, 2048));
  return verdict.url;
}

/**
 * One GET of `url`, connected to an address of its host that the policy allows. The name is
 * resolved here and every address checked (one bad address refuses the host: which one a
 * client would get is not ours to choose). The request then goes to the checked address
 * itself, with the Host header and the TLS server name (SNI and certificate check) of the real
 * host, so a resolver that answers differently a second time cannot slip in another address.
 * Addresses are tried in resolver order while connections fail. No proxy (a proxy would resolve
 * the name again, past the policy), no connection reuse (a pooled connection to the same
 * address may have been opened for another host's TLS name).
 */
async function requestPinned(url: URL, options: FetchOptions, deadline: Deadline, send?: OutgoingRequest): Promise<Response> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const isIpLiteral = isIP(host) !== 0;
  const addresses = isIpLiteral ? [host] : await deadline.race(resolve(host, url, options));
  for (const address of addresses) {
    const verdict = checkEgressAddress(options.egress, address);
    if (!verdict.ok) throw new LinkFetchError("blocked", verdict.reason, url.href);
  }
  let lastError: unknown;
  for (const address of addresses) {
    const pinned = new URL(url);
    pinned.hostname = address.includes(":") ? `[${address}]` : address;
    try {
      return await fetch(pinned, {
        method: send?.method ?? "GET",
        redirect: "manual",
        signal: deadline.signal,
        keepalive: false,
        proxy: false,
        headers: { ...send?.headers, Host: url.host, "User-Agent": options.userAgent, Accept: send ? "*/*" : ACCEPT_HEADERS[options.accept] },
        ...(send ? { body: send.body } : {}),
        tls: { ...(isIpLiteral ? {} : { serverName: host }), ...(options.ca ? { ca: options.ca } : {}) },
      });
    } catch (err) {
      if (deadline.signal.aborted) throw err;
      lastError = err;
    }
  }
  const cause = connectionCause(lastError);
  const what = /TLS|CERT|SSL/i.test(cause) ? `TLS handshake with ${url.host} failed` : `could not connect to ${url.host}`;
  throw new LinkFetchError("connect", `${what} (${cause})`, url.href);
}

/** A request that sends something (a webhook's POST): its method, headers and body. */
export interface OutgoingRequest {
  method: "POST" | "PUT";
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends one request to `url` under the same policy as a page fetch (URL rules, ports, every
 * address checked, the connection pinned to the checked address, one deadline) and returns the
 * answer's status without following redirects: a redirect is the answer (a webhook receiver that
 * redirects is misconfigured, and following it would resend the body somewhere unchecked). The
 * body of the answer is not read.
 */
export async function sendPinned(url: string, request: OutgoingRequest, options: Omit<FetchOptions, "accept" | "maxBytes" | "maxRedirects">): Promise<{ status: number }> {
  const policy: FetchOptions = { ...options, accept: "text", maxBytes: 0, maxRedirects: 0 };
  const deadline = new Deadline(options.timeoutMs, options.signal);
  try {
    const verdict = validateLinkUrl(url);
    if (!verdict.ok) throw new LinkFetchError("invalid-url", verdict.reason, url.slice(0, 2048));
    checkPort(verdict.url, policy);
    const response = await requestPinned(verdict.url, policy, deadline, request);
    await discard(response);
    return { status: response.status };
  } catch (err) {
    throw deadline.explain(err, url);
  } finally {
    deadline.clear();
  }
}

const ACCEPT_HEADERS: Record<AcceptKind, string> = {
  text: "text/plain,*/*;q=0.1",
  html: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1",
  image: "image/avif,image/webp,image/png,image/jpeg,image/*;q=0.8",
  icon: "image/png,image/x-icon,image/*;q=0.8",
};

async function resolve(host: string, url: URL, options: FetchOptions): Promise<string[]> {
  let addresses: string[];
  try {
    addresses = options.lookup ? await options.lookup(host) : (await dnsLookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw new LinkFetchError("dns", code === "ENOTFOUND" ? `host not found (${host})` : `could not resolve ${host} (${code ?? errorText(err)})`, url.href);
  }
  if (addresses.length === 0) throw new LinkFetchError("dns", `host not found (${host})`, url.href);
  return addresses;
}

/** "ECONNREFUSED", "ERR_TLS_CERT_ALTNAME_INVALID", or the message when there is no code. */
function connectionCause(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && code !== "" ? code : errorText(err);
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 200);

/** Lets the connection go without reading what the server still sends. */
async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => {});
}

/** The page's text, or a refusal when the answer is not HTML. */
async function readPage(response: Response, options: FetchOptions, url: string): Promise<Omit<FetchedPage, "finalUrl" | "status" | "redirects">> {
  const header = parseContentType(response.headers.get("content-type"));
  if (options.accept === "text") {
    // Plain text (robots.txt): any text/* label, or none; read as UTF-8 unless it says otherwise.
    if (header && !header.type.startsWith("text/")) {
      await discard(response);
      throw new LinkFetchError("wrong-type", `not a text file (${header.type})`, url);
    }
    const { bytes, truncated } = await readBody(response, options.maxBytes, "truncate", url);
    const { text, charset } = decodeHtml(bytes, header?.charset ?? "utf-8", truncated);
    return { kind: "html", contentType: header?.type ?? "text/plain", text, charset, byteLength: bytes.byteLength, truncated };
  }
  if (header && !HTML_TYPES.has(header.type)) {
    await discard(response);
    throw new LinkFetchError("wrong-type", `not an HTML page (${header.type})`, url);
  }
  const { bytes, truncated } = await readBody(response, options.maxBytes, "truncate", url);
  if (!header && !looksLikeHtml(bytes)) throw new LinkFetchError("wrong-type", "not an HTML page (no Content-Type, and the body does not look like HTML)", url);
  const { text, charset } = decodeHtml(bytes, header?.charset ?? null, truncated);
  return { kind: "html", contentType: header?.type ?? "text/html", text, charset, byteLength: bytes.byteLength, truncated };
}

const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);

/**
 * An image's bytes, refused unless they are one of the raster formats the image pipeline opens
 * (whatever the Content-Type says: servers label icons application/octet-stream or text/plain,
 * and some label error pages image/png). SVG is refused: it is a document that can run script.
 */
async function readImage(response: Response, options: FetchOptions, url: string): Promise<Omit<FetchedImage, "finalUrl" | "status" | "redirects">> {
  const what = options.accept === "icon" ? "icon" : "image";
  const tooLarge = `${what} larger than ${formatBytes(options.maxBytes)}`;
  const header = parseContentType(response.headers.get("content-type"));
  if (header?.type === "image/svg+xml") {
    await discard(response);
    throw new LinkFetchError("wrong-type", `SVG ${what}s are not accepted (SVG can carry scripts)`, url);
  }
  if (header && !header.type.startsWith("image/") && !GENERIC_TYPES.has(header.type)) {
    await discard(response);
    throw new LinkFetchError("wrong-type", `not an ${what} (${header.type})`, url);
  }
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > options.maxBytes) {
    await discard(response);
    throw new LinkFetchError("too-large", tooLarge, url);
  }
  const { bytes } = await readBody(response, options.maxBytes, tooLarge, url);
  const sniffed = sniffImageType(bytes);
  if (!sniffed) throw new LinkFetchError("wrong-type", `not an ${what} (${header?.type ?? "no Content-Type"}, and the bytes are no known image format)`, url);
  return { kind: "image", contentType: sniffed, bytes, truncated: false };
}

/** Labels that say nothing about the bytes; the bytes decide. */
const GENERIC_TYPES = new Set(["application/octet-stream", "binary/octet-stream", "application/unknown", "text/plain"]);

/**
 * The body, at most `maxBytes` of it, read as it arrives so a larger one is never held whole:
 * past the cap the rest is cancelled, and either the first maxBytes are kept ("truncate") or
 * the fetch fails with the given reason.
 */
async function readBody(response: Response, maxBytes: number, overCap: "truncate" | string, url: string): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (total + value.byteLength > maxBytes) {
        if (overCap !== "truncate") throw new LinkFetchError("too-large", overCap, url);
        chunks.push(value.subarray(0, maxBytes - total));
        total = maxBytes;
        truncated = true;
        break;
      }
      chunks.push(value);
      total += value.byteLength;
    }
  } finally {
    // After a break or a failure the server may still be sending: stop it.
    await reader.cancel().catch(() => {});
  }
  return { bytes: concat(chunks, total), truncated };
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** `text/html; charset=Shift_JIS` → { type: "text/html", charset: "Shift_JIS" }; null when absent or empty. */
export function parseContentType(header: string | null): { type: string; charset: string | null } | null {
  if (!header) return null;
  const [essence = "", ...params] = header.split(";");
  const type = essence.trim().toLowerCase();
  if (type === "" || !type.includes("/")) return null;
  let charset: string | null = null;
  for (const param of params) {
    const [name, ...value] = param.split("=");
    if (name?.trim().toLowerCase() === "charset") charset = value.join("=").trim().replace(/^["']|["']$/g, "") || null;
  }
  return { type, charset };
}

/**
 * The page's text in the encoding the HTML standard's sniffing picks: byte order mark, then
 * the Content-Type charset, then a <meta charset> / http-equiv in the first 1024 bytes. When
 * none says anything, UTF-8 if the bytes are valid UTF-8 (as browsers guess today) and
 * windows-1252 otherwise (the standard's default). A cut page may end inside a character;
 * its broken tail is dropped.
 */
export function decodeHtml(bytes: Uint8Array, headerCharset: string | null, truncated = false): { text: string; charset: string } {
  const options = headerCharset ? { transportLayerEncodingLabel: headerCharset } : {};
  // The sniffer always answers; asking with two defaults shows whether anything declared one.
  const declared = getEncoding(bytes, { ...options, defaultEncoding: "UTF-8" });
  const undeclared = declared !== getEncoding(bytes, { ...options, defaultEncoding: "windows-1252" });
  let charset = undeclared ? (isUtf8(bytes, truncated) ? "UTF-8" : "windows-1252") : declared;
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    // A label the sniffer knows and the runtime cannot decode ("replacement"): read as UTF-8.
    charset = "UTF-8";
    decoder = new TextDecoder(charset);
  }
  let text = decoder.decode(bytes);
  if (truncated) text = text.replace(/\uFFFD+$/, "");
  return { text: text.replace(/^\uFEFF/, ""), charset };
}

function isUtf8(bytes: Uint8Array, truncated: boolean): boolean {
  try {
    // Streaming mode forgives an unfinished character at the end: a cut page may end in one.
    new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream: truncated });
    return true;
  } catch {
    return false;
  }
}

/** The HTML standard's "text/html" sniff: its first tag is one only HTML starts with. */
function looksLikeHtml(bytes: Uint8Array): boolean {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 1024)).replace(/^(\xEF\xBB\xBF|\xFE\xFF|\xFF\xFE)/, "").trimStart().toLowerCase();
  return /^<(!doctype html|html|head|body|script|iframe|h1|div|font|table|a|style|title|b|br|p|!--)[\s>]/.test(head);
}

/** The media type of raster image bytes, by their magic numbers; null for anything else. */
export function sniffImageType(bytes: Uint8Array): string | null {
  const starts = (...sig: number[]) => sig.every((byte, i) => bytes[i] === byte);
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (ascii(0, 6) === "GIF87a" || ascii(0, 6) === "GIF89a") return "image/gif";
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "image/webp";
  if (starts(0x00, 0x00, 0x01, 0x00)) return "image/x-icon";
  if (ascii(0, 2) === "BM") return "image/bmp";
  if (starts(0x49, 0x49, 0x2a, 0x00) || starts(0x4d, 0x4d, 0x00, 0x2a)) return "image/tiff";
  if (starts(0xff, 0x0a) || starts(0, 0, 0, 0x0c, 0x4a, 0x58, 0x4c, 0x20)) return "image/jxl";
  if (ascii(4, 8) === "ftyp") {
    const brand = ascii(8, 12);
    if (brand === "avif" || brand === "avis") return "image/avif";
    if (["heic", "heix", "hevc", "heim", "heis", "mif1", "msf1"].includes(brand)) return "image/heic";
  }
  return null;
}

/** 10000 → "10 s", 250 → "250 ms". */
function formatDuration(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

/**
 * The fetch's one deadline and its cancellation: an AbortSignal for fetch and body reads, a
 * race for what cannot be aborted (DNS), and the translation of whatever the abort made fetch
 * throw into a LinkFetchError that says which of the two happened.
 */
class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout>;
  /** Why the signal fired, once it has. */
  private why: "timeout" | "cancelled" | null = null;
  private readonly onOuterAbort = () => this.abort("cancelled");

  constructor(
    private readonly timeoutMs: number,
    private readonly outer: AbortSignal | undefined,
  ) {
    this.timer = setTimeout(() => this.abort("timeout"), timeoutMs);
    if (outer?.aborted) this.abort("cancelled");
    else outer?.addEventListener("abort", this.onOuterAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** `work`, or a rejection as soon as the deadline passes or the caller cancels. */
  race<T>(work: Promise<T>): Promise<T> {
    return unlessAborted(work, this.controller.signal);
  }

  /** What to throw for `err`, which stopped the fetch of `url`. */
  explain(err: unknown, url: string): LinkFetchError {
    if (err instanceof LinkFetchError) return err;
    if (this.why === "timeout") return new LinkFetchError("timeout", `timed out after ${formatDuration(this.timeoutMs)}`, url);
    if (this.why === "cancelled") return new LinkFetchError("cancelled", "cancelled", url);
    return new LinkFetchError("connect", `connection failed (${connectionCause(err)})`, url);
  }

  clear(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener("abort", this.onOuterAbort);
  }

  private abort(why: "timeout" | "cancelled"): void {
    if (this.why) return;
    this.why = why;
    this.controller.abort(new Error(`link fetch ${why}`));
  }
}
