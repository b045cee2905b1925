/**
 * What a saved page says about itself: its Open Graph, Twitter and article meta tags and its
 * JSON-LD (kept, bounded, as `og_metadata`), and the fields read from them in one documented
 * order of preference each: title, description, site name, author, publication date,
 * language, canonical URL, and the ranked icon and image URLs the crawler should try to fetch.
 * Reads the HTML only; fetching the icons and images is the caller's (fetch-page.ts).
 */
import { absoluteHttpUrl, baseUrlOf, clip, collapseSpace, imageSource, parsePage } from "./html-document.ts";

export type JsonLd = Record<string, unknown>;

/**
 * Every `og:*`, `twitter:*` and `article:*` meta tag (by property or name), keyed as written
 * lowercased ("og:title"): a string, or an array when the page repeats the key (several
 * og:image). `json_ld` holds the parsed JSON-LD objects (top-level arrays flattened).
 */
export type OgMetadata = { [key: string]: string | string[] | JsonLd[]; json_ld: JsonLd[] };

export interface IconCandidate {
  url: string;
  /** The rel it was declared with, or "fallback" for /favicon.ico. */
  rel: string;
  /** The largest side its `sizes` declares, in pixels; null when not declared. */
  size: number | null;
  type: string | null;
}

export interface ImageCandidate {
  url: string;
  source: "og:image" | "twitter:image" | "json-ld" | "content";
  width: number | null;
  height: number | null;
  alt: string | null;
}

export interface PageMetadata {
  og_metadata: OgMetadata;
  title: string | null;
  description: string | null;
  siteName: string | null;
  author: string | null;
  /** ISO 8601 UTC instant. */
  publishedAt: string | null;
  /** BCP 47 tag ("en", "de-CH"). */
  language: string | null;
  canonicalUrl: string | null;
  /** Best first; the last is always the site's /favicon.ico (which may not exist). */
  iconCandidates: IconCandidate[];
  /** Best first: the page's declared share images, then large images of its main content. */
  imageCandidates: ImageCandidate[];
}

/** Bounds on what a page can make us keep: metadata is stored with every link. */
const LIMITS = {
  metaKeys: 200,
  metaValuesPerKey: 20,
  metaValueChars: 2_000,
  jsonLdScripts: 20,
  jsonLdScriptChars: 200_000,
  /** Serialized size of all kept JSON-LD objects together. */
  jsonLdTotalChars: 256_000,
  titleChars: 500,
  descriptionChars: 2_000,
  fieldChars: 300,
  imageCandidates: 30,
  contentImages: 20,
} as const;

/** The metadata of the page `html`, fetched (after redirects) from `pageUrl`. */
export function pageMetadata(html: string, pageUrl: string): PageMetadata {
  const document = parsePage(html);
  const base = baseUrlOf(document, pageUrl);
  const tags = metaTags(document);
  const jsonLd = readJsonLd(document);
  const ld = jsonLdNodes(jsonLd);
  const first = (...keys: string[]) => firstText(keys.map((key) => tags.get(key)?.[0]));
  const metaName = (name: string) => document.querySelector(`meta[name="${name}" i]`)?.getAttribute("content") ?? null;

  return {
    og_metadata: ogMetadata(tags, jsonLd),
    title: field(
      first("og:title", "twitter:title") ??
        firstText([ldString(ld.articles, "headline"), ldString(ld.all, "headline"), ldString(ld.articles, "name")]) ??
        document.querySelector("title")?.textContent ??
        document.querySelector("h1")?.textContent,
      LIMITS.titleChars,
    ),
    description: field(first("og:description", "twitter:description") ?? firstText([metaName("description"), ldString(ld.articles, "description")]), LIMITS.descriptionChars),
    siteName: field(first("og:site_name") ?? firstText([metaName("application-name"), ldString(ld.sites, "name"), ldPublisherName(ld.articles)]), LIMITS.fieldChars),
    author: field(firstText([metaName("author"), ldAuthorName(ld.articles), first("article:author")]), LIMITS.fieldChars),
    publishedAt: publishedAt(document, tags, ld.articles),
    language: language(document, tags, ld.all),
    canonicalUrl: absoluteHttpUrl(linkHref(document, "canonical"), base) ?? absoluteHttpUrl(first("og:url"), base),
    iconCandidates: iconCandidates(document, base, pageUrl),
    imageCandidates: imageCandidates(document, base, tags, ld.articles),
  };
}

