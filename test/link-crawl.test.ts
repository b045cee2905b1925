/**
 * Saving a link, module by module (src/links/): the URL policy and SSRF address policy as unit
 * cases, and the crawl itself against loopback servers started here (plain HTTP and TLS for a
 * made-up host name): redirects, caps, timeouts, content types, charsets, metadata, the
 * readable article and the offline snapshot. Made-up host names reach loopback through the
 * fetcher's injectable lookup; nothing leaves the machine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { join } from "node:path";
import { decodeHtml, type FetchOptions, fetchResource, LinkFetchError, sniffImageType } from "../src/links/fetch-page.ts";
import { parsePage } from "../src/links/html-document.ts";
import { pageMetadata } from "../src/links/page-metadata.ts";
import { readablePage, SNAPSHOT_CSP, snapshotHtml } from "../src/links/readable.ts";
import { egressPolicy, type EgressPolicy } from "../src/net/egress-policy.ts";
import { checkAddress, normalizeUrl, validateLinkUrl } from "../src/net/url-policy.ts";

const FIXTURES = join(import.meta.dir, "fixtures", "links");
const fixture = (name: string) => Bun.file(join(FIXTURES, name));

/** A 1×1 PNG. */
const PNG = Uint8Array.from(Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64"));

let server: Server<unknown>;
let tlsServer: Server<unknown>;
let origin: string;
let port: number;
let tlsCert: string;
/** Paths the plain server was asked for, in order. */
const hits: string[] = [];
/** Resolves when /hang has been asked for (the test cancelling it waits for this). */
let hangArrived = Promise.withResolvers<void>();

/** A stream that never ends: `first` once, then `chunk` for as long as it is read. */
function endless(first: Uint8Array, chunk: Uint8Array): ReadableStream<Uint8Array> {
  let started = false;
  return new ReadableStream({
    pull(controller) {
      controller.enqueue(started ? chunk : first);
      started = true;
    },
  });
}

/** A body without a Content-Type header (Bun.serve labels byte bodies application/octet-stream). */
const untyped = (bytes: Uint8Array) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });

const html = (body: ConstructorParameters<typeof Response>[0], contentType = "text/html; charset=utf-8", headers: Record<string, string> = {}) =>
  new Response(body, { headers: { "content-type": contentType, ...headers } });
const redirect = (location: string, status = 302) => new Response(null, { status, headers: { location } });
const encode = (text: string) => new TextEncoder().encode(text);

async function route(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const path = url.pathname;
  hits.push(path);
  const hop = /^\/hop\/(\d+)$/.exec(path);
  if (hop) {
    const left = Number(hop[1]);
    // A relative Location: "4" from /hop/5 is /hop/4.
    return left === 0 ? html("<!DOCTYPE html><title>End of the chain</title><p>arrived</p>") : redirect(String(left - 1), left % 2 === 0 ? 301 : 302);
  }
  switch (path) {
    case "/article":
      return html(fixture("news-article.html"));
    case "/minimal":
      return html(fixture("minimal.html"));
    case "/icons":
      return html(fixture("icons.html"));
    case "/icons/apple-touch-icon.png":
      return html(PNG, "application/octet-stream");
    case "/icons/icon.svg":
      return html('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', "image/svg+xml");
    case "/shift-jis":
      return html(fixture("shift-jis.html"), "text/html");
    case "/windows-1252":
      return html(fixture("windows-1252.html"), "text/html");
    case "/header-charset":
      // The header says windows-1252, the meta says UTF-8: the header wins.
      return html(Uint8Array.from([...encode('<meta charset="utf-8"><p>caf'), 0xe9, ...encode("</p>")]), "text/html; charset=windows-1252");
    case "/bom":
      // A UTF-8 byte order mark outranks the header.
      return html(Uint8Array.from([0xef, 0xbb, 0xbf, ...encode("<p>café</p>")]), "text/html; charset=windows-1252");
    case "/echo":
      return html(`<!DOCTYPE html><title>echo</title><p id="host">${request.headers.get("host")}</p><p id="ua">${request.headers.get("user-agent")}</p>`);
    case "/xhtml":
      return html('<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>XHTML page</title></head><body><p>x</p></body></html>', "application/xhtml+xml");
    case "/untyped-html":
      return new Response(untyped(encode("  <!DOCTYPE html><title>No header</title><p>still a page</p>")));
    case "/untyped-pdf":
      return new Response(untyped(encode("%PDF-1.7\n%âãÏÓ\n1 0 obj")));
    case "/report.pdf":
      return html(encode("%PDF-1.7\n"), "application/pdf");
    case "/missing":
      return new Response("gone", { status: 404 });
    case "/broken":
      return new Response("oops", { status: 500 });
    case "/endless-html":
      return html(endless(encode("<!DOCTYPE html><title>Endless</title>"), encode("<p>and on and on</p>".repeat(800))), "text/html");
    case "/gzip-bomb":
      // 10 MB of markup in ~10 KB on the wire: the cap counts what it inflates to.
      return html(Bun.gzipSync(encode(`<!DOCTYPE html><title>Bomb</title>${"<p>a</p>".repeat(1_250_000)}`)), "text/html", { "content-encoding": "gzip" });
    case "/big.png": {
      const bytes = new Uint8Array(300 * 1024);
      bytes.set(PNG);
      return html(bytes, "image/png"); // with its Content-Length
    }
    case "/endless.png":
      return html(endless(PNG, new Uint8Array(16 * 1024)), "image/png");
    case "/fake.png":
      return html("<!DOCTYPE html><p>Not found, but said to be a PNG</p>", "image/png");
    case "/to-name":
      return redirect(`//news.test:${port}/echo`);
    case "/to-absolute-path":
      return redirect("/article", 301);
    case "/to-unspecified":
      // 0.0.0.0 reaches this very server on Linux: only the policy stops it.
      return redirect(`http://0.0.0.0:${port}/must-not-be-hit`);
    case "/to-metadata":
      return redirect("http://metadata.test/latest/meta-data/");
    case "/to-ftp":
      return redirect("ftp://files.example/pub/file.txt");
    case "/to-nowhere":
      return new Response(null, { status: 302 });
    case "/hang":
      hangArrived.resolve();
      return new Promise<Response>(() => {});
    case "/hang-body":
      // Headers and a first chunk, then silence.
      return html(
        new ReadableStream({
          start(controller) {
            controller.enqueue(encode("<!DOCTYPE html><title>stalled</title>"));
          },
        }),
        "text/html",
      );
    default:
      return new Response("no such page", { status: 404 });
  }
}

