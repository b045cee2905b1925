/**
 * SVG is the one accepted image format that is also a document: it can carry script, event
 * handlers, javascript: links, embedded HTML and DTD tricks. This module owns two decisions:
 *
 * - whether a text upload is an SVG: its root element, found after the XML declaration and any
 *   comments, processing instructions and doctype, however long they are (a long comment must
 *   not hide an `<svg>` from the detector);
 * - whether a whole SVG document is free of active content. Nothing is sanitized: an SVG with
 *   anything active is refused with the reason, so what is stored is exactly what was sent.
 *
 * The whole document is always read (up to SVG_MAX_BYTES, so memory stays bounded); an SVG that
 * cannot be read to its end is refused, never accepted on the strength of its first bytes.
 */

/** SVGs above this are refused: every byte of one has to be checked, in memory. */
export const SVG_MAX_BYTES = 10 * 1024 * 1024;

const MB = 1024 * 1024;

export type SvgVerdict = { svg: false } | { svg: true; refusal: string | null };

/**
 * `headText` is the decoded start of the file; `path`, when given, is the whole file on disk.
 * Not an SVG → `{svg: false}` (the caller's other text rules apply); an SVG → whether it is refused.
 */
export async function inspectSvg(headText: string, path: string | undefined): Promise<SvgVerdict> {
  const root = findRoot(headText);
  if (root.kind === "text" || (root.kind === "element" && !isSvgName(root.name))) return { svg: false };
  if (!path) {
    // The head may be all we were given of a larger file: never accept an SVG unseen.
    return {
      svg: true,
      refusal:
        root.kind === "element"
          ? `this SVG could not be checked as a whole (SVG images are limited to ${SVG_MAX_BYTES / MB} MB)`
          : "the file starts with XML comments or declarations longer than could be checked",
    };
  }
  const file = Bun.file(path);
  const size = file.size;
  const tooLarge = size > SVG_MAX_BYTES;
  if (root.kind === "element" && tooLarge) return { svg: true, refusal: tooLargeReason(size) };
  const bytes = await file.slice(0, Math.min(size, SVG_MAX_BYTES)).bytes();
  const whole = decodeWhole(bytes);
  if (whole === null) {
    // The head decoded as text, so this is non-UTF-8 or binary further on: still an SVG if its
    // root says so (read leniently), and then refused, since it cannot be checked as text.
    const lenient = root.kind === "element" ? root : findRoot(new TextDecoder().decode(bytes));
    return lenient.kind === "element" && isSvgName(lenient.name) ? { svg: true, refusal: "the SVG is not valid UTF-8 text" } : { svg: false };
  }
  const full = root.kind === "element" ? root : findRoot(whole);
  if (full.kind === "text" || (full.kind === "element" && !isSvgName(full.name))) return { svg: false };
  if (full.kind === "unterminated") {
    if (!tooLarge) return { svg: false }; // one unterminated comment to the end: plain text, never markup
    return { svg: true, refusal: `the file starts with XML comments or declarations running past ${SVG_MAX_BYTES / MB} MB` };
  }
  if (tooLarge) return { svg: true, refusal: tooLargeReason(size) };
  const active = await activeContent(whole);
  return { svg: true, refusal: active ? `SVG with active content is not accepted: ${active}` : null };
}

const tooLargeReason = (size: number) => `SVG images are limited to ${SVG_MAX_BYTES / MB} MB (this one is ${(size / MB).toFixed(1)} MB)`;

function decodeWhole(bytes: Uint8Array): string | null {
  const body = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(body);
    return text.includes("\0") ? null : text;
  } catch {
    return null;
  }
}

/** An element named `svg`, with or without a namespace prefix (`<svg:svg xmlns:svg=…>` is an SVG too). */
function isSvgName(name: string): boolean {
  return localName(name) === "svg";
}

function localName(name: string): string {
  return name.slice(name.lastIndexOf(":") + 1).toLowerCase();
}

// ---------------------------------------------------------------------------------------------
// The prolog: what may come before the root element

