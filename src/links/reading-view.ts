/**
 * A saved page's readable article in the shape documents have: one page of headings,
 * paragraphs, lists and tables, so the document machinery (digitization view, chunks, keyword
 * index, embeddings) serves links as it serves documents. Boxes are synthetic, stacked top to
 * bottom in proportion to each block's text, as for plain-text documents.
 */
import type { DocElement, DocumentContent, ElementType } from "../documents/types.ts";
import { collapseSpace, parsePage } from "./html-document.ts";
import type { ReadablePage } from "./readable.ts";

const BLOCKS: Record<string, ElementType> = {
  H1: "heading", H2: "heading", H3: "heading", H4: "heading", H5: "heading", H6: "heading",
  P: "paragraph", PRE: "paragraph", BLOCKQUOTE: "paragraph", FIGCAPTION: "figure", DT: "paragraph", DD: "paragraph",
  UL: "list", OL: "list", TABLE: "table",
};

/** Elements read from a sanitized article; its plain text split into paragraphs when it has no blocks. */
export function articleElements(readable: Pick<ReadablePage, "html" | "text">): Omit<DocElement, "bounding_box">[] {
  const body = parsePage(`<body>${readable.html}</body>`).body;
  const found: Omit<DocElement, "bounding_box">[] = [];
  const walk = (node: Element) => {
    for (const child of node.children) {
      const type = BLOCKS[child.tagName];
      if (!type) {
        walk(child);
        continue;
      }
      const content = blockText(child, type);
      if (!content) continue;
      const metadata = type === "heading" ? { level: Number(child.tagName.slice(1)) } : type === "list" ? { ordered: child.tagName === "OL" } : undefined;
      found.push({ type, content, ...(metadata ? { metadata } : {}) });
    }
  };
  walk(body);
  if (found.length) return found;
  return readable.text
    .split(/\n{2,}/)
    .map((paragraph) => paragraph.trim())
    .filter(Boolean)
    .map((content) => ({ type: "paragraph" as const, content }));
}

function blockText(element: Element, type: ElementType): string {
  if (type === "list") {
    const ordered = element.tagName === "OL";
    return [...element.children]
      .filter((item) => item.tagName === "LI")
      .map((item, i) => `${ordered ? `${i + 1}.` : "-"} ${collapseSpace(item.textContent ?? "")}`)
      .filter((line) => !/^(-|\d+\.) $/.test(line))
      .join("\n");
  }
  if (type === "table") {
    return [...element.querySelectorAll("tr")]
      .map((row) => `| ${[...row.children].map((cell) => collapseSpace(cell.textContent ?? "").replace(/\|/g, "\\|")).join(" | ")} |`)
      .join("\n");
  }
  if (element.tagName === "PRE") return (element.textContent ?? "").replace(/\s+$/, "");
  return collapseSpace(element.textContent ?? "");
}

/** The article as a one-page document (page 1), its boxes stacked by text length. */
export function articleDocument(readable: Pick<ReadablePage, "html" | "text" | "title" | "byline">): DocumentContent {
  const drafts = articleElements(readable);
  const total = drafts.reduce((sum, d) => sum + Math.max(1, d.content.length), 0) || 1;
  let top = 0;
  const elements: DocElement[] = drafts.map((draft) => {
    const h = Math.max(1, draft.content.length) / total;
    const element = { ...draft, bounding_box: { x: 0, y: round(top), w: 1, h: round(h) } };
    top += h;
    return element;
  });
  const text = elements.map((e) => e.content).join("\n\n");
  return {
    // Documents' vocabulary has no "html"; the text reader's type is the nearest kin.
    document_type: "txt",
    page_count: 1,
    pages: [{ page_number: 1, status: "completed", error_message: null, ocr: false, text, elements }],
    text,
    metadata: { title: readable.title, author: readable.byline },
  };
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;
