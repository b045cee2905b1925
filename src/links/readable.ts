/**
 * The reading view of a saved page: its article found by Mozilla's Readability (or, when that
 * finds nothing, the body without its navigation and chrome), as plain text with paragraph
 * breaks and as sanitized HTML; and the offline snapshot, one self-contained HTML document
 * that shows it without touching the network or running anything.
 *
 * The sanitizer is an allowlist that writes its own markup: only the elements and attributes
 * named below survive, every URL is made absolute and must be http(s) (or mailto:, or an inline
 * raster image), and text and attribute values are escaped here, not by a DOM serializer.
 */
import { Readability } from "@mozilla/readability";
import { absoluteHttpUrl, baseUrlOf, clip, collapseSpace, deeperThan, imageSource, parsePage } from "./html-document.ts";
import type { PageMetadata } from "./page-metadata.ts";

export interface ReadablePage {
  title: string | null;
  byline: string | null;
  /** Plain text: one paragraph (heading, list item, caption...) per block, blank lines between. */
  text: string;
  /** The article as sanitized HTML (a fragment), URLs absolute. */
  html: string;
  excerpt: string | null;
  /** Characters of `text`. */
  length: number;
  /** Who found the article: Readability, or the chrome-stripped body when it found nothing. */
  method: "readability" | "fallback";
}

export interface ReadableOptions {
  /**
   * Pages with more elements than this are not given to Readability (it scores every one, and
   * a huge page holds a pipeline worker for seconds); the fallback reads them. 60,000 by default.
   */
  maxElements?: number;
}

/**
 * Nesting beyond which Readability is not used (its time grows with the square of the depth:
 * 0.3 s at 400 levels, minutes at 5,000) and the sanitizer and text walks flatten what lies
 * deeper to its text. Real pages stay far below it; only a hostile one gets near.
 */
const MAX_DEPTH = 400;

/**
 * Most characters of an article's sanitized HTML and of its plain text: what lies past them is
 * left out (the markup stays well formed). A hostile 2 MB page of links became 8 MB of markup,
 * which every later step (the reading view, chunks, the snapshot) paid for again; real articles
 * are a few hundred KB at most.
 */
export const ARTICLE_MAX_HTML_CHARS = 2_000_000;
export const ARTICLE_MAX_TEXT_CHARS = 1_000_000;

/** The readable article of the page `html`, fetched (after redirects) from `url`. */
export function readablePage(html: string, url: string, { maxElements = 60_000 }: ReadableOptions = {}): ReadablePage {
  const document = parsePage(html);
  const base = baseUrlOf(document, url);
  // Readability makes links absolute against these; linkedom documents have neither.
  Object.defineProperty(document, "baseURI", { value: base });
  Object.defineProperty(document, "documentURI", { value: url });
  let article: ReturnType<Readability<Element>["parse"]> = null;
  // Counted here: Readability's own maxElemsToParse counts with getElementsByTagName("*"),
  // which linkedom answers with nothing.
  const readabilityFits = document.querySelectorAll("*").length <= maxElements && !deeperThan(document.documentElement, MAX_DEPTH);
  if (readabilityFits) {
    try {
      article = new Readability<Element>(document, { serializer: (node) => node as Element }).parse();
    } catch {
      // A page its heuristics choke on: the fallback reads it.
    }
  }
  const content = article?.content;
  if (content) {
    const text = plainText(content);
    if (text !== "") {
      return {
        title: field(article?.title),
        byline: field(article?.byline),
        text,
        html: sanitize(content, base),
        excerpt: field(article?.excerpt) ?? excerptOf(text),
        length: text.length,
        method: "readability",
      };
    }
  }
  // Readability changes the document it reads; one it never saw serves the fallback as it is
  // (parsing a hostile page again held a second DOM of it).
  return fallbackPage(readabilityFits ? parsePage(html) : document, url);
}