type Root = { kind: "element"; name: string } | { kind: "text" } | { kind: "unterminated" };

const isSpace = (c: string | undefined) => c === " " || c === "\n" || c === "\r" || c === "\t" || c === "\f";

/**
 * Skips whitespace, comments, processing instructions and a doctype (with its internal subset)
 * and names the first element. "text" when something other than markup comes first;
 * "unterminated" when the string ends before the root is reached.
 */
export function findRoot(text: string): Root {
  let i = 0;
  for (;;) {
    while (isSpace(text[i])) i++;
    if (i >= text.length) return { kind: "unterminated" };
    if (text[i] !== "<") return { kind: "text" };
    if (text.startsWith("<!--", i)) {
      const end = text.indexOf("-->", i + 4);
      if (end < 0) return { kind: "unterminated" };
      i = end + 3;
    } else if (text.startsWith("<?", i)) {
      const end = text.indexOf("?>", i + 2);
      if (end < 0) return { kind: "unterminated" };
      i = end + 2;
    } else if (/^<!doctype/i.test(text.slice(i, i + 9))) {
      const end = doctypeEnd(text, i);
      if (end < 0) return { kind: "unterminated" };
      i = end;
    } else if (text.length - i < 9 && "<!doctype".startsWith(text.slice(i).toLowerCase())) {
      return { kind: "unterminated" };
    } else {
      const name = /^<([^\s/>!?<]+)([\s/>])?/.exec(text.slice(i, i + 512));
      if (!name) return { kind: "text" };
      if (!name[2]) return text.length - i < 512 ? { kind: "unterminated" } : { kind: "text" };
      return { kind: "element", name: name[1]! };
    }
  }
}

/**
 * The index just past a doctype's closing `>`, or -1. Quotes, the `[…]` internal subset and the
 * comments and processing instructions inside it are skipped as units, so a `>` inside any of
 * them does not end the doctype.
 */
function doctypeEnd(text: string, start: number): number {
  let depth = 0;
  let i = start + 9;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      const close = text.indexOf(c, i + 1);
      if (close < 0) return -1;
      i = close + 1;
    } else if (depth > 0 && text.startsWith("<!--", i)) {
      const close = text.indexOf("-->", i + 4);
      if (close < 0) return -1;
      i = close + 3;
    } else if (depth > 0 && text.startsWith("<?", i)) {
      const close = text.indexOf("?>", i + 2);
      if (close < 0) return -1;
      i = close + 2;
    } else {
      if (c === "[") depth++;
      else if (c === "]") depth = Math.max(0, depth - 1);
      else if (c === ">" && depth === 0) return i + 1;
      i++;
    }
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Active content

/** Elements that run script, embed other documents or change how links resolve. */
const FORBIDDEN_ELEMENTS = new Set([
  "script", "foreignobject", "iframe", "frame", "frameset", "object", "embed", "applet", "portal",
  "handler", "listener", "base", "meta", "link", "form", "html", "body", "noscript", "template",
]);

const ANIMATIONS = new Set(["animate", "set", "animatetransform", "animatemotion", "animatecolor"]);

/** Encodings whose ASCII bytes mean ASCII: a document decoded as UTF-8 here reads the same there. */
const SAFE_ENCODINGS = /^(utf-?8|us-ascii|ascii|iso-8859-\d+|iso8859-\d+|latin-?1|windows-125\d|cp125\d)$/i;

const PREDEFINED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** The whole-text safety net behind the tokenizer: markup that must not appear anywhere, comments included. */
const ANYWHERE = /<\s*(?:[\w.-]+:)?(?:script|foreignobject|iframe|object|embed|handler|listener)\b|\son[a-z]+\s*=|javascript\s*:/i;

/**
 * Why the document is active, or null when it is not. A small XML tokenizer walks every tag
 * (comments and CDATA are inert text in XML and are skipped), checking element names, every
 * attribute (with character and declared entity references expanded, and the whitespace a
 * browser strips from URLs removed), `<style>` content, processing instructions and the doctype's
 * internal subset; the coarse `ANYWHERE` patterns then run over the raw text as a safety net
 * against any gap between this tokenizer and a browser's parser.
 */
