/**
 * The crawler's side of the network, per server (`ctx.links`): the fetch policy built from the
 * settings (caps, timeout, allowed ranges and ports, user agent), politeness (at most N fetches
 * at once per organization and host; robots.txt asked once per host per crawl and obeyed), and
 * a crawl session that fetches each resource of one link at most once.
 */
import { egressPolicy } from "../net/egress-policy.ts";
import type { Config } from "../config.ts";
import { KeyedLimiter, type TaskLimiter } from "../keyed-limiter.ts";
import { type AcceptKind, type FetchedImage, type FetchedPage, type FetchOptions, fetchResource, LinkFetchError } from "./fetch-page.ts";
import { ALLOW_ALL, parseRobots, productToken, type RobotsRules } from "./robots.ts";

/** RFC 9309 asks crawlers to read at least 500 KiB of a robots.txt. */
const ROBOTS_MAX_BYTES = 512 * 1024;

/** Whether a failed fetch may succeed if tried again later (the job retries only these): 408, 429 and 5xx answers too. */
export function isTransient(err: LinkFetchError): boolean {
  if (err.kind === "http-status") return (err.status ?? 0) >= 500 || err.status === 408 || err.status === 429;
  return err.kind === "timeout" || err.kind === "connect" || err.kind === "dns";
}

export class LinkFetcher {
  /** `limiter`: politeness per organization and host; this process's own count unless given one that holds across processes. */
  constructor(
    private readonly config: Config,
    private readonly limiter: TaskLimiter = new KeyedLimiter(config.linkDomainConcurrency),
  ) {}

  /** The fetches of one crawl of one link, cancelled by `signal` (or by the signal it names at the time of each fetch: a crawl stage's). */
  session(orgId: string, signal: AbortSignal | (() => AbortSignal)): CrawlSession {
    return new CrawlSession(this.config, this.limiter, orgId, signal);
  }
}

/** Robots failures that mean "no rules to read", not "the host is unwell". */
const NO_RULES = new Set(["wrong-type", "blocked", "invalid-url", "redirects"]);

const limiterKey = (orgId: string, host: string) => `${orgId} ${host.toLowerCase()}`;

/**
 * One crawl: robots.txt rules by origin and images by URL are kept for its life, so the page's
 * icon, snapshot and extracted images never ask a host twice for the same thing.
 */
export class CrawlSession {
  private readonly robots = new Map<string, Promise<RobotsRules>>();
  private readonly images = new Map<string, Promise<FetchedImage>>();

  constructor(
    private readonly config: Config,
    private readonly limiter: TaskLimiter,
    private readonly orgId: string,
    private readonly signal: AbortSignal | (() => AbortSignal),
  ) {}

  page(url: string): Promise<FetchedPage> {
    return this.fetch(url, "html", this.config.linkMaxPageBytes) as Promise<FetchedPage>;
  }

  /** An image or icon, fetched once per crawl whoever asks. */
  image(url: string, accept: "image" | "icon" = "image"): Promise<FetchedImage> {
    let found = this.images.get(url);
    if (!found) {
      found = this.fetch(url, accept, this.config.linkMaxImageBytes) as Promise<FetchedImage>;
      this.images.set(url, found);
      // A rejection here is the caller's to see; the cache must not report it as unhandled.
      found.catch(() => {});
    }
    return found;
  }

  private options(accept: AcceptKind, maxBytes: number): FetchOptions {
    const { config } = this;
    return {
      accept,
      maxBytes,
      timeoutMs: config.linkTimeoutSeconds * 1000,
      maxRedirects: 5,
      egress: egressPolicy(config, "links"),
      userAgent: config.linkUserAgent,
      signal: typeof this.signal === "function" ? this.signal() : this.signal,
    };
  }

  private async fetch(url: string, accept: AcceptKind, maxBytes: number): Promise<FetchedPage | FetchedImage> {
    const target = new URL(url);
    if (this.config.linkRobots) {
      const rules = await this.rulesOf(target);
      if (!rules.allows(`${target.pathname}${target.search}`)) {
        throw new LinkFetchError("blocked", `robots.txt of ${target.host} disallows ${target.pathname} for ${productToken(this.config.linkUserAgent) || "this crawler"}`, url);
      }
    }
    return this.limiter.run(limiterKey(this.orgId, target.host), () => fetchResource(url, this.options(accept, maxBytes)));
  }

  private rulesOf(target: URL): Promise<RobotsRules> {
    let rules = this.robots.get(target.origin);
    if (!rules) {
      rules = this.readRobots(target);
      this.robots.set(target.origin, rules);
      rules.catch(() => {});
    }
    return rules;
  }

  /**
   * A missing robots.txt (any 4xx) or one that is not text allows everything (RFC 9309 §2.3.1.3),
   * as does one the policy will not let us read (an address or port refused, a redirect away):
   * the page's own fetch then meets the same policy and reports it for the page. A server error
   * or an unreachable host fails the fetch like the page's own would (retried when transient),
   * rather than crawling against rules we could not read.
   */
  private async readRobots(target: URL): Promise<RobotsRules> {
    const url = new URL("/robots.txt", target.origin).href;
    try {
      const file = await this.limiter.run(limiterKey(this.orgId, target.host), () =>
        fetchResource(url, this.options("text", Math.min(ROBOTS_MAX_BYTES, this.config.linkMaxPageBytes)) as FetchOptions & { accept: "text" }),
      );
      return parseRobots(file.text, productToken(this.config.linkUserAgent));
    } catch (err) {
      if (err instanceof LinkFetchError && ((err.kind === "http-status" && (err.status ?? 0) < 500) || NO_RULES.has(err.kind))) return ALLOW_ALL;
      throw err;
    }
  }
}
