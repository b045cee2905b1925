/**
 * Plain text and Markdown. Logical pages are split at form feeds (one page when there are none).
 *
 * Markdown: `#`..`######` headings (level = number of #), setext headings (=== level 1, --- level
 * 2), `-` `*` `+` `1.` `1)` lists (nested items indented two spaces per level), pipe tables (kept
 * as Markdown, normalized), fenced code blocks as paragraphs with metadata.code, images
 * `![alt](src)` as figures whose content is the alt text, YAML front matter as key-value pairs.
 * Inline markup is dropped so the text reads plainly: **bold**, _emphasis_, `code`,
 * [links](url) → their text.
 *
 * Plain text: blocks split on blank lines; a short line underlined with === (level 1) or ---
 * (level 2) or a short ALL-CAPS line is a heading; bulleted/numbered lines form lists (indented
 * lines continue an item); "Label: value" lines form key-value elements; lines of pipe-separated
 * cells or of columns separated by 2+ spaces/tabs form tables.
 *
 * Neither format has geometry, so boxes are synthetic (layoutBoxes in reader-common.ts). Files
 * with more lines or blocks than DOCUMENT_LIMITS allows are refused before they are parsed.
 */
import { classifyLines, completedPage, documentText, isBullet, joinLines, layoutBoxes, tableDraft, type Draft } from "./reader-common.ts";
import { DocumentReadError, type DocPage, type DocumentContent } from "./types.ts";
import { count, DOCUMENT_LIMITS, tooMuchText } from "./document-limits.ts";

/** Bytes → text: UTF-8 (BOM dropped), UTF-16 with a BOM, or Windows-1252 when the bytes are not valid UTF-8. */
export function decodeText(bytes: Uint8Array): string {
  let text: string;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) text = new TextDecoder("utf-16le").decode(bytes.subarray(2));
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) text = new TextDecoder("utf-16be").decode(bytes.subarray(2));
  else {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      text = new TextDecoder("windows-1252").decode(bytes);
    }
  }
  text = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const controls = text.match(/[\u0000-\u0008\u000e-\u001f]/g)?.length ?? 0;
  if (controls > Math.max(8, text.length * 0.01)) throw new DocumentReadError("the file does not look like text (it holds binary data)");
  return text;
}

// ---------------------------------------------------------------- shared

/** Lines of one block → drafts: runs of list items (bulleted lines and the indented lines under them) and runs of other lines. */
export function segmentLines(lines: string[]): Draft[] {
  const drafts: Draft[] = [];
  let run: string[] = [];
  let listRun = false;
  const flush = () => {
    const draft = classifyLines(run);
    if (draft) drafts.push(draft);
    run = [];
  };
  for (const line of lines) {
    if (!line.trim()) continue;
    const bullet = isBullet(line);
    if (bullet && !listRun) {
      flush();
      listRun = true;
    } else if (!bullet && listRun && !/^\s{2,}\S/.test(line)) {
      flush();
      listRun = false;
    }
    run.push(line);
  }
  flush();
  return drafts;
}

const DELIMITER_ROW = /^\s*\|?\s*:?-{1,}:?\s*(?:\|\s*:?-{1,}:?\s*)*\|?\s*$/;

function splitPipes(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  const body = line.trim().replace(/^\|/, "").replace(/(?<!\\)\|$/, "");
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === "\\" && body[i + 1] === "|") {
      cell += "|";
      i++;
    } else if (c === "|") {
      cells.push(cell);
      cell = "";
    } else cell += c;
  }
  cells.push(cell);
  return cells.map((c) => c.trim());
}

function pipeTable(lines: string[], inline: (s: string) => string = (s) => s): Draft {
  const rows = lines.filter((l) => !(DELIMITER_ROW.test(l) && l.includes("-"))).map((l) => splitPipes(l).map(inline));
  return tableDraft(rows);
}

// ---------------------------------------------------------------- Markdown