export async function activeContent(text: string): Promise<string | null> {
  const entities = new Map<string, string>();
  let sawElement = false;
  let i = 0;
  let sliceStart = performance.now();
  for (let steps = 1; ; steps++) {
    // A 10 MB SVG takes a few hundred milliseconds to walk: let other requests in every ~10 ms.
    if ((steps & 1023) === 0 && performance.now() - sliceStart > 10) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
    i = text.indexOf("<", i);
    if (i < 0) break;
    const next = text.charCodeAt(i + 1);
    if (next === BANG) {
      if (text.startsWith("<!--", i)) {
        const end = text.indexOf("-->", i + 4);
        if (end < 0) break;
        i = end + 3;
      } else if (text.startsWith("<![CDATA[", i)) {
        const end = text.indexOf("]]>", i + 9);
        if (end < 0) break;
        i = end + 3;
      } else if (/^<!doctype/i.test(text.slice(i, i + 9))) {
        const end = doctypeEnd(text, i);
        if (end < 0) return "an unterminated doctype";
        const problem = checkDoctype(text.slice(i, end), entities);
        if (problem) return problem;
        i = end;
      } else {
        return "markup declarations outside the doctype";
      }
    } else if (next === QUESTION) {
      const end = text.indexOf("?>", i + 2);
      const pi = text.slice(i + 2, end < 0 ? undefined : end);
      const target = /^[^\s?]*/.exec(pi)![0];
      if (target !== "xml" || sawElement) return `the processing instruction <?${target}…?> (stylesheets and other instructions are not accepted)`;
      const encoding = /\bencoding\s*=\s*["']([^"']*)["']/.exec(pi)?.[1];
      if (encoding && !SAFE_ENCODINGS.test(encoding.trim())) return `the declared encoding "${encoding}" (UTF-8 only)`;
      if (end < 0) break;
      i = end + 2;
    } else if (next === SLASH) {
      const end = text.indexOf(">", i);
      if (end < 0) break;
      i = end + 1;
    } else {
      const tag = parseTag(text, i);
      if (tag === "eof") break;
      if (!tag) {
        i++;
        continue;
      }
      sawElement = true;
      const problem = checkElement(tag, entities);
      if (problem) return problem;
      i = tag.end;
      if (!tag.selfClosing && localName(tag.name) === "style") {
        const close = text.indexOf(`</${tag.name}`, i);
        const css = text.slice(i, close < 0 ? undefined : close);
        const bad = activeUrl(normalize(css.replace(/<!\[CDATA\[|\]\]>/g, ""))) ?? activeCss(css);
        if (bad) return `a <style> element with ${bad}`;
        i = close < 0 ? text.length : close;
      }
    }
  }
  const coarse = ANYWHERE.exec(text);
  if (coarse) return `script or event handlers ("${coarse[0].trim().slice(0, 40)}")`;
  return null;
}

const BANG = 33;
const QUESTION = 63;

interface Tag {
  name: string;
  attributes: [string, string][];
  selfClosing: boolean;
  end: number;
}

