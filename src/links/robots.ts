/**
 * robots.txt as RFC 9309 reads it: the group of the crawler's product token (else the `*`
 * group), its allow and disallow rules with `*` and `$` patterns, the longest match deciding and
 * allow winning a tie. Pure: fetching the file, and what an unreachable one means, is the
 * crawler's (link-fetcher.ts).
 */

export interface RobotsRules {
  /** Whether `pathAndQuery` ("/a/b?c=1") may be fetched. */
  allows(pathAndQuery: string): boolean;
}

interface Rule {
  allow: boolean;
  pattern: string;
  regex: RegExp;
}

/** Every path is allowed: no robots.txt (4xx), or one that says nothing about us. */
export const ALLOW_ALL: RobotsRules = { allows: () => true };

/** The product token of a User-Agent header: "Mediabox/1.0 (...)" → "mediabox". */
export function productToken(userAgent: string): string {
  return (userAgent.trim().split(/[\s/]/)[0] ?? "").toLowerCase();
}

/** The rules of `text` for the crawler whose product token is `token` (lowercase). */
export function parseRobots(text: string, token: string): RobotsRules {
  const groups: { agents: string[]; rules: Rule[] }[] = [];
  let current: { agents: string[]; rules: Rule[] } | null = null;
  let lastWasAgent = false;
  // RFC 9309 asks crawlers to read at least 500 KiB; the fetch caps the bytes already.
  for (const rawLine of text.split(/\r\n|\r|\n/)) {
    const line = rawLine.replace(/#.*$/, "").trim();
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === "user-agent") {
      if (!current || !lastWasAgent) groups.push((current = { agents: [], rules: [] }));
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
    } else if ((key === "allow" || key === "disallow") && current) {
      lastWasAgent = false;
      // An empty Disallow allows everything; it adds no rule.
      if (value !== "") current.rules.push({ allow: key === "allow", pattern: value, regex: patternRegex(value) });
    } else {
      lastWasAgent = false;
    }
  }
  const own = groups.filter((g) => g.agents.some((agent) => agent !== "*" && token !== "" && token.includes(agent)));
  const chosen = own.length ? own : groups.filter((g) => g.agents.includes("*"));
  const rules = chosen.flatMap((g) => g.rules);
  if (!rules.length) return ALLOW_ALL;
  return {
    allows(pathAndQuery: string) {
      let best: Rule | null = null;
      for (const rule of rules) {
        if (!rule.regex.test(pathAndQuery)) continue;
        if (!best || rule.pattern.length > best.pattern.length || (rule.pattern.length === best.pattern.length && rule.allow)) best = rule;
      }
      return best ? best.allow : true;
    },
  };
}

/** A robots path pattern as an anchored regex: `*` any characters, a final `$` the end. */
function patternRegex(pattern: string): RegExp {
  const anchored = pattern.endsWith("$");
  const body = (anchored ? pattern.slice(0, -1) : pattern)
    .split("*")
    .map((part) => encodePath(part).replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}${anchored ? "$" : ""}`);
}

/** Patterns compare with the URL's percent-encoded form: encode what a URL would encode, keep existing escapes. */
function encodePath(text: string): string {
  return text.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/?%]/g, (c) => encodeURIComponent(c));
}
