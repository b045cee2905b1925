/**
 * Plain text and Markdown: logical pages split at form feeds, then blocks by blank lines, typed
 * as headings (Markdown `#` and setext underlines; in plain text short ALL-CAPS or underlined
 * lines), lists, key-value blocks, pipe tables (Markdown), code and images. These files have no
 * geometry, so boxes are synthetic: full width, stacked top to bottom in proportion to each
 * block's share of the page's text (see layoutBoxes).
 */
import type { DocElement, DocPage, ExtractedDocument } from "./types.ts";

type Draft = Omit<DocElement, "bounding_box">;

const BULLET = /^\s*(?:[-*+•◦▪]|\d{1,3}[.)]|[a-z][.)])\s+/i;
const KEY_VALUE = /^([^:|]{1,40}):\s+(\S.*)$/;

export function classifyLines(lines: string[]): Draft | null {
  const clean = lines.map((l) => l.trim()).filter(Boolean);
  if (!clean.length) return null;
  if (clean.every((l) => BULLET.test(l))) {
    const ordered = /^\d/.test(clean[0]!);
    const items = clean.map((l, i) => `${ordered ? `${i + 1}.` : "-"} ${l.replace(BULLET, "").trim()}`);
    return { type: "list", content: items.join("\n"), metadata: { ordered, items: items.length } };
  }
  if (clean.every((l) => KEY_VALUE.test(l))) {
    return { type: "key_value", content: clean.join("\n"), metadata: { pairs: clean.length } };
  }
  return { type: "paragraph", content: clean.join(" ") };
}

/** Spreads drafts down the page: each gets a share of the height proportional to its text. */
export function layoutBoxes(drafts: Draft[]): DocElement[] {
  const weights = drafts.map((d) => Math.max(20, d.content.length));
  const total = weights.reduce((a, b) => a + b, 0);
  const usable = 0.9;
  let y = 0.05;
  return drafts.map((d, i) => {
    const h = (weights[i]! / total) * usable;
    const box = { x: 0.05, y: round(y), w: 0.9, h: round(h) };
    y += h;
    return { ...d, bounding_box: box };
  });
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;

function stripInline(text: string): string {
  return text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1")
    .replace(/(\*\*|__)(.+?)\1/g, "$2")
    .replace(/(^|\W)[*_](\S.*?)[*_](?=\W|$)/g, "$1$2")
    .replace(/`([^`]+)`/g, "$1");
}

function isTableRow(line: string): boolean {
  return /^\s*\|.*\|\s*$/.test(line);
}

function normalizeTable(lines: string[]): Draft {
  const rows = lines.filter((l) => !/^\s*\|?\s*:?-{2,}/.test(l)).map((l) => l.trim().replace(/^\||\|$/g, "").split("|").map((c) => stripInline(c.trim())));
  const columns = Math.max(...rows.map((r) => r.length));
  const line = (cells: string[]) => `| ${Array.from({ length: columns }, (_, i) => cells[i] ?? "").join(" | ")} |`;
  const content = [line(rows[0]!), `|${" --- |".repeat(columns)}`, ...rows.slice(1).map(line)].join("\n");
  return { type: "table", content, metadata: { rows: rows.length, columns } };
}

function markdownPage(text: string): Draft[] {
  const drafts: Draft[] = [];
  const lines = text.split("\n");
  let block: string[] = [];
  const flush = () => {
    const draft = classifyLines(block.map(stripInline));
    if (draft) drafts.push(draft);
    block = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      drafts.push({ type: "heading", content: stripInline(heading[2]!), metadata: { level: heading[1]!.length } });
      continue;
    }
    const next = lines[i + 1] ?? "";
    if (line.trim() && block.length === 0 && /^(=+|-+)\s*$/.test(next) && !BULLET.test(line)) {
      drafts.push({ type: "heading", content: stripInline(line.trim()), metadata: { level: next.startsWith("=") ? 1 : 2 } });
      i += 1;
      continue;
    }
    if (/^\s*```/.test(line)) {
      flush();
      const code: string[] = [];
      for (i += 1; i < lines.length && !/^\s*```/.test(lines[i]!); i++) code.push(lines[i]!);
      if (code.join("").trim()) drafts.push({ type: "paragraph", content: code.join("\n"), metadata: { code: true } });
      continue;
    }
    if (isTableRow(line)) {
      flush();
      const rows: string[] = [];
      for (; i < lines.length && isTableRow(lines[i]!); i++) rows.push(lines[i]!);
      i -= 1;
      drafts.push(normalizeTable(rows));
      continue;
    }
    const image = /^\s*!\[([^\]]*)\]\([^)]*\)\s*$/.exec(line);
    if (image) {
      flush();
      drafts.push({ type: "figure", content: image[1]!, metadata: { alt: image[1] } });
      continue;
    }
    if (!line.trim()) flush();
    else block.push(line);
  }
  flush();
  return drafts;
}

function textPage(text: string): Draft[] {
  const drafts: Draft[] = [];
  for (const block of text.split(/\n\s*\n/)) {
    const lines = block.split("\n").filter((l) => l.trim());
    if (!lines.length) continue;
    // A short line underlined with === or --- is a heading, as is a short ALL-CAPS line.
    if (lines.length >= 2 && /^(=+|-+)\s*$/.test(lines[1]!)) {
      drafts.push({ type: "heading", content: lines[0]!.trim(), metadata: { level: lines[1]!.trim().startsWith("=") ? 1 : 2 } });
      const rest = classifyLines(lines.slice(2));
      if (rest) drafts.push(rest);
      continue;
    }
    if (lines.length === 1 && lines[0]!.trim().length <= 80 && /[A-Z]/.test(lines[0]!) && lines[0] === lines[0]!.toUpperCase() && !KEY_VALUE.test(lines[0]!)) {
      drafts.push({ type: "heading", content: lines[0]!.trim(), metadata: { level: 1 } });
      continue;
    }
    const draft = classifyLines(lines);
    if (draft) drafts.push(draft);
  }
  return drafts;
}

export function extractPlain(bytes: Uint8Array, type: "txt" | "md"): ExtractedDocument {
  const raw = new TextDecoder("utf-8").decode(bytes).replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const pages: DocPage[] = raw.split("\f").map((text, i) => {
    const elements = layoutBoxes(type === "md" ? markdownPage(text) : textPage(text));
    return { page_number: i + 1, status: "completed", error_message: null, ocr: false, text: elements.map((e) => e.content).join("\n\n"), elements };
  });
  const title = pages[0]?.elements.find((e) => e.type === "heading")?.content ?? null;
  return { document_type: type, page_count: pages.length, pages, text: pages.map((p) => p.text).join("\n\n"), metadata: { title, author: null } };
}