/** Prefixes of the meta tags kept in og_metadata. */
const META_PREFIXES = ["og:", "twitter:", "article:"];

/** og/twitter/article meta tags in document order, key lowercased; values trimmed and bounded. */
function metaTags(document: Document): Map<string, string[]> {
  const tags = new Map<string, string[]>();
  for (const meta of document.querySelectorAll("meta[content]")) {
    // Open Graph says `property`; many sites write `name` (and Twitter's cards say `name`).
    const key = (meta.getAttribute("property") ?? meta.getAttribute("name") ?? "").trim().toLowerCase();
    if (key.length > 100 || !META_PREFIXES.some((prefix) => key.startsWith(prefix) && key.length > prefix.length)) continue;
    const value = clip((meta.getAttribute("content") ?? "").trim(), LIMITS.metaValueChars);
    if (value === "") continue;
    const values = tags.get(key);
    if (values) {
      if (values.length < LIMITS.metaValuesPerKey) values.push(value);
    } else if (tags.size < LIMITS.metaKeys) tags.set(key, [value]);
  }
  return tags;
}

function ogMetadata(tags: Map<string, string[]>, jsonLd: JsonLd[]): OgMetadata {
  const og: Record<string, string | string[]> = {};
  for (const [key, values] of tags) og[key] = values.length === 1 ? values[0]! : values;
  return { ...og, json_ld: jsonLd };
}

/**
 * The page's JSON-LD objects: each `application/ld+json` script parsed (a broken one skipped,
 * HTML comment and CDATA wrappers tolerated), top-level arrays flattened, kept while their
 * serialized total stays under the bound.
 */
function readJsonLd(document: Document): JsonLd[] {
  const objects: JsonLd[] = [];
  let budget: number = LIMITS.jsonLdTotalChars;
  const scripts = [...document.querySelectorAll("script")].filter((script) => /^application\/ld\+json\b/i.test((script.getAttribute("type") ?? "").trim()));
  for (const script of scripts.slice(0, LIMITS.jsonLdScripts)) {
    const raw = (script.textContent ?? "").trim();
    if (raw === "" || raw.length > LIMITS.jsonLdScriptChars) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.replace(/^\s*(<!--|<!\[CDATA\[)/, "").replace(/(-->|\]\]>)\s*$/, ""));
    } catch {
      continue;
    }
    for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
      if (!isObject(item)) continue;
      const size = JSON.stringify(item).length;
      if (size > budget) return objects;
      budget -= size;
      objects.push(item);
    }
  }
  return objects;
}

const isObject = (value: unknown): value is JsonLd => typeof value === "object" && value !== null && !Array.isArray(value);

/** schema.org types whose headline, dates and images are the page's own. */
const ARTICLE_TYPES = /^(Article|NewsArticle|BlogPosting|Blog|Report|ScholarlyArticle|TechArticle|AnalysisNewsArticle|OpinionNewsArticle|ReviewNewsArticle|LiveBlogPosting|SocialMediaPosting|Review|Recipe|HowTo|VideoObject|WebPage|ItemPage|AboutPage|CollectionPage|MediaObject|CreativeWork)$/;

/** The JSON-LD nodes worth reading: top-level objects and their @graph members, by role. */
function jsonLdNodes(objects: JsonLd[]): { all: JsonLd[]; articles: JsonLd[]; sites: JsonLd[] } {
  const all = objects.flatMap((object) => [object, ...(Array.isArray(object["@graph"]) ? object["@graph"].filter(isObject) : [])]);
  const hasType = (node: JsonLd, test: (type: string) => boolean) => [node["@type"]].flat().some((type) => typeof type === "string" && test(type));
  // Articles before web pages: a WebPage node's name is often the site's, not the story's.
  const articles = [...all.filter((node) => hasType(node, (type) => ARTICLE_TYPES.test(type) && !/Page$/.test(type))), ...all.filter((node) => hasType(node, (type) => /Page$/.test(type)))];
  const sites = all.filter((node) => hasType(node, (type) => type === "WebSite" || type === "Organization" || type === "NewsMediaOrganization"));
  return { all, articles, sites };
}