/** Chrome a page's body carries around its content; the fallback drops it. */
const CHROME_SELECTOR = [
  "nav", "header", "footer", "aside", "script", "style", "noscript", "template", "form", "iframe", "dialog",
  "[role=navigation]", "[role=banner]", "[role=contentinfo]", "[role=complementary]", "[role=dialog]",
  "[aria-hidden=true]", "[hidden]",
].join(", ");

/** The body's text and markup without its chrome, for pages Readability finds nothing in. */
function fallbackPage(document: Document, url: string): ReadablePage {
  const base = baseUrlOf(document, url);
  for (const element of [...document.body.querySelectorAll(CHROME_SELECTOR)]) element.remove();
  const text = plainText(document.body);
  return {
    title: field(document.querySelector("title")?.textContent ?? document.querySelector("h1")?.textContent),
    byline: null,
    text,
    html: sanitize(document.body, base),
    excerpt: excerptOf(text),
    length: text.length,
    method: "fallback",
  };
}

const field = (value: string | null | undefined) => {
  const text = collapseSpace(value ?? "");
  return text === "" ? null : clip(text, 500);
};

/** The first paragraph, shortened. */
const excerptOf = (text: string) => (text === "" ? null : clip(text.split("\n\n")[0]!, 300));

/** Elements dropped with everything inside them: active content, forms, and what is not text. */
const DROPPED = new Set([
  "SCRIPT", "STYLE", "IFRAME", "FRAME", "FRAMESET", "OBJECT", "EMBED", "APPLET", "PARAM", "FORM", "INPUT",
  "BUTTON", "SELECT", "OPTION", "TEXTAREA", "NOSCRIPT", "TEMPLATE", "SVG", "MATH", "CANVAS", "AUDIO", "VIDEO",
  "SOURCE", "TRACK", "LINK", "META", "BASE", "TITLE", "HEAD", "DIALOG", "PORTAL", "SLOT",
]);

/** Elements kept, each with the attributes it may keep. The others are unwrapped: their content stays. */
const ALLOWED: Record<string, readonly string[]> = {
  P: [], DIV: [], SECTION: [], ARTICLE: [], SPAN: [], BR: [], HR: [],
  H1: [], H2: [], H3: [], H4: [], H5: [], H6: [],
  A: ["href", "title"], IMG: ["src", "alt", "title", "width", "height"],
  UL: [], OL: ["start", "reversed"], LI: [], DL: [], DT: [], DD: [],
  BLOCKQUOTE: ["cite"], Q: ["cite"], PRE: [], CODE: [], KBD: [], SAMP: [], VAR: [],
  EM: [], STRONG: [], B: [], I: [], U: [], S: [], SMALL: [], SUB: [], SUP: [], MARK: [], DEL: [], INS: [], ABBR: ["title"], CITE: [], DFN: [],
  TIME: ["datetime"], FIGURE: [], FIGCAPTION: [], DETAILS: [], SUMMARY: [],
  TABLE: [], CAPTION: [], THEAD: [], TBODY: [], TFOOT: [], TR: [], TH: ["colspan", "rowspan", "scope"], TD: ["colspan", "rowspan"],
};

const VOID = new Set(["BR", "HR", "IMG"]);

/** Inline images the snapshot may show: raster only (an SVG data: URL is a script carrier). */
const INLINE_IMAGE = /^data:image\/(png|jpeg|gif|webp|avif);base64,[a-z0-9+/=\s]+$/i;

export interface SanitizeOptions {
  /**
   * What an <img> shows: given its absolute URL (or inline data: URL), the src to write, or
   * null to replace the image by a link to it. By default every image keeps its URL.
   */
  imageSrc?: (url: string) => string | null;
}

/**
 * `root`'s content as allowlisted HTML (see ALLOWED, DROPPED): no script, style, frames,
 * plugins or forms, no event handler or style attribute, no javascript: or other non-http(s)
 * URL, no tracking pixels. Links open without referrer or opener.
 */