function stripInline(text: string): string {
  return text
    // Every span is bounded and none crosses the start of another of its kind, so each position is
    // scanned a bounded number of times: an opener without a closer once scanned its whole window
    // (1,000 characters) for every opener in the line, and 5 MB of "[" took 14 s.
    .replace(/!\[([^[\]]{0,1000})\]\([^()]{0,2000}\)/g, "$1")
    .replace(/\[([^[\]]{1,1000})\]\([^()]{0,2000}\)/g, "$1")
    .replace(/\[([^[\]]{1,1000})\]\[[^[\]]{0,1000}\]/g, "$1")
    .replace(/<((?:https?|mailto):[^<>\s]{1,2000})>/g, "$1")
    .replace(/<br\s*\/?>/gi, " ")
    .replace(/(?<!`)(`+)(?!`)([^`]{1,2000}?)\1(?!`)/g, "$2")
    .replace(/(\*\*|__)(?=\S)((?:(?!\1).){1,1000}?)(?<=\S)\1/g, "$2")
    .replace(/~~(?=\S)((?:(?!~~).){1,1000}?)(?<=\S)~~/g, "$1")
    .replace(/(^|[^\p{L}\p{N}*])\*(?=\S)([^*]{1,1000}?)(?<=\S)\*(?![\p{L}\p{N}*])/gu, "$1$2")
    .replace(/(^|[^\p{L}\p{N}_])_(?=\S)([^_]{1,1000}?)(?<=\S)_(?![\p{L}\p{N}_])/gu, "$1$2")
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, "$1");
}

const ATX_OPEN = /^ {0,3}(#{1,6})(?=[ \t]|$)/;

/**
 * An ATX heading's level and text ("## Title ##" → 2, "Title"), or null. Scanned by hand: the one
 * regular expression for it backtracked over trailing blanks, and a heading line of 80,000 spaces
 * took 22 s.
 */
function atxHeading(line: string): { level: number; text: string } | null {
  const open = ATX_OPEN.exec(line);
  if (!open) return null;
  const blank = (c: string | undefined) => c === " " || c === "\t";
  let start = open[0].length;
  let end = line.length;
  while (start < end && blank(line[start])) start++;
  while (end > start && blank(line[end - 1])) end--;
  // A closing run of # (alone, or after a blank) is not part of the text.
  let hashes = end;
  while (hashes > start && line[hashes - 1] === "#") hashes--;
  if (hashes < end && (hashes === start || blank(line[hashes - 1]))) {
    end = hashes;
    while (end > start && blank(line[end - 1])) end--;
  }
  return { level: open[1]!.length, text: line.slice(start, end) };
}
const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const MD_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const THEMATIC = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const IMAGE_LINE = /^\s*!\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)\s*$/;

/** Title and author from YAML front matter, when the Markdown file starts with it. */
function frontMatterFields(drafts: Draft[]): { title: string | null; author: string | null } {
  const fm = drafts.find((d) => d.metadata?.front_matter === true);
  const field = (name: string) => fm?.content.split("\n").find((l) => l.toLowerCase().startsWith(`${name}: `))?.slice(name.length + 2).trim() || null;
  return { title: field("title"), author: field("author") };
}

function markdownPage(text: string, frontMatter: boolean): Draft[] {
  const drafts: Draft[] = [];
  const lines = text.split("\n");
  let paragraph: string[] = [];
  let items: { depth: number; marker: string; text: string }[] = [];
  /** Indents of the open list levels, outermost first. */
  let indents: number[] = [];
  const flushParagraph = () => {
    for (const draft of segmentLines(paragraph.map(stripInline))) drafts.push(draft);
    paragraph = [];
  };
  const flushList = () => {
    if (!items.length) return;
    const ordered = /\d/.test(items[0]!.marker);
    // Nested items keep their level as indentation; numbers restart per level as written.
    const content = items.map((i) => `${"  ".repeat(i.depth)}${/\d/.test(i.marker) ? `${/\d+/.exec(i.marker)![0]}.` : "-"} ${stripInline(joinLines([i.text]))}`).join("\n");
    drafts.push({ type: "list", content, metadata: { ordered, items: items.length } });
    items = [];
  };
  const flush = () => {
    flushParagraph();
    flushList();
  };
  let i = 0;
  if (frontMatter && /^---\s*$/.test(lines[0] ?? "")) {
    const end = lines.findIndex((l, n) => n > 0 && /^(---|\.\.\.)\s*$/.test(l));
    if (end > 0) {
      const pairs = lines.slice(1, end).map((l) => /^([\w .-]{1,40}):\s*(.+)$/.exec(l)).filter((m) => m !== null);
      if (pairs.length) drafts.push({ type: "key_value", content: pairs.map((m) => `${m[1]!.trim()}: ${m[2]!.trim().replace(/^["']|["']$/g, "")}`).join("\n"), metadata: { pairs: pairs.length, front_matter: true } });
      i = end + 1;
    }
  }
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const code: string[] = [];
      const close = new RegExp(`^ {0,3}${fence[1]![0] === "`" ? "`" : "~"}{${fence[1]!.length},}\\s*$`);
      for (i += 1; i < lines.length && !close.test(lines[i]!); i++) code.push(lines[i]!);
      const body = code.join("\n").replace(/^\n+|\s+$/g, "");
      if (body) drafts.push({ type: "paragraph", content: body, metadata: { code: true, ...(fence[2] ? { language: fence[2] } : {}) } });
      continue;
    }
    if (/^\s*<!--/.test(line)) {
      flush();
      while (i < lines.length && !lines[i]!.includes("-->")) i++;
      continue;
    }
    const heading = atxHeading(line);
    if (heading) {
      flush();
      const content = stripInline(heading.text.trim());
      if (content) drafts.push({ type: "heading", content, metadata: { level: heading.level } });
      continue;
    }
    // Setext: a paragraph underlined with === or ---.
    if (paragraph.length && !items.length && /^ {0,3}(=+|-+)\s*$/.test(line)) {
      const content = joinLines(paragraph.map(stripInline));
      paragraph = [];
      drafts.push({ type: "heading", content, metadata: { level: line.trim().startsWith("=") ? 1 : 2 } });
      continue;
    }
    if (THEMATIC.test(line)) {
      flush();
      continue;
    }
    const next = lines[i + 1] ?? "";
    if (line.includes("|") && ((DELIMITER_ROW.test(next) && next.includes("-") && next.includes("|")) || (/^\s*\|.*\|\s*$/.test(line) && /^\s*\|.*\|\s*$/.test(next)))) {
      flush();
      const rows: string[] = [];
      for (; i < lines.length && lines[i]!.trim() && lines[i]!.includes("|"); i++) rows.push(lines[i]!);
      i -= 1;
      drafts.push(pipeTable(rows, stripInline));
      continue;
    }
    const image = IMAGE_LINE.exec(line);
    if (image) {
      flush();
      drafts.push({ type: "figure", content: stripInline(image[1]!.trim()), metadata: { alt: image[1]!.trim(), src: image[2] } });
      continue;
    }
    const item = MD_ITEM.exec(line);
    if (item) {
      flushParagraph();
      const indent = item[1]!.replace(/\t/g, "    ").length;
      // A top-level item of the other kind (bullet vs number) starts a new list.
      if (items.length && indent <= indents[0]! && /\d/.test(item[2]!) !== /\d/.test(items[0]!.marker)) flushList();
      if (!items.length) indents = [indent];
      else if (indent > indents.at(-1)! + 1) indents.push(indent);
      else while (indents.length > 1 && indent < indents.at(-1)! - 1) indents.pop();
      items.push({ depth: Math.min(5, indents.length - 1), marker: item[2]!, text: item[3]!.trim() });
      continue;
    }
    if (!line.trim()) {
      // A blank line ends a paragraph; a list continues if the next non-blank line is indented or another item.
      flushParagraph();
      if (items.length) {
        // Look ahead without copying the rest of the file (a copy per blank line is quadratic).
        let k = i + 1;
        while (k < lines.length && !lines[k]!.trim()) k++;
        const following = lines[k];
        if (!following || !(/^\s{2,}\S/.test(following) || MD_ITEM.test(following))) flushList();
      }
      continue;
    }
    if (items.length) {
      // Continuation of the last item (indented, or lazily wrapped right under it).
      const last = items.at(-1)!;
      last.text += ` ${line.trim().replace(/^>\s?/, "")}`;
      continue;
    }
    paragraph.push(line.replace(/^\s{0,3}>\s?/, ""));
  }
  flush();
  return drafts;
}