/** The first string value of `key` among `nodes`. */
function ldString(nodes: JsonLd[], key: string): string | null {
  for (const node of nodes) {
    const value = node[key];
    if (typeof value === "string" && value.trim() !== "") return value;
  }
  return null;
}

function ldPublisherName(nodes: JsonLd[]): string | null {
  for (const node of nodes) {
    const publisher = [node["publisher"]].flat()[0];
    if (isObject(publisher) && typeof publisher["name"] === "string") return publisher["name"];
  }
  return null;
}

function ldAuthorName(nodes: JsonLd[]): string | null {
  for (const node of nodes) {
    const names = [node["author"]]
      .flat()
      .map((author) => (typeof author === "string" ? author : isObject(author) && typeof author["name"] === "string" ? author["name"] : null))
      .filter((name): name is string => !!name && name.trim() !== "");
    if (names.length > 0) return names.join(", ");
  }
  return null;
}

/** The first of `values` with text in it. */
function firstText(values: (string | null | undefined)[]): string | null {
  for (const value of values) if (value != null && collapseSpace(value) !== "") return value;
  return null;
}

/** `value` as a one-line field of at most `max` characters; null when empty. */
function field(value: string | null | undefined, max: number): string | null {
  if (value == null) return null;
  const text = collapseSpace(value);
  return text === "" ? null : clip(text, max);
}

/** The href of the first <link> whose rel has the token `rel`. */
function linkHref(document: Document, rel: string): string | null {
  for (const link of document.querySelectorAll("link[rel][href]")) if (relTokens(link).includes(rel)) return link.getAttribute("href");
  return null;
}

const relTokens = (element: Element) => (element.getAttribute("rel") ?? "").toLowerCase().split(/\s+/).filter(Boolean);

/** Meta names (and itemprops) that carry a publication date, most specific first. */
const DATE_META_NAMES = ["datePublished", "article.published", "pubdate", "publishdate", "publish-date", "dc.date.issued", "dcterms.issued", "dc.date", "citation_publication_date", "parsely-pub-date", "sailthru.date", "date"];

/**
 * When the page was published: article:published_time, then JSON-LD datePublished, then the
 * date meta tags (DATE_META_NAMES), then a <time datetime> marked as the publication
 * (itemprop, pubdate), in the article, or anywhere. Each candidate must parse as a date.
 */
function publishedAt(document: Document, tags: Map<string, string[]>, articles: JsonLd[]): string | null {
  const candidates: (string | null | undefined)[] = [tags.get("article:published_time")?.[0], tags.get("og:published_time")?.[0], ldString(articles, "datePublished")];
  for (const name of DATE_META_NAMES) {
    candidates.push(document.querySelector(`meta[name="${name}" i], meta[itemprop="${name}" i], meta[property="${name}" i]`)?.getAttribute("content"));
  }
  for (const selector of ['time[itemprop="datePublished"]', "time[pubdate]", "article time[datetime]", "time[datetime]"]) {
    const time = document.querySelector(selector);
    candidates.push(time?.getAttribute("datetime") ?? (selector === "time[pubdate]" ? time?.textContent : null));
  }
  for (const candidate of candidates) {
    const iso = isoInstant(candidate);
    if (iso) return iso;
  }
  return null;
}

/** An ISO 8601 UTC instant for a date string, when it parses to a plausible year. */
function isoInstant(value: string | null | undefined): string | null {
  if (!value) return null;
  const ms = Date.parse(value.trim());
  if (!Number.isFinite(ms)) return null;
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  return year >= 1900 && year <= 2200 ? date.toISOString() : null;
}