export function sanitize(root: Node, base: string, options: SanitizeOptions = {}): string {
  const out: string[] = [];
  let written = 0;
  const push = (markup: string) => {
    out.push(markup);
    written += markup.length;
  };
  const walk = (node: Node, depth: number) => {
    // Past the cap nothing more is opened; the elements open so far are still closed.
    if (written >= ARTICLE_MAX_HTML_CHARS) return;
    if (node.nodeType === 3) {
      push(escapeText(clip(node.textContent ?? "", ARTICLE_MAX_HTML_CHARS - written)));
      return;
    }
    if (node.nodeType !== 1) return; // comments, processing instructions
    const element = node as Element;
    const tag = element.tagName.toUpperCase();
    if (DROPPED.has(tag)) return;
    if (depth > MAX_DEPTH) {
      push(escapeText(plainText(element)));
      return;
    }
    const children = () => element.childNodes.forEach((child) => walk(child, depth + 1));
    const allowed = ALLOWED[tag];
    if (!allowed) {
      children();
      return;
    }
    if (tag === "IMG") {
      push(imageMarkup(element, base, options));
      return;
    }
    const attributes = keptAttributes(element, allowed, base);
    if (attributes === null) {
      children(); // an <a> whose href was refused: its text stays
      return;
    }
    const name = tag.toLowerCase();
    push(`<${name}${attributes}>`);
    if (VOID.has(tag)) return;
    children();
    push(`</${name}>`);
  };
  root.childNodes.forEach((child) => walk(child, 1));
  return out.join("").trim();
}

/** The attributes written for `element` (" a=\"b\""), or null when a link must lose its tag. */
function keptAttributes(element: Element, allowed: readonly string[], base: string): string | null {
  let written = "";
  let hasHref = false;
  for (const name of allowed) {
    const value = element.getAttribute(name);
    if (value === null) continue;
    if (name === "href" || name === "cite") {
      const url = linkUrl(value, base);
      if (url === null) {
        if (name === "href") return null;
        continue;
      }
      hasHref ||= name === "href";
      written += ` ${name}="${escapeAttribute(url)}"`;
    } else if (name === "colspan" || name === "rowspan" || name === "start" || name === "width" || name === "height") {
      if (/^\d{1,5}$/.test(value.trim())) written += ` ${name}="${value.trim()}"`;
    } else if (name === "reversed") written += " reversed";
    else written += ` ${name}="${escapeAttribute(clip(value, 1000))}"`;
  }
  if (element.tagName.toUpperCase() === "A") {
    if (!hasHref) return null;
    written += ' rel="noopener noreferrer nofollow"';
  }
  return written;
}

function linkUrl(value: string, base: string): string | null {
  if (/^\s*mailto:/i.test(value)) return value.trim();
  return absoluteHttpUrl(value, base);
}

/** An <img> with a usable source, a link to it when the snapshot cannot show it, or nothing. */
function imageMarkup(img: Element, base: string, options: SanitizeOptions): string {
  const width = Number(img.getAttribute("width"));
  const height = Number(img.getAttribute("height"));
  if ((width > 0 && width <= 2) || (height > 0 && height <= 2)) return ""; // tracking pixel
  const raw = (imageSource(img) ?? "").trim();
  const url = INLINE_IMAGE.test(raw) ? raw : absoluteHttpUrl(raw, base);
  if (!url) return "";
  const src = options.imageSrc ? options.imageSrc(url) : url;
  const alt = collapseSpace(img.getAttribute("alt") ?? "");
  if (src === null || !(INLINE_IMAGE.test(src) || absoluteHttpUrl(src, base) === src)) {
    if (url.startsWith("data:")) return "";
    return `<span class="missing-image">[image: <a href="${escapeAttribute(url)}" rel="noopener noreferrer nofollow">${escapeText(alt || "open")}</a>]</span>`;
  }
  const attributes = keptAttributes(img, ["alt", "title", "width", "height"], base) ?? "";
  return `<img src="${escapeAttribute(src)}"${attributes}>`;
}

