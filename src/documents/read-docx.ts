/**
 * DOCX through mammoth's HTML, which keeps headings, lists and tables: the HTML is walked into
 * typed elements on one logical page (page_number 1: Word decides pagination only when it lays the
 * document out, and the file does not record it).
 *
 *  - Title style → heading level 1; Heading 1..6 → level 2..7 capped at 6 when the document has a
 *    Title, else level 1..6 (so a Title always sits above the headings, as the PDF reader ranks
 *    font sizes);
 *  - p → paragraph; consecutive "Label: value" paragraphs → one key_value element; paragraphs typed
 *    with bullets ("• ", "- ", "1. ") → one list;
 *  - ul/ol → list (nested items indented two spaces per level);
 *  - table → Markdown table (first row as header);
 *  - img → figure whose content is the alt text (or the caption that follows it).
 *
 * Word files carry no geometry mammoth exposes, so boxes are synthetic (layoutBoxes). Title and
 * author come from the document's core properties (docProps/core.xml), the title falling back to
 * the Title paragraph or the first heading. Before mammoth runs, docx-limits.ts refuses archives
 * that would exhaust it (zip bombs, millions of paragraphs).
 */
import mammoth from "mammoth";
import { classifyLines, completedPage, keyValueDraft, layoutBoxes, listDraft, splitBullet, tableDraft, type Draft } from "./reader-common.ts";
import { DocumentReadError, type DocumentContent } from "./types.ts";
import { readZipEntry } from "./zip-entries.ts";
import { checkDocxLimits } from "./docx-limits.ts";
import { errorMessage } from "../errors.ts";