// ---------------------------------------------------------------- plain text

function isCapsTitle(line: string): boolean {
  const t = line.trim();
  if (t.length > 60) return false;
  const letters = t.replace(/[^\p{L}]/gu, "");
  return letters.length >= 3 && letters === letters.toUpperCase() && letters !== letters.toLowerCase() && t.split(/\s+/).length <= 8 && !/[.,;!?]$/.test(t);
}

/** Columns separated by a tab or 2+ spaces, the same number on every line, short cells. */
function spacedTable(lines: string[]): string[][] | null {
  if (lines.length < 2) return null;
  const rows = lines.map((l) => l.trim().split(/\t+|\s{2,}/));
  const columns = rows[0]!.length;
  if (columns < 2 || rows.some((r) => r.length !== columns)) return null;
  const cells = rows.flat();
  if (cells.reduce((n, c) => n + c.length, 0) / cells.length > 30) return null;
  return rows;
}

type TextDraft = Draft & { underline?: "=" | "-" | "caps" };

function textBlock(block: string[]): TextDraft[] {
  const drafts: TextDraft[] = [];
  // Headings at the top of the block, one after another (a loop: a block of 80,000 ALL-CAPS lines
  // recursed once a line, copying the rest each time, for 14 s).
  let top = 0;
  for (;;) {
    const first = block[top];
    if (first === undefined) return drafts;
    const second = block[top + 1];
    if (second !== undefined && /^\s*(={3,}|-{3,})\s*$/.test(second) && first.trim().length <= 80 && !isBullet(first)) {
      drafts.push({ type: "heading", content: first.trim(), underline: second.trim()[0] as "=" | "-" });
      top += 2;
    } else if (isCapsTitle(first) && !isBullet(first) && !first.includes("|") && columnCount(first) < 2) {
      drafts.push({ type: "heading", content: first.trim(), underline: "caps" });
      top += 1;
    } else break;
  }
  const lines = top ? block.slice(top) : block;
  if (lines.length >= 2 && lines.every((l) => /^\s*\|.*\|\s*$/.test(l) || (DELIMITER_ROW.test(l) && l.includes("-")))) {
    drafts.push(pipeTable(lines));
    return drafts;
  }
  // Runs of at least two lines with the same number of spaced columns are tables; the rest is text.
  let rest: string[] = [];
  for (let i = 0; i < lines.length; ) {
    const cells = columnCount(lines[i]!);
    let end = i + 1;
    while (cells >= 2 && end < lines.length && columnCount(lines[end]!) === cells) end++;
    const table = end - i >= 2 ? spacedTable(lines.slice(i, end)) : null;
    if (table) {
      for (const draft of segmentLines(rest)) drafts.push(draft);
      drafts.push(tableDraft(table));
      rest = [];
      i = end;
    } else rest.push(lines[i++]!);
  }
  for (const draft of segmentLines(rest)) drafts.push(draft);
  return drafts;
}

