/**
 * What every reader shares: recognising lists and "Label: value" lines, writing tables as
 * Markdown, synthetic boxes for formats without geometry, and assembling pages into the
 * DocumentContent shape.
 */
import type { DocElement, DocPage, DocumentContent } from "./types.ts";
import { errorMessage } from "../errors.ts";

/** An element before it has a box. */
export type Draft = Omit<DocElement, "bounding_box">;

/**
 * A list item's marker: a bullet glyph or dash (checkbox and dingbat glyphs included), or "1." "1)"
 * "(1)" "a)" "iv." followed by a space.
 * Roman numerals are limited to i/v/x so words like "mix." never count.
 */
const BULLET_GLYPHS = "•◦▪▫■□●○‣⁃∙·–—*+\\-☐☑☒✓✔✗✘❏❐❑❒▢➢➤►▶◆◇❖";
export const BULLET = new RegExp(`^\\s*(?:[${BULLET_GLYPHS}]|\\(?(\\d{1,3})[.)]|\\(?(?:[a-z]|[ivx]{1,4})[.)])\\s+(?=\\S)`, "i");
/** A list item's marker that is a glyph, not a number or letter (which a numbered heading also starts with). */
export const GLYPH_BULLET = new RegExp(`^\\s*[${BULLET_GLYPHS}]\\s+(?=\\S)`);
const ORDERED = /^\s*\(?(?:\d{1,3}|[a-z]|[ivx]{1,4})[.)]/i;

/** "Label: value" with a short label (at most 40 characters and 5 words) that starts like a word. */
const KEY_VALUE = /^\s*([\p{L}\p{N}][^:|]{0,39}?)\s*:\s+(\S.*?)\s*$/u;

/** "Chapter 4: Results", "Figure 2: Flow" are titles and captions, not fields. */
const NOT_A_LABEL = /^(?:chapter|section|part|figure|fig\.|table|appendix|exhibit)\s+[\p{N}\p{Lu}]/iu;

export function isBullet(line: string): boolean {
  return BULLET.test(line);
}

export function keyValue(line: string): [string, string] | null {
  const m = KEY_VALUE.exec(line);
  if (!m || m[1]!.split(/\s+/).length > 5 || NOT_A_LABEL.test(m[1]!)) return null;
  return [m[1]!, m[2]!];
}

/** List items (text without markers) → "- item" lines, or "1. item" with the document's own numbers when it has them. */
export function listDraft(items: { marker: string; text: string }[]): Draft {
  const ordered = ORDERED.test(items[0]?.marker ?? "");
  let n = 0;
  const lines = items.map((item) => {
    const number = /\d+/.exec(item.marker);
    n = number ? Number(number[0]) : n + 1;
    return `${ordered ? `${n}.` : "-"} ${item.text}`;
  });
  return { type: "list", content: lines.join("\n"), metadata: { ordered, items: lines.length } };
}

/** Splits a bulleted line into its marker and its text. */
export function splitBullet(line: string): { marker: string; text: string } {
  const m = BULLET.exec(line);
  if (!m) return { marker: "", text: line.trim() };
  return { marker: m[0].trim(), text: line.slice(m[0].length).trim() };
}

/**
 * Lines of one block → a list (every line bulleted; indented lines continue the item above),
 * a key_value element (every line "Label: value"), or a paragraph (lines joined, hyphenation
 * at line ends undone).
 */
export function classifyLines(lines: string[]): Draft | null {
  const raw = lines.filter((l) => l.trim());
  if (!raw.length) return null;
  if (isBullet(raw[0]!) && raw.every((l) => isBullet(l) || /^\s{2,}\S/.test(l))) {
    const items: { marker: string; text: string }[] = [];
    for (const l of raw) {
      if (isBullet(l)) items.push(splitBullet(l));
      else items.at(-1)!.text += ` ${l.trim()}`;
    }
    return listDraft(items);
  }
  const pairs = raw.map(keyValue);
  if (pairs.every((p) => p)) return keyValueDraft(pairs as [string, string][]);
  return { type: "paragraph", content: joinLines(raw) };
}

export function keyValueDraft(pairs: [string, string][]): Draft {
  return { type: "key_value", content: pairs.map(([k, v]) => `${k}: ${v}`).join("\n"), metadata: { pairs: pairs.length } };
}

/** Whitespace other than a lone space. */
const OTHER_SPACE = /[^\S ]|\s\s/;
/** Each run of whitespace as one space. Most text has single spaces only, which the replace would copy unchanged (for every line of every page). */
export const singleSpaced = (s: string) => (OTHER_SPACE.test(s) ? s.replace(/\s+/g, " ") : s);