const STYLE_MAP = ["p[style-name='Title'] => h1.doc-title:fresh", "p[style-name='Subtitle'] => p.doc-subtitle:fresh", "p[style-name='Caption'] => p.doc-caption:fresh"];

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
const decode = (s: string) =>
  s.replace(/&(#\d+|#x[0-9a-f]+|\w+);/gi, (m, e: string) => {
    if (ENTITIES[e.toLowerCase()]) return ENTITIES[e.toLowerCase()]!;
    if (/^#x/i.test(e)) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith("#")) return String.fromCodePoint(Number(e.slice(1)));
    return m;
  });

interface Node {
  tag: string;
  attrs: Record<string, string>;
  children: (Node | string)[];
}

const VOID = new Set(["br", "img", "hr", "col", "meta", "link", "input"]);

/** mammoth writes well-formed, simple HTML: a stack parser over tags and text is enough. */
function parse(html: string): Node {
  const root: Node = { tag: "root", attrs: {}, children: [] };
  const stack = [root];
  for (const m of html.matchAll(/<!--[\s\S]*?-->|<(\/?)([a-zA-Z][a-zA-Z0-9]*)((?:[^>"']|"[^"]*"|'[^']*')*?)(\/?)>|([^<]+)/g)) {
    if (m[5] !== undefined) {
      stack.at(-1)!.children.push(decode(m[5]));
      continue;
    }
    if (!m[2]) continue; // comment
    const tag = m[2].toLowerCase();
    if (m[1]) {
      const at = stack.findLastIndex((n) => n.tag === tag);
      if (at > 0) stack.length = at;
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of (m[3] ?? "").matchAll(/([a-zA-Z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) attrs[a[1]!.toLowerCase()] = decode(a[2] ?? a[3] ?? "");
    const node: Node = { tag, attrs, children: [] };
    stack.at(-1)!.children.push(node);
    if (!m[4] && !VOID.has(tag)) stack.push(node);
  }
  return root;
}

const BLOCK = new Set(["p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr", "div", "table", "ul", "ol"]);

/** Text of a node; block elements and <br> end a line. Footnote back-links ("↑") are left out. */
function textOf(node: Node | string): string {
  if (typeof node === "string") return node;
  if (node.tag === "br") return "\n";
  if (node.tag === "img") return "";
  if (node.tag === "a" && /^#(?:footnote|endnote)-ref-/.test(node.attrs.href ?? "")) return "";
  const inner = node.children.map(textOf).join("");
  return BLOCK.has(node.tag) ? `${inner}\n` : inner;
}

const clean = (s: string) => s.replace(/[ \t\u00a0]+/g, " ").replace(/ *\n */g, "\n").trim();
const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();
const isNode = (c: Node | string): c is Node => typeof c !== "string";

function listItems(node: Node, depth = 0): string[] {
  const items: string[] = [];
  const ordered = node.tag === "ol";
  let n = Number(node.attrs.start ?? 1) - 1;
  for (const child of node.children) {
    if (!isNode(child) || child.tag !== "li") continue;
    n += 1;
    const own = oneLine(child.children.filter((c) => !isNode(c) || (c.tag !== "ul" && c.tag !== "ol")).map(textOf).join(" "));
    if (own) items.push(`${"  ".repeat(depth)}${ordered ? `${n}.` : "-"} ${own}`);
    for (const nested of child.children) if (isNode(nested) && (nested.tag === "ul" || nested.tag === "ol")) items.push(...listItems(nested, depth + 1));
  }
  return items;
}

function tableRows(node: Node): string[][] {
  const rows: string[][] = [];
  const walk = (n: Node) => {
    for (const c of n.children) {
      if (!isNode(c) || c.tag === "table") continue; // a nested table's text stays inside its cell
      if (c.tag === "tr") rows.push(c.children.filter(isNode).filter((x) => x.tag === "td" || x.tag === "th").map((cell) => oneLine(textOf(cell))));
      else walk(c);
    }
  };
  walk(node);
  return rows;
}

function images(node: Node): Node[] {
  return node.children.filter(isNode).flatMap((c) => (c.tag === "img" ? [c] : images(c)));
}

function toDrafts(root: Node): Draft[] {
  const hasTitle = root.children.some((n) => isNode(n) && n.tag === "h1" && /\bdoc-title\b/.test(n.attrs.class ?? ""));
  const drafts: Draft[] = [];
  const typed = new Set<Draft>();
  const visit = (nodes: (Node | string)[]) => {
    for (const node of nodes) {
      if (!isNode(node)) {
        const text = oneLine(node);
        if (text) drafts.push({ type: "paragraph", content: text });
        continue;
      }
      const heading = /^h([1-6])$/.exec(node.tag);
      const classes = node.attrs.class ?? "";
      if (heading) {
        const text = oneLine(textOf(node));
        const level = /\bdoc-title\b/.test(classes) ? 1 : Math.min(6, Number(heading[1]) + (hasTitle ? 1 : 0));
        if (text) drafts.push({ type: "heading", content: text, metadata: { level, ...(level === 1 && hasTitle && /\bdoc-title\b/.test(classes) ? { title: true } : {}) } });
        for (const img of images(node)) drafts.push({ type: "figure", content: img.attrs.alt ?? "", metadata: {} });
      } else if (node.tag === "ul" || node.tag === "ol") {
        const items = listItems(node);
        if (items.length) drafts.push({ type: "list", content: items.join("\n"), metadata: { ordered: node.tag === "ol", items: items.length } });
      } else if (node.tag === "table") {
        const rows = tableRows(node);
        if (rows.length) drafts.push(tableDraft(rows));
      } else if (node.tag === "p") {
        const text = clean(textOf(node));
        const caption = /\bdoc-caption\b/.test(classes);
        const figure = drafts.at(-1);
        if (caption && text && figure?.type === "figure" && !figure.content) {
          figure.content = oneLine(text);
          figure.metadata = { ...figure.metadata, caption: true };
          continue;
        }
        for (const img of images(node)) drafts.push({ type: "figure", content: img.attrs.alt ?? "", metadata: {} });
        const draft = text ? classifyLines(text.split("\n")) : null;
        if (draft?.type === "list") typed.add(draft);
        if (draft) drafts.push(caption ? { ...draft, metadata: { ...draft.metadata, caption: true } } : draft);
      } else if (["div", "blockquote", "section", "article"].includes(node.tag)) {
        visit(node.children);
      } else {
        const text = oneLine(textOf(node));
        if (text) drafts.push({ type: "paragraph", content: text });
        for (const img of images(node)) drafts.push({ type: "figure", content: img.attrs.alt ?? "", metadata: {} });
      }
    }
  };
  visit(root.children);
  return mergeRuns(drafts, typed);
}

/** Consecutive one-paragraph key_value elements become one; so do paragraphs typed with bullets (`typed`). */
function mergeRuns(drafts: Draft[], typed: Set<Draft>): Draft[] {
  const out: Draft[] = [];
  for (const d of drafts) {
    const last = out.at(-1);
    if (last?.type === "key_value" && d.type === "key_value") {
      const pairs = `${last.content}\n${d.content}`.split("\n").map((l) => {
        const at = l.indexOf(": ");
        return [l.slice(0, at), l.slice(at + 2)] as [string, string];
      });
      out[out.length - 1] = keyValueDraft(pairs);
    } else if (last && typed.has(last) && typed.has(d)) {
      const merged = listDraft(`${last.content}\n${d.content}`.split("\n").map(splitBullet));
      typed.add(merged);
      out[out.length - 1] = merged;
    } else out.push(d);
  }
  return out;
}

interface CoreProperties {
  title: string | null;
  author: string | null;
}

function coreProperties(bytes: Uint8Array): CoreProperties {
  try {
    const xml = readZipEntry(bytes, "docProps/core.xml");
    if (!xml) return { title: null, author: null };
    const text = new TextDecoder().decode(xml);
    const field = (tag: string) => {
      const m = new RegExp(`<${tag}(?:\\s[^>]*)?>([^<]*)</${tag}>`).exec(text);
      return m && decode(m[1]!).trim() ? decode(m[1]!).trim() : null;
    };
    return { title: field("dc:title"), author: field("dc:creator") };
  } catch {
    return { title: null, author: null };
  }
}

export async function readDocx(bytes: Uint8Array, onPage?: (done: number, total: number) => void): Promise<DocumentContent> {
  if (bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0) {
    throw new DocumentReadError("the file is a password-protected DOCX or a legacy Word .doc file; save it as an unprotected .docx and upload again");
  }
  if (bytes[0] !== 0x50 || bytes[1] !== 0x4b) throw new DocumentReadError("the file is not a DOCX (it is not a ZIP archive)");
  checkDocxLimits(bytes);
  let html: string;
  try {
    // Images are not kept: the default converter would inline them as base64 into the HTML.
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      { styleMap: STYLE_MAP, convertImage: mammoth.images.imgElement(async (image) => ({ src: "", alt: (image as { altText?: string }).altText ?? "" })) },
    );
    html = result.value;
  } catch (err) {
    const reason = errorMessage(err);
    throw new DocumentReadError(`the DOCX could not be read (corrupt or not a Word document): ${reason}`);
  }
  const page = completedPage(1, layoutBoxes(toDrafts(parse(html))));
  onPage?.(1, 1);
  const core = coreProperties(bytes);
  const titled = page.elements.find((e) => e.type === "heading" && e.metadata?.title === true) ?? page.elements.find((e) => e.type === "heading");
  return {
    document_type: "docx",
    page_count: 1,
    pages: [page],
    text: page.text,
    metadata: { title: core.title ?? titled?.content ?? null, author: core.author },
  };
}