const columnCount = (line: string) => (isBullet(line) ? 1 : line.trim().split(/\t+|\s{2,}/).length);

function textPages(pages: string[]): Draft[][] {
  const parsed = pages.map((text) => text.split(/\n[ \t]*\n/).flatMap((block) => textBlock(block.split("\n").filter((l) => l.trim()))));
  // Underlined with === is the top level; --- and ALL-CAPS titles sit below it when both kinds occur.
  const hasDouble = parsed.flat().some((d) => d.underline === "=");
  return parsed.map((drafts) =>
    drafts.map(({ underline, ...d }) => (d.type === "heading" ? { ...d, metadata: { level: underline === "=" ? 1 : underline === "-" ? 2 : hasDouble ? 2 : 1 } } : d)),
  );
}

/** Refuses text with more lines or blocks than the limits allow, before any of it is split or parsed. */
function checkTextLimits(text: string): void {
  let lines = 1;
  let blocks = 1;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) {
    lines += 1;
    // A blank line (or a form feed) ends a block: each block becomes at least one element.
    if (text.charCodeAt(at + 1) === 10 || text.charCodeAt(at + 1) === 12) blocks += 1;
    if (lines > DOCUMENT_LIMITS.text.maxLines) {
      throw new DocumentReadError(`the file was not read: it has more than ${count(DOCUMENT_LIMITS.text.maxLines)} lines, the most Mediabox reads`);
    }
  }
  if (blocks > DOCUMENT_LIMITS.maxElements) {
    throw new DocumentReadError(`the file was not read: it has more than ${count(DOCUMENT_LIMITS.maxElements)} blocks of text, the most elements Mediabox reads in one document`);
  }
}

export function readPlainText(bytes: Uint8Array, type: "txt" | "md", onPage?: (done: number, total: number) => void): DocumentContent {
  // Refused before anything is decoded or parsed: at least one character per 4 bytes of UTF-8.
  if (bytes.byteLength / 4 > DOCUMENT_LIMITS.maxTextChars) throw tooMuchText(Math.floor(bytes.byteLength / 4), true);
  const raw = decodeText(bytes);
  if (raw.length > DOCUMENT_LIMITS.maxTextChars) throw tooMuchText(raw.length);
  checkTextLimits(raw);
  const texts = raw.split("\f");
  // A trailing form feed ends the last page; it does not start an empty one.
  if (texts.length > 1 && !texts.at(-1)!.trim()) texts.pop();
  const drafts = type === "md" ? texts.map((t, i) => markdownPage(t, i === 0)) : textPages(texts);
  const pages: DocPage[] = drafts.map((d, i) => {
    const page = completedPage(i + 1, layoutBoxes(d));
    onPage?.(i + 1, drafts.length);
    return page;
  });
  const fields = type === "md" ? frontMatterFields(drafts[0] ?? []) : { title: null, author: null };
  const title = fields.title ?? pages.flatMap((p) => p.elements).find((e) => e.type === "heading")?.content ?? null;
  return { document_type: type, page_count: pages.length, pages, text: documentText(pages), metadata: { title, author: fields.author } };
}
