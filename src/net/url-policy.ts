/**
 * Which URLs a link may name and which addresses the crawler may connect to. Three pure
 * functions, no I/O: `validateLinkUrl` (what a client may submit, and what a redirect may lead
 * to), `normalizeUrl` (the key that finds a page saved twice) and `checkAddress` (the SSRF guard
 * the fetcher applies to every address a hostname resolves to, on every hop).
 */
import ipaddr from "ipaddr.js";

/** Longest URL accepted, in characters of its serialized form (the de facto browser/CDN limit). */
export const MAX_URL_LENGTH = 2048;

export type UrlVerdict = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * The URL a link may point at: absolute http(s), with a host, without credentials (they would
 * be stored in the library and sent to a third party), at most 2048 characters once serialized
 * (percent-encoding can lengthen what was typed). Surrounding whitespace is ignored; nothing
 * else is guessed (no scheme is added to "example.com").
 */
export function validateLinkUrl(input: string | URL): UrlVerdict {
  const text = typeof input === "string" ? input.trim() : input.href;
  if (text.length === 0) return { ok: false, reason: "empty URL" };
  if (text.length > MAX_URL_LENGTH) return { ok: false, reason: `URL longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: "not an absolute URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, reason: `only http and https URLs are accepted (${url.protocol})` };
  if (url.username !== "" || url.password !== "") return { ok: false, reason: "URL carries credentials (user:password@)" };
  if (url.hostname === "" || url.hostname === ".") return { ok: false, reason: "URL has no host" };
  if (url.href.length > MAX_URL_LENGTH) return { ok: false, reason: `URL longer than ${MAX_URL_LENGTH} characters` };
  return { ok: true, url };
}

/**
 * Query parameters that only say how a visitor arrived (campaign and click ids): two saves of
 * one article differing only in these are the same page. Matched case-insensitively; every
 * `utm_*` parameter too. Generic names ("ref", "source", "id") are kept: some sites route on them.
 */
const TRACKING_PARAMS = new Set([
  "fbclid", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "twclid", "ttclid",
  "li_fat_id", "igshid", "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "__hstc", "__hssc",
  "__hsfp", "mkt_tok", "oly_anon_id", "oly_enc_id", "vero_id", "vero_conv", "rb_clickid", "ref_src",
]);

const isTrackingParam = (name: string) => {
  const lower = name.toLowerCase();
  return lower.startsWith("utm_") || TRACKING_PARAMS.has(lower);
};

/**
 * The duplicate-detection key of a URL. What it does, and why:
 *
 * - scheme and host lowercased, IDN hosts in punycode, default ports dropped, `.` and `..` path
 *   segments resolved: the WHATWG parser's own normalization;
 * - a trailing dot on the host dropped (`example.com.` is `example.com`);
 * - the fragment dropped: it never reaches the server (hash-bang routing is given up for this);
 * - tracking parameters (`utm_*`, `fbclid`, `gclid`, ... see TRACKING_PARAMS) dropped, the others
 *   sorted by name, stably, so repeated names keep their order (`a=2&a=1` may mean something),
 *   and each kept with its own bytes (no re-encoding of `+`, `%20` or `/`); an empty query goes;
 * - percent-escapes of unreserved characters decoded (`%7E` is `~`), the other escapes in
 *   uppercase hex (RFC 3986 §6.2.2);
 * - the path's case kept (paths are case-sensitive on most servers), and its trailing slash
 *   kept everywhere: `/docs` and `/docs/` are different resources to many servers, and relative
 *   links inside them resolve differently. The root is always `/` (`https://a.example/`), which
 *   is the only place a trailing slash is implied.
 *
 * `http:` and `https:` stay distinct, as do `www.` and bare hosts: they can serve different
 * pages. Throws a TypeError for a string that is not an absolute URL (validate first).
 */
export function normalizeUrl(input: string | URL): string {
  const url = new URL(typeof input === "string" ? input.trim() : input.href);
  url.hash = "";
  if (url.hostname.endsWith(".") && url.hostname.length > 1) url.hostname = url.hostname.slice(0, -1);
  url.pathname = normalizeEscapes(url.pathname);
  url.search = normalizeQuery(url.search);
  return url.href;
}

/** The query without tracking parameters, sorted by name; "" when nothing is left. */
function normalizeQuery(search: string): string {
  if (search.length <= 1) return "";
  const pairs = search
    .slice(1)
    .split("&")
    .filter((pair) => pair !== "")
    .map((pair) => {
      const raw = normalizeEscapes(pair);
      const eq = raw.indexOf("=");
      return { name: eq === -1 ? raw : raw.slice(0, eq), raw };
    })
    .filter(({ name }) => !isTrackingParam(safeDecode(name)));
  // Array.prototype.sort is stable: equal names keep their order.
  pairs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return pairs.length === 0 ? "" : `?${pairs.map(({ raw }) => raw).join("&")}`;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** `%7e` → `~`, `%2f` → `%2F`. */
function normalizeEscapes(text: string): string {
  return text.replace(/%([0-9a-fA-F]{2})/g, (_match, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return text;
  }
}

export interface AddressPolicy {
  /**
   * Also allow loopback, private (RFC 1918, IPv6 unique-local), link-local and CGNAT
   * addresses: for an appliance that saves intranet pages, and for tests against loopback
   * servers. Off by default.
   */
  allowPrivate: boolean;
  /**
   * Ranges allowed whatever their kind (each purpose's own list: egress-policy.ts): an on-premises site names
   * its intranet here rather than opening every private range. The cloud metadata addresses
   * stay refused even inside an allowed range.
   */
  allowCidrs?: readonly AllowedCidr[];
}

export type AllowedCidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * "10.20.0.0/16, fd00::/8, 192.168.1.7" → the ranges (a bare address is its own /32 or /128).
 * Throws a readable Error naming the first entry that is not a CIDR.
 */
export function parseAllowedCidrs(text: string): AllowedCidr[] {
  const ranges: AllowedCidr[] = [];
  for (const entry of text.split(/[,\s]+/).filter(Boolean)) {
    try {
      if (entry.includes("/")) ranges.push(ipaddr.parseCIDR(entry));
      else {
        const address = ipaddr.parse(entry);
        ranges.push([address, address.kind() === "ipv4" ? 32 : 128]);
      }
    } catch {
      throw new Error(`"${entry}" is not an IP address or CIDR range (like 10.0.0.0/8 or fd00::/8)`);
    }
  }
  return ranges;
}

/** Whether the address, or the IPv4 address an IPv6 form carries, lies in an allowed range. */
function inAllowedRange(address: ipaddr.IPv4 | ipaddr.IPv6, ranges: readonly AllowedCidr[]): boolean {
  const forms: (ipaddr.IPv4 | ipaddr.IPv6)[] = [address];
  if (address.kind() === "ipv6") {
    const embedded = embeddedV4(address as ipaddr.IPv6);
    if (embedded) forms.push(embedded);
  }
  return forms.some((form) =>
    ranges.some(([base, bits]) => base.kind() === form.kind() && (form as ipaddr.IPv4).match(base as ipaddr.IPv4, bits)),
  );
}

export type AddressVerdict = { ok: true } | { ok: false; reason: string };

/**
 * Cloud metadata services (AWS, GCP, Azure, and AWS's IPv6 one): refused even with
 * allowPrivate. No intranet page lives there, and credentials do.
 */
const METADATA_ADDRESSES = new Set(["169.254.169.254", "fd00:ec2::254"]);

/** Ranges (ipaddr.js names) that allowPrivate opens; every other special range stays refused. */
const PRIVATE_V4 = new Set(["loopback", "private", "linkLocal", "carrierGradeNat"]);
const PRIVATE_V6 = new Set(["loopback", "uniqueLocal", "linkLocal"]);

/**
 * Whether the crawler may connect to `ip`. Public unicast only, unless allowPrivate opens the
 * private ranges; never unspecified (0.0.0.0 reaches the host itself on Linux), broadcast,
 * multicast, reserved/documentation/benchmarking ranges, or the cloud metadata addresses.
 * IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, SIIT `::ffff:0:a.b.c.d`,
 * NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:aabb:ccdd::`) are judged by the IPv4 address they
 * reach; Teredo (whose embedded address is obfuscated) is refused. Other IPv6 must be global
 * unicast (2000::/3). An address inside `allowCidrs` is allowed whatever its range, except the
 * metadata addresses, unspecified, broadcast and multicast. The reason names the address and its range: "blocked address 10.0.0.1 (private)".
 */
export function checkAddress(ip: string, policy: AddressPolicy): AddressVerdict {
  const text = ip.replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(text)) return { ok: false, reason: `not an IP address (${ip})` };
  const address = ipaddr.parse(text);
  const blocked = (range: string): AddressVerdict => ({ ok: false, reason: `blocked address ${text} (${label(range)})` });
  if (METADATA_ADDRESSES.has(address.toNormalizedString()) || METADATA_ADDRESSES.has(address.toString())) return blocked("cloud metadata service");
  if (policy.allowCidrs?.length && !isUnspecifiedOrMulticast(address)) {
    const embeddedMetadata = address.kind() === "ipv6" && METADATA_ADDRESSES.has(embeddedV4(address as ipaddr.IPv6)?.toString() ?? "");
    if (!embeddedMetadata && inAllowedRange(address, policy.allowCidrs)) return { ok: true };
  }
  if (address.kind() === "ipv4") return judgeV4(address as ipaddr.IPv4, policy, blocked);

  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedV4(v6);
  if (embedded) {
    if (METADATA_ADDRESSES.has(embedded.toString())) return blocked("cloud metadata service");
    return judgeV4(embedded, policy, (range) => blocked(`${label(v6.range())} ${embedded.toString()}, ${label(range)}`));
  }
  const range = v6.range();
  if (range === "unicast") return v6.match(GLOBAL_UNICAST) ? { ok: true } : blocked("reserved");
  if (policy.allowPrivate && PRIVATE_V6.has(range)) return { ok: true };
  return blocked(range);
}

/** 0.0.0.0 reaches the host itself and multicast is no page: no allow-list opens them. */
function isUnspecifiedOrMulticast(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  const range = address.range();
  return range === "unspecified" || range === "multicast" || range === "broadcast";
}

/** Words for ipaddr.js's range names, for the reasons people read. */
const RANGE_LABELS: Record<string, string> = {
  carrierGradeNat: "carrier-grade NAT",
  linkLocal: "link-local",
  uniqueLocal: "unique-local",
  ipv4Mapped: "IPv4-mapped",
  rfc6145: "IPv4-translated",
  rfc6052: "NAT64",
  deprecatedSiteLocal: "site-local",
};

const label = (range: string) => RANGE_LABELS[range] ?? range;

const GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");
const NAT64_WELL_KNOWN = ipaddr.parseCIDR("64:ff9b::/96");

function judgeV4(address: ipaddr.IPv4, policy: AddressPolicy, blocked: (range: string) => AddressVerdict): AddressVerdict {
  const range = address.range();
  if (range === "unicast") return { ok: true };
  if (policy.allowPrivate && PRIVATE_V4.has(range)) return { ok: true };
  return blocked(range);
}

/** The IPv4 address an IPv6 one reaches through a translation or tunnel, if any. */
function embeddedV4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const range = address.range();
  const p = address.parts;
  const fromWords = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (range === "ipv4Mapped" || range === "rfc6145") return fromWords(p[6]!, p[7]!);
  // Only the well-known NAT64 prefix: the local-use one (64:ff9b:1::/48) may embed anywhere.
  if (range === "rfc6052" && address.match(NAT64_WELL_KNOWN)) return fromWords(p[6]!, p[7]!);
  if (range === "6to4") return fromWords(p[1]!, p[2]!);
  return null;
}