const escapeText = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const escapeAttribute = (text: string) => escapeText(text).replace(/"/g, "&quot;");

/** Elements that end a line of text: each becomes its own paragraph of the plain text. */
const BLOCKS = new Set([
  "P", "DIV", "SECTION", "ARTICLE", "MAIN", "HEADER", "FOOTER", "ASIDE", "NAV", "H1", "H2", "H3", "H4", "H5", "H6",
  "UL", "OL", "LI", "DL", "DT", "DD", "BLOCKQUOTE", "PRE", "FIGURE", "FIGCAPTION", "TABLE", "CAPTION", "TR",
  "HR", "ADDRESS", "DETAILS", "SUMMARY", "CENTER", "FIELDSET", "LEGEND", "BODY",
]);

/**
 * `root`'s text with the page's structure kept as line breaks: a paragraph per block element,
 * separated by a blank line; <br> a line break; table cells separated by a tab; whitespace
 * inside a paragraph collapsed, except in <pre>. Walks with its own stack, so any depth is fine.
 */
export function plainText(root: Node): string {
  const paragraphs: string[] = [];
  let current = "";
  const flush = (preformatted: boolean) => {
    const text = preformatted
      ? current.replace(/^\n+|\s+$/g, "")
      : current
          .split("\n")
          .map((line) => line.replace(/[ \t\r\f\v\u00a0]+/g, " ").trim())
          .join("\n")
          .replace(/\n{2,}/g, "\n")
          .trim();
    if (text !== "") {
      paragraphs.push(text);
      length += text.length + 2;
    }
    current = "";
  };
  // Work items: a node to enter (with whether it is inside <pre>), or the end of a block.
  type Step = { node: Node; inPre: boolean } | { endOf: "block" | "pre" };
  const steps: Step[] = [{ node: root, inPre: false }];
  let length = 0;
  while (steps.length > 0 && length + current.length < ARTICLE_MAX_TEXT_CHARS) {
    const step = steps.pop()!;
    if ("endOf" in step) {
      flush(step.endOf === "pre");
      continue;
    }
    const { node, inPre } = step;
    if (node.nodeType === 3) {
      const data = node.textContent ?? "";
      current += inPre ? data : data.replace(/\s+/g, " ");
      continue;
    }
    if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) continue;
    const tag = node.nodeType === 1 ? (node as Element).tagName.toUpperCase() : "";
    if (DROPPED.has(tag) || tag === "IMG") continue;
    if (tag === "BR") {
      current += "\n";
      continue;
    }
    if ((tag === "TD" || tag === "TH") && current !== "") current += "\t";
    const pre = tag === "PRE";
    const block = pre || BLOCKS.has(tag);
    if (block) flush(false);
    if (block) steps.push({ endOf: pre ? "pre" : "block" });
    const children = [...node.childNodes];
    for (let i = children.length - 1; i >= 0; i--) steps.push({ node: children[i]!, inPre: inPre || pre });
  }
  flush(false);
  const text = paragraphs.join("\n\n");
  return text.length > ARTICLE_MAX_TEXT_CHARS ? text.slice(0, ARTICLE_MAX_TEXT_CHARS) : text;
}

/** The one policy of every snapshot: nothing loads, nothing runs, only its own styles and inline images. */
export const SNAPSHOT_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

export interface SnapshotOptions {
  /** Inline copies of the article's images: absolute URL → data: URL. Images not in it become links. */
  images?: ReadonlyMap<string, string>;
  /** When the page was saved (ISO 8601), shown under the source link. */
  savedAt?: string;
}

/**
 * The offline reading copy: one UTF-8 HTML document holding the readable article, its title,
 * site, byline and date, and a link to the source. A Content-Security-Policy meta tag lets it
 * load nothing (images only as data: URLs, given in `options.images`), run no script and
 * submit no form; links are plain navigation. Serve it with the same policy as a header (and
 * `sandbox`) too: a meta CSP cannot forbid framing.
 */