/** Made-up names resolve to loopback (metadata.test to the cloud metadata address). */
async function testLookup(hostname: string): Promise<string[]> {
  if (hostname === "metadata.test") return ["169.254.169.254"];
  if (hostname.endsWith(".test")) return ["127.0.0.1"];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
}

/** The crawler's egress policy with no allow-list and any port; `allowPrivate` opens loopback for the test servers. */
const crawlerEgress = (allowPrivate: boolean): EgressPolicy => ({
  ...egressPolicy({ linkAllowCidrs: [], linkPorts: null, webhookAllowCidrs: [], webhookPorts: null, mailAllowCidrs: [] }, "links"),
  allowPrivate,
});

/** Fetch options for the tests: loopback allowed, generous deadline (the machine may be busy). */
const options = (overrides: Partial<FetchOptions> = {}): FetchOptions => ({
  accept: "html",
  maxBytes: 1024 * 1024,
  timeoutMs: 30_000,
  maxRedirects: 5,
  egress: crawlerEgress(true),
  userAgent: "MediaboxTest/1.0 (+link crawl test)",
  lookup: testLookup,
  ...overrides,
});

/** The LinkFetchError a fetch fails with (and a test failure when it succeeds or fails otherwise). */
async function failure(promise: Promise<unknown>): Promise<LinkFetchError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof LinkFetchError) return err;
    throw new Error(`expected a LinkFetchError, got ${String(err)}`);
  }
  throw new Error("expected the fetch to fail, it succeeded");
}

