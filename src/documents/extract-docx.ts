/**
 * DOCX through mammoth's HTML (which keeps headings, lists and tables): the HTML is walked into
 * typed elements on one logical page. Word files carry no page geometry that mammoth exposes, so
 * boxes are synthetic, laid out like plain text (layoutBoxes).
 */
import mammoth from "mammoth";
import { classifyLines, layoutBoxes } from "./extract-text.ts";
import { DocumentExtractionError, type DocElement, type ExtractedDocument } from "./types.ts";

type Draft = Omit<DocElement, "bounding_box">;

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", apos: "'", nbsp: " " };
const decode = (s: string) => s.replace(/&(#\d+|#x[0-9a-f]+|\w+);/gi, (m, e: string) => {
  if (ENTITIES[e]) return ENTITIES[e];
  if (e.startsWith("#x")) return String.fromCodePoint(parseInt(e.slice(2), 16));
  if (e.startsWith("#")) return String.fromCodePoint(Number(e.slice(1)));
  return m;
});

interface Node {
  tag: string;
  attrs: string;
  children: (Node | string)[];
}

/** mammoth writes well-formed, simple HTML: a stack parser over tags and text is enough. */
function parse(html: string): Node {
  const root: Node = { tag: "root", attrs: "", children: [] };
  const stack = [root];
  for (const m of html.matchAll(/<(\/?)([a-z0-9]+)([^>]*?)(\/?)>|([^<]+)/gi)) {
    if (m[5] !== undefined) {
      stack.at(-1)!.children.push(decode(m[5]));
      continue;
    }
    const tag = m[2]!.toLowerCase();
    if (m[1]) {
      const at = stack.findLastIndex((n) => n.tag === tag);
      if (at > 0) stack.length = at;
      continue;
    }
    const node: Node = { tag, attrs: m[3] ?? "", children: [] };
    stack.at(-1)!.children.push(node);
    if (!m[4] && !["br", "img", "hr"].includes(tag)) stack.push(node);
  }
  return root;
}

const textOf = (node: Node | string): string =>
  typeof node === "string" ? node : node.tag === "br" ? "\n" : node.children.map(textOf).join("");

function listItems(node: Node, depth = 0): string[] {
  const items: string[] = [];
  const ordered = node.tag === "ol";
  let n = 0;
  for (const child of node.children) {
    if (typeof child === "string" || child.tag !== "li") continue;
    n += 1;
    const own = child.children.filter((c) => typeof c === "string" || !["ul", "ol"].includes(c.tag)).map(textOf).join("").trim();
    items.push(`${"  ".repeat(depth)}${ordered ? `${n}.` : "-"} ${own}`);
    for (const nested of child.children) if (typeof nested !== "string" && ["ul", "ol"].includes(nested.tag)) items.push(...listItems(nested, depth + 1));
  }
  return items;
}

function tableMarkdown(node: Node): Draft {
  const rows: string[][] = [];
  const walk = (n: Node) => {
    for (const c of n.children) {
      if (typeof c === "string") continue;
      if (c.tag === "tr") rows.push(c.children.filter((x): x is Node => typeof x !== "string" && (x.tag === "td" || x.tag === "th")).map((cell) => textOf(cell).replace(/\s+/g, " ").replace(/\|/g, "\\|").trim()));
      else walk(c);
    }
  };
  walk(node);
  const columns = Math.max(1, ...rows.map((r) => r.length));
  const line = (cells: string[]) => `| ${Array.from({ length: columns }, (_, i) => cells[i] ?? "").join(" | ")} |`;
  const content = rows.length ? [line(rows[0]!), `|${" --- |".repeat(columns)}`, ...rows.slice(1).map(line)].join("\n") : "";
  return { type: "table", content, metadata: { rows: rows.length, columns } };
}

function toDrafts(root: Node): Draft[] {
  const drafts: Draft[] = [];
  for (const node of root.children) {
    if (typeof node === "string") {
      if (node.trim()) drafts.push({ type: "paragraph", content: node.trim() });
      continue;
    }
    const heading = /^h([1-6])$/.exec(node.tag);
    if (heading) drafts.push({ type: "heading", content: textOf(node).trim(), metadata: { level: Number(heading[1]) } });
    else if (node.tag === "ul" || node.tag === "ol") {
      const items = listItems(node);
      drafts.push({ type: "list", content: items.join("\n"), metadata: { ordered: node.tag === "ol", items: items.length } });
    } else if (node.tag === "table") drafts.push(tableMarkdown(node));
    else if (node.tag === "p") {
      const images = node.children.filter((c): c is Node => typeof c !== "string" && c.tag === "img");
      for (const img of images) drafts.push({ type: "figure", content: /alt="([^"]*)"/.exec(img.attrs)?.[1] ?? "", metadata: {} });
      const draft = classifyLines(textOf(node).split("\n"));
      if (draft) drafts.push(draft);
    } else if (textOf(node).trim()) drafts.push({ type: "paragraph", content: textOf(node).replace(/\s+/g, " ").trim() });
  }
  return drafts.filter((d) => d.content.trim() || d.type === "figure");
}

export async function extractDocx(bytes: Uint8Array): Promise<ExtractedDocument> {
  let html: string;
  try {
    // Images are not kept: the default converter would inline them as base64 into the HTML.
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes) },
      { convertImage: mammoth.images.imgElement(async (image) => ({ src: "", alt: (image as { altText?: string }).altText ?? "" })) },
    );
    html = result.value;
  } catch (err) {
    throw new DocumentExtractionError(`the DOCX file could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  const elements = layoutBoxes(toDrafts(parse(html)));
  const text = elements.map((e) => e.content).filter(Boolean).join("\n\n");
  const title = elements.find((e) => e.type === "heading")?.content ?? null;
  return {
    document_type: "docx",
    page_count: 1,
    pages: [{ page_number: 1, status: "completed", error_message: null, ocr: false, text, elements }],
    text,
    metadata: { title, author: null },
  };
}