export function snapshotHtml(
  readable: Pick<ReadablePage, "html" | "title" | "byline">,
  meta: Partial<Pick<PageMetadata, "title" | "siteName" | "author" | "publishedAt" | "language">>,
  url: string,
  options: SnapshotOptions = {},
): string {
  const title = meta.title ?? readable.title ?? url;
  const byline = readable.byline ?? meta.author ?? null;
  // The article is sanitized again, with the snapshot's image rule: it may come from storage,
  // written by an older sanitizer, and its images must be inline or become links.
  const body = parsePage(`<body>${readable.html}</body>`).body;
  dropRepeatedTitle(body, title);
  const content = sanitize(body, url, { imageSrc: (src) => (src.startsWith("data:") ? src : (options.images?.get(src) ?? null)) });
  const source = absoluteHttpUrl(url, url);
  const details = [
    meta.siteName ? `<span class="site">${escapeText(meta.siteName)}</span>` : "",
    byline ? `<span class="byline">${escapeText(byline)}</span>` : "",
    meta.publishedAt ? `<time datetime="${escapeAttribute(meta.publishedAt)}">${escapeText(meta.publishedAt.slice(0, 10))}</time>` : "",
  ].filter(Boolean);
  const lang = meta.language && /^[a-z]{2,3}(-[a-z0-9]{1,8})*$/i.test(meta.language) ? ` lang="${meta.language}"` : "";
  return `<!DOCTYPE html>
<html${lang}>
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${SNAPSHOT_CSP}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeText(title)}</title>
<style>${SNAPSHOT_CSS}</style>
</head>
<body>
<article>
<header>
<h1>${escapeText(title)}</h1>
${details.length > 0 ? `<p class="details">${details.join(" · ")}</p>\n` : ""}<p class="source">Saved from ${source ? `<a href="${escapeAttribute(source)}" rel="noopener noreferrer nofollow">${escapeText(source)}</a>` : escapeText(url)}${options.savedAt ? ` on <time datetime="${escapeAttribute(options.savedAt)}">${escapeText(options.savedAt.slice(0, 10))}</time>` : ""}</p>
</header>
<div class="content">
${content}
</div>
</article>
</body>
</html>
`;
}

/** The article's own first heading, when it repeats the title the snapshot's header shows. */
function dropRepeatedTitle(body: Element, title: string): void {
  let first = body.firstElementChild;
  // Readability wraps the article in a div or two.
  while (first && (first.tagName === "DIV" || first.tagName === "ARTICLE" || first.tagName === "SECTION") && first.firstElementChild) first = first.firstElementChild;
  if (first && /^H[1-3]$/.test(first.tagName) && collapseSpace(first.textContent ?? "").toLowerCase() === collapseSpace(title).toLowerCase()) first.remove();
}

const SNAPSHOT_CSS = `
:root { color-scheme: light dark; --fg: #1d1d1f; --bg: #fdfdfb; --muted: #6b6b70; --rule: #ddd; --link: #1a5fb4; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8e8e6; --bg: #1b1b1d; --muted: #a0a0a6; --rule: #3a3a3e; --link: #8fb8ff; } }
html { background: var(--bg); color: var(--fg); }
body { margin: 0 auto; max-width: 42rem; padding: 2rem 1.25rem 4rem; font: 1.125rem/1.65 Georgia, "Times New Roman", serif; overflow-wrap: break-word; }
header { border-bottom: 1px solid var(--rule); margin-bottom: 1.5rem; padding-bottom: 1rem; }
h1 { font-size: 2rem; line-height: 1.2; margin: 0 0 .5rem; }
h2, h3, h4 { line-height: 1.3; margin-top: 2rem; }
.details, .source { color: var(--muted); font: .875rem/1.5 system-ui, sans-serif; margin: .25rem 0; }
a { color: var(--link); }
img { max-width: 100%; height: auto; display: block; margin: 1rem auto; }
figure { margin: 1.5rem 0; }
figcaption { color: var(--muted); font-size: .875rem; }
blockquote { border-left: 3px solid var(--rule); margin-left: 0; padding-left: 1rem; color: var(--muted); }
pre { overflow-x: auto; padding: .75rem; border: 1px solid var(--rule); font-size: .875rem; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; }
table { border-collapse: collapse; display: block; overflow-x: auto; }
th, td { border: 1px solid var(--rule); padding: .25rem .5rem; }
.missing-image { color: var(--muted); font-size: .875rem; }
`.trim();