/** `promise`, or a failure naming `what` after `ms`: no wait in this file is unbounded. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function fetchPage(path: string, overrides: Partial<FetchOptions> = {}) {
  return fetchResource(`${origin}${path}`, { ...options(overrides), accept: "html" });
}

beforeAll(async () => {
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: route });
  port = server.port!;
  origin = `http://127.0.0.1:${port}`;
  tlsCert = await fixture("secure-test.cert.pem").text();
  tlsServer = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: tlsCert, key: await fixture("secure-test.key.pem").text() },
    fetch: (request) => html(`<!DOCTYPE html><title>secure</title><p id="host">${request.headers.get("host")}</p>`),
  });
});

afterAll(async () => {
  // Force-closes the connections still held by /hang and /hang-body.
  await Promise.all([server?.stop(true), tlsServer?.stop(true)]);
});

describe("URL validation and normalization", () => {
  test("validateLinkUrl accepts absolute http(s) URLs and says why it refuses the others", () => {
    const ok = validateLinkUrl("  https://Example.com/a?b=1  ");
    expect(ok.ok && ok.url.href).toBe("https://example.com/a?b=1");
    const reason = (input: string) => {
      const verdict = validateLinkUrl(input);
      return verdict.ok ? null : verdict.reason;
    };
    expect(reason("ftp://files.example/x")).toBe("only http and https URLs are accepted (ftp:)");
    expect(reason("javascript:alert(1)")).toBe("only http and https URLs are accepted (javascript:)");
    expect(reason("file:///etc/passwd")).toBe("only http and https URLs are accepted (file:)");
    expect(reason("https://user:secret@example.com/")).toBe("URL carries credentials (user:password@)");
    expect(reason("example.com/page")).toBe("not an absolute URL");
    expect(reason("")).toBe("empty URL");
    expect(reason(`https://example.com/${"a".repeat(2048)}`)).toBe("URL longer than 2048 characters");
    // Percent-encoding lengthens what was typed: the serialized form is what is limited.
    expect(reason(`https://example.com/${"é".repeat(700)}`)).toBe("URL longer than 2048 characters");
  });

  test("normalizeUrl makes one key of the usual spellings of a page", () => {
    expect(normalizeUrl("HTTPS://News.Example.COM:443/World/Story?utm_source=tw&utm_MEDIUM=social&b=2&a=1&fbclid=x&gclid=y#comments")).toBe(
      "https://news.example.com/World/Story?a=1&b=2",
    );
    expect(normalizeUrl("http://example.com:80")).toBe("http://example.com/");
    expect(normalizeUrl("http://example.com./a")).toBe("http://example.com/a");
    expect(normalizeUrl("https://example.com:8443/a")).toBe("https://example.com:8443/a");
    // Repeated names keep their order; values keep their bytes.
    expect(normalizeUrl("https://example.com/s?q=a+b&tag=2&tag=1&path=%2Fx")).toBe("https://example.com/s?path=%2Fx&q=a+b&tag=2&tag=1");
    // Unreserved escapes decoded, others uppercased.
    expect(normalizeUrl("https://example.com/%7euser/caf%c3%a9")).toBe("https://example.com/~user/caf%C3%A9");
    // The path's case and trailing slash are the server's business.
    expect(normalizeUrl("https://example.com/Docs/")).toBe("https://example.com/Docs/");
    expect(normalizeUrl("https://example.com/Docs")).toBe("https://example.com/Docs");
    expect(normalizeUrl("https://example.com/?utm_campaign=spring")).toBe("https://example.com/");
    expect(normalizeUrl("https://example.com/a/./b/../c")).toBe("https://example.com/a/c");
    expect(normalizeUrl("https://bücher.example/")).toBe("https://xn--bcher-kva.example/");
    expect(normalizeUrl("http://example.com/")).not.toBe(normalizeUrl("https://example.com/"));
  });
});

describe("address policy (SSRF guard)", () => {
  const verdict = (ip: string, allowPrivate = false) => {
    const result = checkAddress(ip, { allowPrivate });
    return result.ok ? "ok" : result.reason;
  };

  test("IPv4: public unicast only, unless allowPrivate opens the private ranges", () => {
    expect(verdict("93.184.216.34")).toBe("ok");
    expect(verdict("127.0.0.1")).toBe("blocked address 127.0.0.1 (loopback)");
    expect(verdict("10.1.2.3")).toBe("blocked address 10.1.2.3 (private)");
    expect(verdict("172.16.0.1")).toBe("blocked address 172.16.0.1 (private)");
    expect(verdict("192.168.1.1")).toBe("blocked address 192.168.1.1 (private)");
    expect(verdict("169.254.1.1")).toBe("blocked address 169.254.1.1 (link-local)");
    expect(verdict("100.64.0.1")).toBe("blocked address 100.64.0.1 (carrier-grade NAT)");
    for (const ip of ["127.0.0.1", "10.1.2.3", "192.168.1.1", "169.254.1.1", "100.64.0.1"]) expect(verdict(ip, true)).toBe("ok");
    // Never, even with allowPrivate:
    expect(verdict("0.0.0.0", true)).toBe("blocked address 0.0.0.0 (unspecified)");
    expect(verdict("224.0.0.251", true)).toBe("blocked address 224.0.0.251 (multicast)");
    expect(verdict("255.255.255.255", true)).toBe("blocked address 255.255.255.255 (broadcast)");
    expect(verdict("192.0.2.10", true)).toBe("blocked address 192.0.2.10 (reserved)");
    expect(verdict("240.0.0.1", true)).toBe("blocked address 240.0.0.1 (reserved)");
    expect(verdict("169.254.169.254", true)).toBe("blocked address 169.254.169.254 (cloud metadata service)");
  });

  test("IPv6: global unicast only; private ranges with allowPrivate; never unspecified or multicast", () => {
    expect(verdict("2606:4700:4700::1111")).toBe("ok");
    expect(verdict("::1")).toBe("blocked address ::1 (loopback)");
    expect(verdict("fe80::1")).toBe("blocked address fe80::1 (link-local)");
    expect(verdict("fd12:3456::1")).toBe("blocked address fd12:3456::1 (unique-local)");
    for (const ip of ["::1", "fe80::1", "fd12:3456::1"]) expect(verdict(ip, true)).toBe("ok");
    expect(verdict("::", true)).toBe("blocked address :: (unspecified)");
    expect(verdict("ff02::1", true)).toBe("blocked address ff02::1 (multicast)");
    expect(verdict("2001:db8::1", true)).toBe("blocked address 2001:db8::1 (reserved)");
    expect(verdict("fd00:ec2::254", true)).toBe("blocked address fd00:ec2::254 (cloud metadata service)");
    // IPv4-compatible (deprecated) and other space outside 2000::/3.
    expect(verdict("::7f00:1", true)).toBe("blocked address ::7f00:1 (reserved)");
    expect(verdict("[::1]", true)).toBe("ok");
    expect(verdict("not-an-ip")).toBe("not an IP address (not-an-ip)");
  });

  test("IPv6 forms carrying an IPv4 address are judged by that address", () => {
    expect(verdict("::ffff:127.0.0.1")).toBe("blocked address ::ffff:127.0.0.1 (IPv4-mapped 127.0.0.1, loopback)");
    expect(verdict("::ffff:7f00:1")).toBe("blocked address ::ffff:7f00:1 (IPv4-mapped 127.0.0.1, loopback)");
    expect(verdict("::ffff:10.0.0.1")).toBe("blocked address ::ffff:10.0.0.1 (IPv4-mapped 10.0.0.1, private)");
    expect(verdict("::ffff:127.0.0.1", true)).toBe("ok");
    expect(verdict("::ffff:8.8.8.8")).toBe("ok");
    expect(verdict("::ffff:169.254.169.254", true)).toBe("blocked address ::ffff:169.254.169.254 (cloud metadata service)");
    expect(verdict("::ffff:0.0.0.0", true)).toBe("blocked address ::ffff:0.0.0.0 (IPv4-mapped 0.0.0.0, unspecified)");
    expect(verdict("64:ff9b::10.0.0.1")).toBe("blocked address 64:ff9b::10.0.0.1 (NAT64 10.0.0.1, private)");
    expect(verdict("64:ff9b::8.8.8.8")).toBe("ok");
    expect(verdict("2002:7f00:1::")).toBe("blocked address 2002:7f00:1:: (6to4 127.0.0.1, loopback)");
    expect(verdict("2002:808:808::1")).toBe("ok");
    expect(verdict("2001:0:4136:e378::1", true)).toBe("blocked address 2001:0:4136:e378::1 (teredo)");
  });
});

describe("fetching: addresses, hosts and redirects", () => {
  test("loopback is refused by default, before anything connects", async () => {
    const before = hits.length;
    const literal = await failure(fetchResource(`${origin}/must-not-be-hit`, options({ egress: crawlerEgress(false) })));
    expect(literal.kind).toBe("blocked");
    expect(literal.reason).toBe("blocked address 127.0.0.1 (loopback); MEDIABOX_LINK_ALLOW_CIDRS lists the ranges the crawler may reach");
    // A name is resolved by the system resolver and its addresses checked: localhost is loopback.
    const named = await failure(fetchResource(`http://localhost:${port}/must-not-be-hit`, options({ egress: crawlerEgress(false), lookup: undefined })));
    expect(named.reason).toMatch(/^blocked address (127\.0\.0\.1|::1) \(loopback\); MEDIABOX_LINK_ALLOW_CIDRS/);
    const mapped = await failure(fetchResource(`http://[::ffff:127.0.0.1]:${port}/must-not-be-hit`, options({ egress: crawlerEgress(false) })));
    expect(mapped.reason).toBe("blocked address ::ffff:7f00:1 (IPv4-mapped 127.0.0.1, loopback); MEDIABOX_LINK_ALLOW_CIDRS lists the ranges the crawler may reach");
    expect(hits.slice(before)).toEqual([]);
  });

  test("a host is refused when any of its addresses is, and otherwise reached on the first that answers", async () => {
    const before = hits.length;
    const mixed = await failure(fetchResource(`http://mixed.test:${port}/must-not-be-hit`, options({ lookup: async () => ["127.0.0.1", "169.254.169.254"] })));
    expect(mixed.reason).toBe("blocked address 169.254.169.254 (cloud metadata service)");
    expect(hits.slice(before)).toEqual([]);
    // 127.0.0.2 refuses the connection (the server listens on 127.0.0.1 only): the next address serves.
    const page = await fetchResource(`http://two.test:${port}/echo`, { ...options({ lookup: async () => ["127.0.0.2", "127.0.0.1"] }), accept: "html" });
    expect(page.text).toContain('<p id="host">two.test:');
  });

  test("the request goes to the checked address with the real Host header and User-Agent", async () => {
    const page = await fetchResource(`http://news.test:${port}/echo`, { ...options(), accept: "html" });
    expect(page.finalUrl).toBe(`http://news.test:${port}/echo`);
    expect(page.text).toContain(`<p id="host">news.test:${port}</p>`);
    expect(page.text).toContain('<p id="ua">MediaboxTest/1.0 (+link crawl test)</p>');
  });

  test("HTTPS: the certificate is checked against the host name, not the address connected to", async () => {
    const tlsPort = tlsServer.port!;
    const page = await fetchResource(`https://secure.test:${tlsPort}/`, { ...options({ ca: tlsCert }), accept: "html" });
    expect(page.text).toContain(`<p id="host">secure.test:${tlsPort}</p>`);
    const impostor = await failure(fetchResource(`https://impostor.test:${tlsPort}/`, options({ ca: tlsCert })));
    expect(impostor.kind).toBe("connect");
    expect(impostor.reason).toMatch(/^TLS handshake with impostor\.test:\d+ failed \(.+\)$/);
    const untrusted = await failure(fetchResource(`https://secure.test:${tlsPort}/`, options()));
    expect(untrusted.reason).toMatch(/^TLS handshake with secure\.test:\d+ failed/);
  });

  test("redirects are followed by hand: relative Locations, every hop recorded, the limit enforced", async () => {
    const five = await fetchPage("/hop/5");
    expect(five.finalUrl).toBe(`${origin}/hop/0`);
    expect(five.redirects).toEqual([5, 4, 3, 2, 1].map((n) => `${origin}/hop/${n}`));
    expect(five.text).toContain("End of the chain");

    const six = await failure(fetchPage("/hop/6"));
    expect(six.kind).toBe("redirects");
    expect(six.reason).toBe("too many redirects (6)");

    const none = await failure(fetchPage("/hop/1", { maxRedirects: 0 }));
    expect(none.reason).toBe("too many redirects (1)");

    const absolutePath = await fetchPage("/to-absolute-path");
    expect(absolutePath.finalUrl).toBe(`${origin}/article`);
    // A scheme-relative Location to another name: resolved and checked again.
    const renamed = await fetchPage("/to-name");
    expect(renamed.finalUrl).toBe(`http://news.test:${port}/echo`);
    expect(renamed.text).toContain(`<p id="host">news.test:${port}</p>`);
  });

  test("every redirect hop is checked again: blocked addresses, other schemes, missing Locations", async () => {
    const before = hits.length;
    const unspecified = await failure(fetchPage("/to-unspecified"));
    expect(unspecified.kind).toBe("blocked");
    expect(unspecified.reason).toBe("blocked address 0.0.0.0 (unspecified)");
    expect(unspecified.url).toBe(`http://0.0.0.0:${port}/must-not-be-hit`);
    const metadata = await failure(fetchPage("/to-metadata"));
    expect(metadata.reason).toBe("blocked address 169.254.169.254 (cloud metadata service)");
    expect(hits.slice(before)).toEqual(["/to-unspecified", "/to-metadata"]);

    const ftp = await failure(fetchPage("/to-ftp"));
    expect(ftp.kind).toBe("invalid-url");
    expect(ftp.reason).toBe("redirect refused: only http and https URLs are accepted (ftp:)");
    const nowhere = await failure(fetchPage("/to-nowhere"));
    expect(nowhere.reason).toBe("redirect without a Location (HTTP 302)");
  });

  test("HTTP errors, unknown hosts and refused connections have their reasons", async () => {
    const missing = await failure(fetchPage("/missing"));
    expect([missing.kind, missing.reason, missing.status]).toEqual(["http-status", "HTTP 404", 404]);
    expect((await failure(fetchPage("/broken"))).reason).toBe("HTTP 500");
    const unknown = await failure(fetchResource("http://nowhere.invalid/", options()));
    expect([unknown.kind, unknown.reason]).toEqual(["dns", "host not found (nowhere.invalid)"]);
    const refused = await failure(fetchResource(`http://closed.test:${port}/`, options({ lookup: async () => ["127.0.0.2"] })));
    expect(refused.kind).toBe("connect");
    expect(refused.reason).toBe(`could not connect to closed.test:${port} (ECONNREFUSED)`);
    expect((await failure(fetchResource("gopher://old.example/", options()))).reason).toBe("only http and https URLs are accepted (gopher:)");
  });
});

describe("fetching: deadlines, caps and content types", () => {
  test("a server that never answers times out at the deadline, headers or body", async () => {
    const started = Date.now();
    const headers = await failure(fetchPage("/hang", { timeoutMs: 300 }));
    expect([headers.kind, headers.reason]).toEqual(["timeout", "timed out after 300 ms"]);
    const body = await failure(fetchPage("/hang-body", { timeoutMs: 1500 }));
    expect([body.kind, body.reason]).toEqual(["timeout", "timed out after 1.5 s"]);
    // Only a bound on a hang: the deadlines fired, nothing waited for the server.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  test("a fetch is cancelled by its caller's signal", async () => {
    hangArrived = Promise.withResolvers();
    const controller = new AbortController();
    const pending = failure(fetchPage("/hang", { signal: controller.signal }));
    await within(hangArrived.promise, 30_000, "the server to receive /hang");
    controller.abort();
    const cancelled = await pending;
    expect([cancelled.kind, cancelled.reason]).toEqual(["cancelled", "cancelled"]);
  });

  test("a page over the cap is kept up to the cap and flagged; an endless one is cut off", async () => {
    const endless = await fetchPage("/endless-html", { maxBytes: 100_000 });
    expect(endless.truncated).toBe(true);
    expect(endless.byteLength).toBe(100_000);
    expect(endless.text.startsWith("<!DOCTYPE html><title>Endless</title>")).toBe(true);
    expect(pageMetadata(endless.text, endless.finalUrl).title).toBe("Endless");
    // The cap counts inflated bytes: 10 MB gzipped to ~10 KB is still cut at 200 KB.
    const bomb = await fetchPage("/gzip-bomb", { maxBytes: 200_000 });
    expect([bomb.truncated, bomb.byteLength]).toEqual([true, 200_000]);
    const small = await fetchPage("/article");
    expect(small.truncated).toBe(false);
  });

  test("an image over the cap is refused, whether announced by Content-Length or not", async () => {
    const image = (path: string) => fetchResource(`${origin}${path}`, { ...options({ maxBytes: 100 * 1024 }), accept: "image" });
    const announced = await failure(image("/big.png"));
    expect([announced.kind, announced.reason]).toEqual(["too-large", "image larger than 100 KB"]);
    const streamed = await failure(image("/endless.png"));
    expect([streamed.kind, streamed.reason]).toEqual(["too-large", "image larger than 100 KB"]);
  });

  test("pages must be HTML: by Content-Type, or by their first bytes when there is none", async () => {
    const pdf = await failure(fetchPage("/report.pdf"));
    expect([pdf.kind, pdf.reason]).toEqual(["wrong-type", "not an HTML page (application/pdf)"]);
    const untypedPdf = await failure(fetchPage("/untyped-pdf"));
    expect(untypedPdf.reason).toBe("not an HTML page (no Content-Type, and the body does not look like HTML)");
    const untypedHtml = await fetchPage("/untyped-html");
    expect(untypedHtml.contentType).toBe("text/html");
    expect(pageMetadata(untypedHtml.text, untypedHtml.finalUrl).title).toBe("No header");
    const xhtml = await fetchPage("/xhtml");
    expect(xhtml.contentType).toBe("application/xhtml+xml");
    expect(pageMetadata(xhtml.text, xhtml.finalUrl).title).toBe("XHTML page");
    const png = await failure(fetchPage("/icons/apple-touch-icon.png"));
    expect(png.reason).toBe("not an HTML page (application/octet-stream)");
  });

  test("images and icons must be raster images by their bytes; SVG is refused", async () => {
    const icon = await fetchResource(`${origin}/icons/apple-touch-icon.png`, { ...options(), accept: "icon" });
    expect([icon.kind, icon.contentType, icon.truncated]).toEqual(["image", "image/png", false]);
    expect(icon.bytes).toEqual(PNG);
    const svg = await failure(fetchResource(`${origin}/icons/icon.svg`, { ...options(), accept: "icon" }));
    expect([svg.kind, svg.reason]).toEqual(["wrong-type", "SVG icons are not accepted (SVG can carry scripts)"]);
    const fake = await failure(fetchResource(`${origin}/fake.png`, { ...options(), accept: "image" }));
    expect(fake.reason).toBe("not an image (image/png, and the bytes are no known image format)");
    const page = await failure(fetchResource(`${origin}/article`, { ...options(), accept: "image" }));
    expect(page.reason).toBe("not an image (text/html)");
    expect(sniffImageType(Uint8Array.from([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg");
    expect(sniffImageType(encode("GIF89a..."))).toBe("image/gif");
    expect(sniffImageType(encode("RIFF\0\0\0\0WEBPVP8 "))).toBe("image/webp");
    expect(sniffImageType(Uint8Array.from([0, 0, 1, 0, 1, 0]))).toBe("image/x-icon");
  });
});

describe("charsets", () => {
  test("a Shift_JIS page declared by its meta tag only", async () => {
    const page = await fetchPage("/shift-jis");
    expect(page.charset).toBe("Shift_JIS");
    const meta = pageMetadata(page.text, page.finalUrl);
    expect(meta.title).toBe("港の防潮堤、市議会が承認");
    expect(meta.language).toBe("ja");
    expect(readablePage(page.text, page.finalUrl).text).toContain("可動式の防潮堤を建設する計画");
  });

  test("a windows-1252 page declared by http-equiv", async () => {
    const page = await fetchPage("/windows-1252");
    expect(page.charset).toBe("windows-1252");
    expect(pageMetadata(page.text, page.finalUrl).title).toBe("Café crème – « le vrai » — 5 €");
    expect(page.text).toContain("“un scandale”, dit le maître d’hôtel");
  });

  test("the Content-Type charset outranks the meta tag; a byte order mark outranks both", async () => {
    const header = await fetchPage("/header-charset");
    expect([header.charset, header.text.includes("<p>café</p>")]).toEqual(["windows-1252", true]);
    const bom = await fetchPage("/bom");
    expect(bom.charset).toBe("UTF-8");
    expect(bom.text).toBe("<p>café</p>");
  });

  test("undeclared pages are read as UTF-8 when they are valid UTF-8, else windows-1252", () => {
    expect(decodeHtml(encode("<p>naïve €</p>"), null)).toEqual({ text: "<p>naïve €</p>", charset: "UTF-8" });
    expect(decodeHtml(Uint8Array.from([...encode("<p>na"), 0xef, ...encode("ve "), 0x80, ...encode("</p>")]), null)).toEqual({ text: "<p>naïve €</p>", charset: "windows-1252" });
    // A page cut inside a character: the broken tail goes, the page is still UTF-8.
    const cut = encode("<p>€€").subarray(0, 7);
    expect(decodeHtml(cut, null, true)).toEqual({ text: "<p>€", charset: "UTF-8" });
  });
});

describe("page metadata", () => {
  test("a news article: Open Graph, Twitter, JSON-LD and the fields read from them", async () => {
    const page = await fetchPage("/article");
    const meta = pageMetadata(page.text, page.finalUrl);
    expect(meta.title).toBe("City council approves the tidal barrier after a decade of debate");
    expect(meta.description).toBe("After eleven years of studies, the council voted 9 to 4 for a movable barrier at the harbour mouth.");
    expect(meta.siteName).toBe("The Harbor Ledger");
    expect(meta.author).toBe("Mara Lindqvist");
    expect(meta.publishedAt).toBe("2024-03-05T08:30:00.000Z");
    expect(meta.language).toBe("en-GB");
    expect(meta.canonicalUrl).toBe(`${origin}/news/2024/03/tidal-barrier-approved`);

    const og = meta.og_metadata;
    expect(og["og:type"]).toBe("article");
    expect(og["og:image"]).toEqual(["https://cdn.ledger.example/img/barrier-hero-1200.jpg", "/img/barrier-map.png"]);
    expect(og["article:tag"]).toEqual(["flooding", "infrastructure"]);
    expect(og["twitter:card"]).toBe("summary_large_image");
    expect(og["twitter:title"]).toBe("Tidal barrier approved (Twitter title)");
    expect(og["viewport"]).toBeUndefined();
    // One valid JSON-LD script (the broken one is skipped), its @graph kept as written.
    expect(og.json_ld).toHaveLength(1);
    expect((og.json_ld[0]!["@graph"] as unknown[]).length).toBe(2);

    expect(meta.iconCandidates.map((icon) => [icon.url, icon.rel, icon.size])).toEqual([
      [`${origin}/static/apple-touch-icon.png`, "apple-touch-icon", 180],
      [`${origin}/static/favicon-32.png`, "icon", 32],
      [`${origin}/favicon.ico`, "fallback", null],
    ]);

    const images = meta.imageCandidates;
    expect(images[0]).toEqual({ url: "https://cdn.ledger.example/img/barrier-hero-1200.jpg", source: "og:image", width: 1200, height: 630, alt: "The harbour mouth at low tide" });
    expect(images.map((image) => [image.source, image.url])).toEqual([
      ["og:image", "https://cdn.ledger.example/img/barrier-hero-1200.jpg"],
      ["og:image", `${origin}/img/barrier-map.png`],
      ["twitter:image", "https://cdn.ledger.example/img/barrier-twitter.jpg"],
      ["json-ld", "https://cdn.ledger.example/img/barrier-square.jpg"],
      // The widest srcset entry; the lazy loader's data-src, not its data: placeholder.
      ["content", `${origin}/img/barrier-hero-1280.jpg`],
      ["content", `${origin}/img/gates-diagram.png`],
    ]);
    // Left out: the tracking pixel, the SVG logo in the header, the advert in the aside.
    const urls = images.map((image) => image.url).join(" ");
    expect(urls).not.toContain("pixel.gif");
    expect(urls).not.toContain("logo.svg");
    expect(urls).not.toContain("ad-banner");
  });

  test("a page with only a <title>", async () => {
    const page = await fetchPage("/minimal");
    const meta = pageMetadata(page.text, page.finalUrl);
    expect(meta).toMatchObject({ title: "Just a title", description: null, siteName: null, author: null, publishedAt: null, language: null, canonicalUrl: null, imageCandidates: [] });
    expect(meta.og_metadata).toEqual({ json_ld: [] });
    expect(meta.iconCandidates).toEqual([{ url: `${origin}/favicon.ico`, rel: "fallback", size: null, type: null }]);
  });

  test("icons of several sizes, ranked best first; SVG and data: icons left out", async () => {
    const page = await fetchPage("/icons");
    const meta = pageMetadata(page.text, page.finalUrl);
    expect(meta.iconCandidates.map((icon) => [icon.url, icon.rel, icon.size])).toEqual([
      [`${origin}/icons/apple-touch-icon.png`, "apple-touch-icon", 180],
      [`${origin}/icons/apple-152.png`, "apple-touch-icon", 152],
      ["https://cdn.icons.example/android-192.png", "icon", 192],
      [`${origin}/icons/favicon-32.png`, "icon", 32],
      [`${origin}/icons/favicon-16.png`, "icon", 16],
      // Declared as "shortcut icon" at /favicon.ico: the fallback is the same URL, kept once.
      [`${origin}/favicon.ico`, "shortcut icon", null],
    ]);
    // The best one is fetched as an icon (served as application/octet-stream, sniffed as PNG).
    const best = await fetchResource(meta.iconCandidates[0]!.url, { ...options(), accept: "icon" });
    expect(best.contentType).toBe("image/png");
  });

  test("each field falls back in its documented order", () => {
    const url = "https://blog.example/posts/1";
    const meta = (head: string, body = "") => pageMetadata(`<!DOCTYPE html><html><head>${head}</head><body>${body}</body></html>`, url);
    const ld = (object: unknown) => `<script type="application/ld+json">${JSON.stringify(object)}</script>`;
    expect(meta('<meta name="twitter:title" content="Twitter"><title>Title</title>').title).toBe("Twitter");
    expect(meta(`${ld({ "@type": "BlogPosting", headline: "Headline" })}<title>Title</title>`).title).toBe("Headline");
    expect(meta(`${ld({ "@type": "WebSite", name: "Site" })}<title> Title \n of page </title>`).title).toBe("Title of page");
    expect(meta("", "<h1>Heading</h1>").title).toBe("Heading");
    expect(meta('<meta name="description" content="Plain description">').description).toBe("Plain description");
    expect(meta(ld({ "@type": "WebSite", name: "From JSON-LD" })).siteName).toBe("From JSON-LD");
    expect(meta(ld([{ "@type": "NewsArticle", datePublished: "2023-11-02" }])).publishedAt).toBe("2023-11-02T00:00:00.000Z");
    expect(meta("", '<article><time datetime="2022-01-31T10:00:00Z">31 Jan</time></article>').publishedAt).toBe("2022-01-31T10:00:00.000Z");
    expect(meta('<meta property="og:locale" content="pt_br">').language).toBe("pt-BR");
    expect(meta('<meta property="og:url" content="/posts/1?ref=og">').canonicalUrl).toBe("https://blog.example/posts/1?ref=og");
    expect(meta('<base href="https://cdn.blog.example/assets/"><link rel="icon" href="i.png">').iconCandidates[0]!.url).toBe("https://cdn.blog.example/assets/i.png");
    // Unparseable dates and JSON are skipped, not fatal.
    expect(meta('<meta property="article:published_time" content="yesterday"><script type="application/ld+json">{nope</script>').publishedAt).toBeNull();
  });

  test("what a page can make us keep is bounded", () => {
    const many = Array.from({ length: 500 }, (_, i) => `<meta property="og:key${i}" content="${"v".repeat(5000)}">`).join("");
    const repeated = Array.from({ length: 100 }, () => '<meta property="og:image" content="https://a.example/i.jpg">').join("");
    const hugeLd = Array.from({ length: 30 }, () => `<script type="application/ld+json">${JSON.stringify({ "@type": "Thing", text: "x".repeat(100_000) })}</script>`).join("");
    const og = pageMetadata(`<html><head>${repeated}${many}${hugeLd}</head></html>`, "https://a.example/").og_metadata;
    expect(Object.keys(og).length).toBeLessThanOrEqual(201);
    expect((og["og:image"] as string[]).length).toBe(20);
    expect((og["og:key0"] as string).length).toBeLessThanOrEqual(2000);
    expect(JSON.stringify(og.json_ld).length).toBeLessThanOrEqual(256_000);
  });
});

describe("readable article and snapshot", () => {
  test("the readable text is the article, in paragraphs, without navigation, asides or footer", async () => {
    const page = await fetchPage("/article");
    const readable = readablePage(page.text, page.finalUrl);
    expect(readable.method).toBe("readability");
    expect(readable.byline).toBe("Mara Lindqvist");
    expect(readable.text).toContain("ARTICLE-MARKER-ONE");
    expect(readable.text).toContain("ARTICLE-MARKER-TWO");
    // Paragraphs stay paragraphs; the source's line wrapping does not.
    expect(readable.text).toContain("along the old quay.\n\nThe barrier, a row of hinged steel gates");
    expect(readable.text).toContain("the city council voted nine to four");
    for (const chrome of ["NAVIGATION-LINK", "ASIDE-MARKER", "FOOTER-MARKER", "We use cookies", "dataLayer", "Sign up"]) expect(readable.text).not.toContain(chrome);
    expect(readable.length).toBe(readable.text.length);
    expect(readable.excerpt).toBe("After eleven years of studies, the council voted 9 to 4 for a movable barrier at the harbour mouth.");

    // The article HTML: absolute URLs, nothing active.
    expect(readable.html).toContain(`<a href="${origin}/documents/barrier-decision.pdf" rel="noopener noreferrer nofollow">full council decision</a>`);
    expect(readable.html).toContain(`<img src="${origin}/img/barrier-hero-1280.jpg"`);
    expect(readable.html).toContain(`<img src="${origin}/img/gates-diagram.png"`);
    for (const banned of ["<script", "<iframe", "<form", "<style", "onload", "onclick", "javascript:", "pixel.gif", "data-src"]) expect(readable.html).not.toContain(banned);
  });

  test("when Readability finds nothing (or may not run), the body without its chrome is read", async () => {
    const page = await fetchPage("/article");
    const fallback = readablePage(page.text, page.finalUrl, { maxElements: 5 });
    expect(fallback.method).toBe("fallback");
    expect(fallback.title).toBe("Council approves tidal barrier | The Harbor Ledger");
    expect(fallback.text).toContain("ARTICLE-MARKER-ONE");
    for (const chrome of ["NAVIGATION-LINK", "ASIDE-MARKER", "FOOTER-MARKER", "dataLayer", "Sign up"]) expect(fallback.text).not.toContain(chrome);
    expect(fallback.html).not.toContain("<script");
    expect(fallback.html).not.toContain("onclick");

    const minimal = readablePage(await fixture("minimal.html").text(), `${origin}/minimal`);
    expect(minimal).toEqual({ title: "Just a title", byline: null, text: "", html: "", excerpt: null, length: 0, method: "fallback" });
  });

  test("a page nested thousands deep is read by the fallback (Readability would take minutes)", () => {
    const depth = 5_000;
    const deep = `<!DOCTYPE html><title>Deep</title><body><nav>NAV</nav>${"<div>".repeat(depth)}<p>deep <b>text</b></p>${"</div>".repeat(depth)}<p>${"Shallow prose. ".repeat(40)}</p></body>`;
    const readable = readablePage(deep, "https://deep.example/");
    expect(readable.method).toBe("fallback");
    expect(readable.text.startsWith("deep text\n\nShallow prose.")).toBe(true);
    // Markup deeper than the sanitizer goes is flattened to its (escaped) text.
    expect(readable.html).toContain(">deep text<");
    expect(readable.html.split("<div>").length - 1).toBeLessThanOrEqual(400);
  });

  test("plain text keeps headings, list items, line breaks and preformatted text apart", () => {
    const readable = readablePage(
      `<html><body><article><h2>Steps</h2><p>First line<br>second   line</p><ul><li>one</li><li>two</li></ul><pre>  indented\n    code</pre><p>${"Filler sentence for the scorer. ".repeat(30)}</p></article></body></html>`,
      "https://a.example/",
    );
    expect(readable.text.startsWith("Steps\n\nFirst line\nsecond line\n\none\n\ntwo\n\n  indented\n    code\n\nFiller sentence")).toBe(true);
  });

  test("hostile markup is sanitized; the snapshot loads nothing and runs nothing", async () => {
    const hostile = `<!DOCTYPE html><html><head><title>Hostile</title><meta property="og:title" content="Hostile &lt;script&gt;alert(1)&lt;/script&gt; page"></head><body>
      <article>
        <h1 onclick="alert('h1')">Hostile page</h1>
        <p onmouseover="alert(1)" style="color:red">${"A paragraph of perfectly ordinary prose, long enough to be the article. ".repeat(8)}</p>
        <p>Links: <a href="javascript:alert(1)">js</a>, <a href="  JaVaScRiPt:alert(2)">mixed case</a>,
          <a href="&#106;avascript:alert(3)">entity</a>, <a href="data:text/html,<script>alert(4)</script>">data</a>,
          <a href="/safe" onclick="steal()">safe</a>, <a href="mailto:desk@example.com">mail</a>,
          <a title='x" onmouseover="alert(5)' href="/quoted">quoted</a>.</p>
        <img src="/photo.jpg" onerror="alert(6)" width="640" height="480" alt="A photo">
        <img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9ImFsZXJ0KDcpIi8+" width="640" height="480" alt="svg">
        <img src="data:image/png;base64,iVBORw0KGgo=" width="640" height="480" alt="inline png">
        <svg><script>alert(8)</script><foreignObject><p>svg text</p></foreignObject></svg>
        <math><mtext><script>alert(9)</script></mtext></math>
        <iframe srcdoc="<script>alert(10)</script>"></iframe>
        <object data="/x.swf"></object><embed src="/y.swf">
        <form action="https://evil.example/"><input name="q"><button>Go</button></form>
        <style>body { background: url(https://evil.example/track.png) }</style>
        <script>alert(11)</script>
        <p>${"More ordinary prose closes the article with a second paragraph. ".repeat(6)}</p>
      </article></body></html>`;
    const url = "https://hostile.example/post";
    const readable = readablePage(hostile, url);
    const meta = pageMetadata(hostile, url);
    const snapshot = snapshotHtml(readable, meta, url, {
      images: new Map([["https://hostile.example/photo.jpg", "data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ=="]]),
      savedAt: "2024-06-01T12:00:00.000Z",
    });

    expect(snapshot.startsWith("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n")).toBe(true);
    expect(snapshot).toContain(`<meta http-equiv="Content-Security-Policy" content="${SNAPSHOT_CSP}">`);
    expect(SNAPSHOT_CSP).toBe("default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'");
    expect(snapshot).toContain("<title>Hostile &lt;script&gt;alert(1)&lt;/script&gt; page</title>");
    expect(snapshot).toContain('Saved from <a href="https://hostile.example/post" rel="noopener noreferrer nofollow">https://hostile.example/post</a> on <time datetime="2024-06-01T12:00:00.000Z">2024-06-01</time>');
    expect(snapshot).toContain("A paragraph of perfectly ordinary prose");

    // Structurally: no active element, no handler, no URL but http(s), mailto: and inline raster images.
    const document = parsePage(snapshot);
    for (const tag of ["script", "iframe", "object", "embed", "form", "input", "button", "svg", "math", "base", "link"]) expect(document.querySelectorAll(tag).length).toBe(0);
    expect(document.querySelectorAll("style").length).toBe(1); // the snapshot's own, in <head>
    for (const element of document.querySelectorAll("*")) {
      for (const name of element.getAttributeNames()) {
        expect(name.startsWith("on")).toBe(false);
        expect(name).not.toBe("style");
        expect(name).not.toBe("srcdoc");
      }
      for (const name of ["href", "src"]) {
        const value = element.getAttribute(name);
        if (value !== null) expect(value).toMatch(/^(https?:\/\/|mailto:|data:image\/(png|jpeg|gif|webp|avif);base64,)/);
      }
    }
    expect(snapshot.toLowerCase()).not.toContain("javascript:");
    // What is left of the scripts is text: the escaped og:title, the escaped attribute.
    expect(snapshot.replaceAll("&lt;script&gt;alert(1)&lt;/script&gt;", "").replace('onmouseover=&quot;alert(5)', "")).not.toContain("alert(");
    // The links that were safe survive, absolute; the quote in the title did not break out.
    expect(snapshot).toContain('<a href="https://hostile.example/safe" rel="noopener noreferrer nofollow">safe</a>');
    expect(snapshot).toContain('<a href="mailto:desk@example.com" rel="noopener noreferrer nofollow">mail</a>');
    expect(snapshot).toContain('title="x&quot; onmouseover=&quot;alert(5)"');
    // Images: the inlined copy shows, the inline PNG stays, the SVG data: image is gone.
    expect(snapshot).toContain('<img src="data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ==" alt="A photo" width="640" height="480">');
    expect(snapshot).toContain('<img src="data:image/png;base64,iVBORw0KGgo=" alt="inline png"');
    expect(snapshot).not.toContain("image/svg+xml");
  });

  test("in the snapshot, images without an inline copy become links, so nothing is fetched when it is read", async () => {
    const page = await fetchPage("/article");
    const readable = readablePage(page.text, page.finalUrl);
    const meta = pageMetadata(page.text, page.finalUrl);
    const snapshot = snapshotHtml(readable, meta, page.finalUrl, { images: new Map([[`${origin}/img/gates-diagram.png`, "data:image/png;base64,iVBORw0KGgo="]]) });
    expect(snapshot).toContain('<html lang="en-GB">');
    expect(snapshot).toContain("<h1>City council approves the tidal barrier after a decade of debate</h1>");
    // The article's own heading repeated the title: it is shown once.
    expect(snapshot.split("City council approves the tidal barrier after a decade of debate").length - 1).toBe(2); // <title> and <h1>
    expect(snapshot).toContain('<p class="details"><span class="site">The Harbor Ledger</span> · <span class="byline">Mara Lindqvist</span> · <time datetime="2024-03-05T08:30:00.000Z">2024-03-05</time></p>');
    expect(snapshot).toContain('<img src="data:image/png;base64,iVBORw0KGgo=" alt="How the hinged gates rise from the seabed"');
    expect(snapshot).toContain(`<span class="missing-image">[image: <a href="${origin}/img/barrier-hero-1280.jpg" rel="noopener noreferrer nofollow">The harbour mouth at low tide, where the barrier will stand</a>]</span>`);
    expect(snapshot).not.toMatch(/<img src="https?:/);
  });
});