const TAG_NAME = /[^\s/>"'=<]+/y;

/**
 * A start tag at `start` (`<name attr="v" …>`), null when it is not one, or "eof" when it runs
 * to the end of the text (nothing after it can be markup). Lenient: unquoted and bare
 * attributes are read too.
 */
function parseTag(text: string, start: number): Tag | null | "eof" {
  TAG_NAME.lastIndex = start + 1;
  const nameMatch = text[start] === "<" ? TAG_NAME.exec(text) : null;
  if (!nameMatch) return null;
  const attributes: [string, string][] = [];
  let i = start + 1 + nameMatch[0].length;
  for (;;) {
    i = skipSpace(text, i);
    if (i >= text.length) return "eof";
    const c = text.charCodeAt(i);
    if (c === GT) return { name: nameMatch[0], attributes, selfClosing: false, end: i + 1 };
    if (c === SLASH && text.charCodeAt(i + 1) === GT) return { name: nameMatch[0], attributes, selfClosing: true, end: i + 2 };
    if (c === SLASH) {
      i++;
      continue;
    }
    ATTRIBUTE_NAME.lastIndex = i;
    const name = ATTRIBUTE_NAME.exec(text)?.[0] ?? text[i]!;
    i = skipSpace(text, i + name.length);
    if (text.charCodeAt(i) !== EQUALS) {
      attributes.push([name, ""]);
      continue;
    }
    i = skipSpace(text, i + 1);
    const quote = text[i];
    if (quote === '"' || quote === "'") {
      const close = text.indexOf(quote, i + 1);
      if (close < 0) return "eof";
      attributes.push([name, text.slice(i + 1, close)]);
      i = close + 1;
    } else {
      UNQUOTED_VALUE.lastIndex = i;
      const value = UNQUOTED_VALUE.exec(text)![0];
      attributes.push([name, value]);
      i += value.length;
    }
  }
}

const GT = 62;
const SLASH = 47;
const EQUALS = 61;
const ATTRIBUTE_NAME = /[^\s=>\/]+/y;
const UNQUOTED_VALUE = /[^\s>]*/y;

function skipSpace(text: string, from: number): number {
  let i = from;
  for (let c = text.charCodeAt(i); c === 32 || c === 10 || c === 13 || c === 9 || c === 12; c = text.charCodeAt(++i));
  return i;
}

function checkElement(tag: Tag, entities: Map<string, string>): string | null {
  const element = localName(tag.name);
  if (FORBIDDEN_ELEMENTS.has(element)) return `a <${tag.name}> element`;
  for (const [rawName, rawValue] of tag.attributes) {
    const name = rawName.toLowerCase();
    const local = localName(rawName);
    if (local.startsWith("on")) return `the event handler attribute ${rawName}`;
    const value = rawValue.includes("&") ? expandReferences(rawValue, entities) : rawValue;
    if (value === null) return `an undeclared or oversized entity reference in ${rawName}="${rawValue.slice(0, 40)}"`;
    if (name === "xml:base") return "an xml:base attribute (it changes where links resolve)";
    if ((name === "xmlns" || name.startsWith("xmlns:")) && value.trim() === "http://www.w3.org/1999/xhtml") return "embedded XHTML";
    // Every active URL has a scheme: a value without a colon needs no closer look.
    const bad = value.includes(":") ? activeUrl(normalize(value)) : null;
    if (bad) return `${bad} in ${rawName}`;
    if (local === "style") {
      const css = activeCss(value);
      if (css) return `${css} in a style attribute`;
    }
    if (element === "use" && local === "href" && !normalize(value).startsWith("#")) return `a <use> of another document (${rawValue.slice(0, 60)})`;
    if (ANIMATIONS.has(element) && local === "attributename" && localName(normalize(value)).startsWith("on")) {
      return `an animation of the event handler ${value}`;
    }
  }
  return null;
}

/** Characters entity references may add to one attribute value (many references to a long entity would be a memory bomb). */
const MAX_EXPANSION = 1024 * 1024;

/**
 * Expands character references, the predefined entities and the document's own (already
 * checked) internal entities; null when a reference names an entity nobody declared, or when
 * the expansion grows past MAX_EXPANSION.
 */
function expandReferences(value: string, entities: Map<string, string>): string | null {
  let refused = false;
  let added = 0;
  const expanded = value.replace(/&(#[xX][0-9a-fA-F]+|#\d+|[^\s&;]+);/g, (_, ref: string) => {
    if (refused) return "";
    if (ref[0] === "#") {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "";
    }
    const known = PREDEFINED[ref] ?? entities.get(ref);
    added += known?.length ?? 0;
    if (known === undefined || added > MAX_EXPANSION) refused = true;
    return refused ? "" : known!;
  });
  return refused ? null : expanded;
}

/** What a browser makes of a URL: no ASCII whitespace or control characters anywhere, any case. */
function normalize(value: string): string {
  return value.replace(/[\x00-\x20\x7f]+/g, "").toLowerCase();
}

/**
 * A data: URL other than a raster image or a font, the only ones an SVG may carry (a nested SVG
 * or HTML document could run script).
 */
const ACTIVE_DATA = /(?<![a-z0-9+.-])data:(?!(?:image\/(?:png|jpe?g|gif|webp|avif|bmp)|font\/[\w.+-]+|application\/(?:x-)?font-[\w.+-]+|application\/vnd\.ms-fontobject)[;,])/;

/** A script-capable URL inside an already normalized value, or null. */
function activeUrl(url: string): string | null {
  const scheme = /(?:java|vb|live)script:/.exec(url);
  if (scheme) return `a ${scheme[0]} URL`;
  const data = ACTIVE_DATA.exec(url);
  if (data) return `a data: URL that is not a raster image or font (${url.slice(data.index, data.index + 40)})`;
  return null;
}

/** CSS that runs code in old engines (IE expressions, XBL and HTC bindings). */
function activeCss(css: string): string | null {
  const found = /expression\s*\(|-moz-binding|\bbehavior\s*:/i.exec(css);
  return found ? `the CSS "${found[0]}"` : null;
}

/**
 * The internal subset may declare entities (an `&x;` in the body expands to their text, which
 * could be markup) and attribute defaults (every element would silently gain them). Only plain
 * internal general entities whose text is inert are allowed; they are recorded so attribute
 * values that use them are checked expanded.
 */
function checkDoctype(doctype: string, entities: Map<string, string>): string | null {
  const open = doctype.indexOf("[");
  if (open < 0) return null;
  const subset = doctype.slice(open + 1, doctype.lastIndexOf("]"));
  let i = 0;
  for (;;) {
    while (isSpace(subset[i])) i++;
    if (i >= subset.length) return null;
    if (subset.startsWith("<!--", i)) {
      const close = subset.indexOf("-->", i + 4);
      if (close < 0) return "an unterminated comment in the doctype";
      i = close + 3;
      continue;
    }
    if (subset[i] === "%") return "a parameter entity reference in the doctype";
    if (subset.startsWith("<?", i)) return "a processing instruction in the doctype";
    const decl = /^<!([A-Za-z]+)\b/.exec(subset.slice(i, i + 16));
    if (!decl) return "unexpected content in the doctype";
    const keyword = decl[1]!.toUpperCase();
    // The declaration ends at the first `>` outside quotes.
    let end = i + decl[0].length;
    while (end < subset.length && subset[end] !== ">") {
      if (subset[end] === '"' || subset[end] === "'") {
        const close = subset.indexOf(subset[end]!, end + 1);
        if (close < 0) return "an unterminated declaration in the doctype";
        end = close;
      }
      end++;
    }
    const body = subset.slice(i + decl[0].length, end);
    if (keyword === "ENTITY") {
      const problem = checkEntity(body, entities);
      if (problem) return problem;
    } else if (keyword === "ATTLIST") {
      return "an attribute-list declaration in the doctype (it can add attributes such as event handlers to every element)";
    } else if (keyword !== "ELEMENT" && keyword !== "NOTATION") {
      return `a <!${decl[1]}> declaration in the doctype`;
    }
    i = end + 1;
  }
}

function checkEntity(body: string, entities: Map<string, string>): string | null {
  const match = /^\s+(%\s+)?([^\s%&;<>"']+)\s+(?:"([^"]*)"|'([^']*)'|(\S+))/.exec(body);
  if (!match) return "a malformed entity declaration";
  if (match[1]) return "a parameter entity declaration";
  const name = match[2]!;
  const raw = match[3] ?? match[4];
  if (raw === undefined) return `the external entity ${name}`;
  const value = expandReferences(raw, new Map());
  if (value === null || /[<&]|%[^\s%;]+;/.test(value)) return `the entity ${name}, whose text is markup or other references`;
  const bad = activeUrl(normalize(value));
  if (bad) return `the entity ${name}, whose text is ${bad}`;
  entities.set(name, value);
  return null;
}