/** <html lang>, then og:locale, then Content-Language, then JSON-LD inLanguage; a BCP 47 tag. */
function language(document: Document, tags: Map<string, string[]>, nodes: JsonLd[]): string | null {
  const candidates = [
    document.documentElement.getAttribute("lang"),
    document.documentElement.getAttribute("xml:lang"),
    tags.get("og:locale")?.[0],
    document.querySelector('meta[http-equiv="content-language" i]')?.getAttribute("content")?.split(",")[0],
    ldString(nodes, "inLanguage"),
  ];
  for (const candidate of candidates) {
    const tag = languageTag(candidate);
    if (tag) return tag;
  }
  return null;
}

/** "en_us" → "en-US", "DE" → "de"; null for what is not a language tag. */
function languageTag(value: string | null | undefined): string | null {
  const text = value?.trim().replace(/_/g, "-");
  if (!text || !/^[a-z]{2,3}(-[a-z0-9]{1,8})*$/i.test(text)) return null;
  const [lang, ...rest] = text.split("-");
  return [lang!.toLowerCase(), ...rest.map((part) => (part.length === 2 ? part.toUpperCase() : part.length === 4 ? part[0]!.toUpperCase() + part.slice(1).toLowerCase() : part.toLowerCase()))].join("-");
}

/**
 * The page's icons, best first: apple-touch-icon (largest first; undeclared counts as 180,
 * Apple's size), then rel="icon" by largest declared size (undeclared after sized), then
 * "shortcut icon", then /favicon.ico at the page's origin. SVG icons (and mask-icon, which is
 * SVG) are left out: fetchResource refuses SVG, which can carry script.
 */
function iconCandidates(document: Document, base: string, pageUrl: string): IconCandidate[] {
  const ranked: { candidate: IconCandidate; group: number; order: number }[] = [];
  for (const link of document.querySelectorAll("link[rel][href]")) {
    const rel = relTokens(link);
    const group = rel.includes("apple-touch-icon") || rel.includes("apple-touch-icon-precomposed") ? 0 : rel.includes("icon") ? (rel.includes("shortcut") ? 2 : 1) : -1;
    if (group === -1) continue;
    const url = absoluteHttpUrl(link.getAttribute("href"), base);
    const type = link.getAttribute("type")?.trim().toLowerCase() || null;
    if (!url || type === "image/svg+xml" || isSvgUrl(url)) continue;
    const size = largestSize(link.getAttribute("sizes")) ?? (group === 0 ? 180 : null);
    ranked.push({ candidate: { url, rel: rel.join(" "), size, type }, group, order: ranked.length });
  }
  ranked.sort((a, b) => a.group - b.group || (b.candidate.size ?? -1) - (a.candidate.size ?? -1) || a.order - b.order);
  const icons = ranked.map(({ candidate }) => candidate);
  icons.push({ url: new URL("/favicon.ico", pageUrl).href, rel: "fallback", size: null, type: null });
  return dedupe(icons);
}

/** "16x16 32x32" → 32; null for "any" or nothing parseable. */
function largestSize(sizes: string | null): number | null {
  let largest: number | null = null;
  for (const match of (sizes ?? "").matchAll(/(\d+)\s*[xX×]\s*(\d+)/g)) {
    const side = Math.max(Number(match[1]), Number(match[2]));
    if (largest === null || side > largest) largest = side;
  }
  return largest;
}

const isSvgUrl = (url: string) => /\.svgz?$/i.test(new URL(url).pathname);

/** Images inside these are chrome, not content. */
const CHROME = "nav, header, footer, aside, [role=navigation], [role=banner], [role=contentinfo], [role=complementary]";

/**
 * The images worth keeping, best first: og:image (its url, secure_url; with og:image:width and
 * height), twitter:image, JSON-LD image and thumbnailUrl, then the large <img> of the main
 * content. Absolute http(s) URLs only (data: skipped), deduplicated; tracking pixels (a side of
 * 2 px or less), small images (both sides under 100 px: icons, avatars), SVG and sprites left out.
 */