/**
 * Joins wrapped lines with spaces; "inspec-" + "tion" becomes "inspection" (lowercase on both sides only, so "VX-" + "4471" keeps its dash).
 * Lines are collected and joined once: asking a growing string whether it ends with "-" flattened
 * it on every line, and 80,000 lines ending with one took seconds.
 */
export function joinLines(lines: string[]): string {
  const parts: string[] = [];
  for (const raw of lines) {
    const line = singleSpaced(raw.trim());
    if (!line) continue;
    const last = parts.length ? parts[parts.length - 1]! : null;
    if (last !== null && last.endsWith("-") && /\p{Ll}/u.test(last.at(-2) ?? "") && /^\p{Ll}/u.test(line)) {
      parts[parts.length - 1] = last.slice(0, -1);
      parts.push("", line);
    } else {
      if (last !== null) parts.push(" ");
      parts.push(line);
    }
  }
  return parts.join("");
}

/** Rows of cells → a Markdown table, the first row as its header. */
export function tableDraft(rows: string[][], extra: Record<string, unknown> = {}): Draft {
  // A loop, not Math.max(...rows): a million-row text table overflowed the call stack.
  const columns = rows.reduce((most, r) => Math.max(most, r.length), 1);
  const cell = (s: string | undefined) => (s ?? "").replace(/\s+/g, " ").trim().replace(/\|/g, "\\|");
  const line = (cells: string[]) => `| ${Array.from({ length: columns }, (_, i) => cell(cells[i])).join(" | ")} |`;
  const content = rows.length ? [line(rows[0]!), `|${"---|".repeat(columns)}`, ...rows.slice(1).map(line)].join("\n") : "";
  return { type: "table", content, metadata: { rows: rows.length, columns, ...extra } };
}

export const round4 = (n: number) => Math.round(n * 10_000) / 10_000;

/**
 * Boxes for formats without geometry (DOCX, TXT, MD): every element spans the usable width
 * (x 0.05, w 0.9) and the elements are stacked top to bottom in reading order inside a 5% margin,
 * each taking a share of the height proportional to its text length (at least 20 characters' worth,
 * so headings and figures stay visible). They say where an element sits in the flow of the page,
 * not where a word processor would print it.
 */
export function layoutBoxes(drafts: Draft[]): DocElement[] {
  const weights = drafts.map((d) => Math.max(20, d.content.length));
  const total = weights.reduce((a, b) => a + b, 0);
  let y = 0.05;
  return drafts.map((d, i) => {
    const h = (weights[i]! / total) * 0.9;
    const element = { ...d, bounding_box: { x: 0.05, y: round4(y), w: 0.9, h: round4(h) } };
    y += h;
    return element;
  });
}

/**
 * The page's text in reading order: its elements' contents (figures without text in them add
 * nothing), blank-line separated. Running headers and footers (metadata.furniture) stay out.
 */
export function pageText(elements: DocElement[]): string {
  return elements
    .filter((e) => !e.metadata?.furniture)
    .map((e) => e.content.trim())
    .filter(Boolean)
    .join("\n\n");
}

export function completedPage(pageNumber: number, elements: DocElement[], ocr = false): DocPage {
  return { page_number: pageNumber, status: "completed", error_message: null, ocr, text: pageText(elements), elements };
}

export function failedPage(pageNumber: number, error: unknown, ocr = false): DocPage {
  const message = errorMessage(error).trim().replace(/\s*\n\s*/g, "; ") || "the page could not be read";
  return { page_number: pageNumber, status: "failed", error_message: message, ocr, text: "", elements: [] };
}

/** All pages' text, pages separated by a blank line (empty pages add nothing). */
export function documentText(pages: DocPage[]): string {
  return pages
    .map((p) => p.text)
    .filter(Boolean)
    .join("\n\n");
}

/**
 * A read document on its way to the server without its whole text, which is its pages' texts
 * joined (documentText): every copy the server receives is deserialized on its event loop, and a
 * 10 MB document came as four (pages, elements, whole text, chunks).
 */
export const withoutWholeText = (doc: DocumentContent): DocumentContent => ({ ...doc, text: "" });

/** The whole text put back, on arrival (a join: a copy, not a parse). */
export const withWholeText = (doc: DocumentContent): DocumentContent => ({ ...doc, text: documentText(doc.pages) });

export function interrupted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error("extraction interrupted");
}
