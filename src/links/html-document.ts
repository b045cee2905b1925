/**
 * Turning a fetched page's text into a DOM the link modules can query. linkedom is a lax
 * parser, not the HTML5 tree builder: it makes no implied <html>, <head> or <body>, so a
 * minified page that omits them ("<title>x</title><p>...") would have a <title> as its root
 * and an empty body. `parsePage` gives every page the shape browsers would: one <html> with a
 * <head> and a <body>. Also the small text helpers the metadata and readable modules share.
 */
import { parseHTML } from "linkedom";

/** Elements that belong in <head> when a page leaves them loose under <html>. */
const HEAD_ELEMENTS = new Set(["TITLE", "META", "LINK", "BASE"]);

/**
 * Start tags parsed at most; markup after the one past it is left out. A DOM costs the
 * page-reading thread ~400 bytes an element, and a 2 MB page of `<b><i>` is 700,000 of them:
 * reading it peaked at 800 MB. Real pages hold a few thousand (a long encyclopedia article
 * ~50,000).
 */
export const MAX_PARSED_TAGS = 100_000;

/** `html` up to its MAX_PARSED_TAGS-th start tag (all of it when it has fewer). */
export function withinTagLimit(html: string, limit = MAX_PARSED_TAGS): string {
  let tags = 0;
  for (let at = html.indexOf("<"); at >= 0; at = html.indexOf("<", at + 1)) {
    const next = html.charCodeAt(at + 1) | 0x20; // lower case
    if (next >= 0x61 && next <= 0x7a && ++tags > limit) return html.slice(0, at);
  }
  return html;
}

/** A document with `documentElement`, `head` and `body`, whatever the markup omitted (at most MAX_PARSED_TAGS elements of it). */
export function parsePage(html: string): Document {
  const text = withinTagLimit(html.replace(/^\uFEFF/, ""));
  let document = parseHTML(text).document as unknown as Document;
  if (document.documentElement?.tagName !== "HTML") {
    // No <html> tag (or none first): wrap, so the parser has one root holding everything.
    document = parseHTML(`<!DOCTYPE html><html>${text.replace(/<!doctype[^>]*>/i, "")}</html>`).document as unknown as Document;
  }
  const root = document.documentElement;
  let head = childByTag(root, "HEAD");
  let body = childByTag(root, "BODY");
  if (!head) {
    head = document.createElement("head");
    root.insertBefore(head, root.firstChild);
  }
  if (!body) {
    body = document.createElement("body");
    root.appendChild(body);
  }
  moveBodyContentOutOfHead(head, body);
  // Loose children of <html>: metadata into <head>, the rest into <body> in document order
  // (before what <body> already holds when they came before it).
  const bodyAt = [...root.childNodes].indexOf(body);
  const firstInBody = body.firstChild;
  [...root.childNodes].forEach((node, index) => {
    if (node === head || node === body) return;
    if (node.nodeType === 1 && HEAD_ELEMENTS.has((node as Element).tagName)) head.appendChild(node);
    else if (index < bodyAt) body.insertBefore(node, firstInBody);
    else body.appendChild(node);
  });
  return document;
}

/** What may stay in <head>; the first other element (or text) starts the body, as in HTML5. */
const HEAD_CONTENT = new Set(["TITLE", "META", "LINK", "BASE", "STYLE", "SCRIPT", "NOSCRIPT", "TEMPLATE"]);

/** A page whose <head> is never closed ("<head><title>t</title><p>...") holds its body there. */
function moveBodyContentOutOfHead(head: Element, body: Element): void {
  const nodes = [...head.childNodes];
  const start = nodes.findIndex((node) =>
    node.nodeType === 1 ? !HEAD_CONTENT.has((node as Element).tagName) : node.nodeType === 3 && (node.textContent ?? "").trim() !== "",
  );
  if (start === -1) return;
  const firstInBody = body.firstChild;
  for (const node of nodes.slice(start)) body.insertBefore(node, firstInBody);
}

function childByTag(parent: Element, tag: string): Element | null {
  for (const child of parent.children) if (child.tagName === tag) return child;
  return null;
}

/**
 * Whether any element lies deeper than `limit` below `root`. Iterative: a hostile page nests
 * tens of thousands of elements, past the call stack a recursive walk would need.
 */
export function deeperThan(root: Element, limit: number): boolean {
  const stack: [Element, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [element, depth] = stack.pop()!;
    if (depth > limit) return true;
    for (const child of element.children) stack.push([child, depth + 1]);
  }
  return false;
}

/** Whitespace runs (including newlines and NBSP) collapsed to one space, ends trimmed. */
export const collapseSpace = (text: string) => text.replace(/[\s\u00a0]+/g, " ").trim();

/** `text` cut to `max` characters at most, with an ellipsis when it was cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}

/**
 * `href` resolved against `base`, when the result is an http(s) URL; null for javascript:,
 * data:, mailto: and the unparseable. The one place link URLs are made absolute.
 */
export function absoluteHttpUrl(href: string | null | undefined, base: string | URL): string | null {
  if (href == null) return null;
  const trimmed = href.trim();
  if (trimmed === "") return null;
  try {
    const url = new URL(trimmed, base);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * The URL relative links of the page resolve against: its <base href> when that is http(s),
 * else the URL the page was finally fetched from.
 */
export function baseUrlOf(document: Document, pageUrl: string): string {
  const base = document.querySelector("base[href]")?.getAttribute("href");
  return absoluteHttpUrl(base, pageUrl) ?? pageUrl;
}

/**
 * The address an <img> shows at its best: the widest srcset entry, else the address a lazy
 * loader keeps in a data attribute (its src is then a placeholder), else src. Raw, unresolved.
 */
export function imageSource(img: Element): string | null {
  const candidates = [
    largestInSrcset(img.getAttribute("srcset")),
    largestInSrcset(img.getAttribute("data-srcset")),
    img.getAttribute("data-src"),
    img.getAttribute("data-lazy-src"),
    img.getAttribute("data-original"),
    img.getAttribute("src"),
  ];
  return candidates.find((candidate) => candidate != null && candidate.trim() !== "" && !/^\s*data:/i.test(candidate)) ?? img.getAttribute("src");
}

/** The URL of the widest (or densest) entry of a srcset. */
function largestInSrcset(srcset: string | null): string | null {
  if (!srcset) return null;
  let best: { url: string; weight: number } | null = null;
  for (const entry of srcset.split(/,\s+/)) {
    const [url, descriptor = "1x"] = entry.trim().split(/\s+/);
    if (!url || url.startsWith("data:")) continue;
    const parsed = Number.parseFloat(descriptor);
    // A width (640w) outranks any density (2x): density-only sets have no widths to compare.
    const weight = Number.isFinite(parsed) ? parsed * (descriptor.endsWith("x") ? 1 : 1000) : 0;
    if (!best || weight > best.weight) best = { url, weight };
  }
  return best?.url ?? null;
}