function imageCandidates(document: Document, base: string, tags: Map<string, string[]>, articles: JsonLd[]): ImageCandidate[] {
  const found: ImageCandidate[] = [];
  const add = (source: ImageCandidate["source"], href: string | null | undefined, width: number | null = null, height: number | null = null, alt: string | null = null) => {
    const url = absoluteHttpUrl(href, base);
    if (!url || isSvgUrl(url) || /sprite/i.test(url)) return;
    if ((width !== null && width <= 2) || (height !== null && height <= 2)) return;
    found.push({ url, source, width, height, alt: alt ? clip(collapseSpace(alt), LIMITS.fieldChars) || null : null });
  };

  for (const candidate of ogImages(document, base)) found.push(candidate);
  for (const key of ["twitter:image", "twitter:image:src"]) for (const value of tags.get(key) ?? []) add("twitter:image", value, null, null, tags.get("twitter:image:alt")?.[0] ?? null);
  for (const node of articles) {
    for (const image of [node["image"], node["thumbnailUrl"]].flat()) {
      if (typeof image === "string") add("json-ld", image);
      else if (isObject(image)) add("json-ld", stringOf(image["url"]) ?? stringOf(image["contentUrl"]), numberOf(image["width"]), numberOf(image["height"]), stringOf(image["caption"]));
    }
  }
  for (const image of contentImages(document)) add("content", image.src, image.width, image.height, image.alt);
  return dedupe(found).slice(0, LIMITS.imageCandidates);
}

/** og:image values in order, each with the og:image:width/height/alt that follow it. */
function ogImages(document: Document, base: string): ImageCandidate[] {
  const images: ImageCandidate[] = [];
  for (const meta of document.querySelectorAll("meta[content]")) {
    const key = (meta.getAttribute("property") ?? meta.getAttribute("name") ?? "").trim().toLowerCase();
    const value = (meta.getAttribute("content") ?? "").trim();
    const last = images.at(-1);
    if (key === "og:image" || key === "og:image:url" || key === "og:image:secure_url") {
      const url = absoluteHttpUrl(value, base);
      // og:image:secure_url usually repeats og:image; the width and height that follow are its.
      if (url && !isSvgUrl(url) && url !== last?.url) images.push({ url, source: "og:image", width: null, height: null, alt: null });
    } else if (last && key === "og:image:width") last.width = numberOf(value);
    else if (last && key === "og:image:height") last.height = numberOf(value);
    else if (last && key === "og:image:alt") last.alt = clip(collapseSpace(value), LIMITS.fieldChars) || null;
  }
  return images.filter((image) => !((image.width !== null && image.width <= 2) || (image.height !== null && image.height <= 2)));
}

/** The <img> of the main content that are large or of unknown size, in document order. */
function contentImages(document: Document): { src: string; width: number | null; height: number | null; alt: string | null }[] {
  const root = mainContent(document);
  const images: { src: string; width: number | null; height: number | null; alt: string | null }[] = [];
  for (const img of root.querySelectorAll("img")) {
    if (images.length >= LIMITS.contentImages) break;
    if (img.closest(CHROME)) continue;
    const width = numberOf(img.getAttribute("width"));
    const height = numberOf(img.getAttribute("height"));
    const sides = [width, height].filter((side) => side !== null);
    if (sides.length > 0 && Math.max(...sides) < 100) continue;
    const src = imageSource(img);
    if (!src || /^\s*data:/i.test(src)) continue;
    images.push({ src, width, height, alt: img.getAttribute("alt") });
  }
  return images;
}

/** The element holding the page's main content, by the usual markers; the body failing them. */
function mainContent(document: Document): Element {
  return document.querySelector('[itemprop="articleBody"]') ?? document.querySelector("article") ?? document.querySelector("main, [role=main]") ?? document.body;
}

function numberOf(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) && value > 0 ? Math.round(value) : null;
  if (typeof value !== "string" || !/^\s*\d+(\.\d+)?\s*(px)?\s*$/.test(value)) return null;
  return Math.round(Number.parseFloat(value));
}

const stringOf = (value: unknown) => (typeof value === "string" ? value : null);

/** The first of each URL (fragment ignored), order kept. */
function dedupe<T extends { url: string }>(items: T[]): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = item.url.replace(/#.*$/, "");
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
