/**
 * Cutting an extracted document into chunks for search, following its structure:
 * - a heading closes the current chunk and opens its section; the heading's text starts the
 *   section's first chunk and every chunk records the enclosing headings (outermost first);
 * - paragraphs, lists, key-value blocks and tables are packed into a chunk while it stays within
 *   `maxTokens` (the embedding model's window, counted by its own tokenizer);
 * - an element larger than the window is split at sentence ends (then between words), and
 *   consecutive pieces share `overlapTokens` tokens so a sentence cut in two is found from
 *   either side; a large table is split between rows, each piece repeating the header rows;
 * - figures carry no text and are skipped unless they have a caption.
 * Defaults: 256 tokens (all-MiniLM-L6-v2's window) with 32 tokens of overlap.
 */
import type { Chunk, DocElement, ExtractedDocument } from "./types.ts";

export interface ChunkingOptions {
  maxTokens: number;
  overlapTokens: number;
}

const DEFAULTS: ChunkingOptions = { maxTokens: 256, overlapTokens: 32 };

interface Piece {
  text: string;
  tokens: number;
  page: number;
  kind: Chunk["chunk_type"];
}

const KIND: Record<DocElement["type"], Chunk["chunk_type"]> = {
  heading: "text",
  paragraph: "text",
  figure: "text",
  table: "table",
  list: "list",
  key_value: "key_value",
};

function splitSentences(text: string): string[] {
  return text.match(/[^.!?\n]+(?:[.!?]+["')\]]*\s*|\n+|$)/g)?.map((s) => s) ?? [text];
}

/** Splits text that is over the window into overlapping pieces, at sentence ends where possible. */
function splitLong(text: string, count: (t: string) => number, options: ChunkingOptions): string[] {
  const units: string[] = [];
  for (const sentence of splitSentences(text)) {
    if (count(sentence) <= options.maxTokens) units.push(sentence);
    else units.push(...sentence.split(/(?<=\s)/)); // words, keeping their trailing space
  }
  const pieces: string[] = [];
  let current: string[] = [];
  let tokens = 0;
  for (const unit of units) {
    const n = count(unit);
    if (tokens + n > options.maxTokens && current.length) {
      pieces.push(current.join("").trim());
      // Carry the tail of this piece into the next one as overlap.
      const carried: string[] = [];
      let carriedTokens = 0;
      for (let i = current.length - 1; i >= 0; i--) {
        const t = count(current[i]!);
        if (carriedTokens + t > options.overlapTokens) break;
        carried.unshift(current[i]!);
        carriedTokens += t;
      }
      current = carried;
      tokens = carriedTokens;
    }
    current.push(unit);
    tokens += n;
  }
  if (current.join("").trim()) pieces.push(current.join("").trim());
  return pieces;
}

function splitTable(markdown: string, count: (t: string) => number, maxTokens: number): string[] {
  const lines = markdown.split("\n");
  const header = lines.slice(0, Math.min(2, lines.length));
  const headerTokens = count(header.join("\n"));
  const pieces: string[] = [];
  let rows: string[] = [];
  let tokens = headerTokens;
  for (const row of lines.slice(header.length)) {
    const n = count(row) + 1;
    if (rows.length && tokens + n > maxTokens) {
      pieces.push([...header, ...rows].join("\n"));
      rows = [];
      tokens = headerTokens;
    }
    rows.push(row);
    tokens += n;
  }
  if (rows.length || !pieces.length) pieces.push([...header, ...rows].join("\n"));
  return pieces;
}

export function chunkDocument(doc: ExtractedDocument, count: (text: string) => number, options: Partial<ChunkingOptions> = {}): Chunk[] {
  const opts = { ...DEFAULTS, ...options };
  const chunks: Chunk[] = [];
  const headings: { level: number; text: string }[] = [];
  let pieces: Piece[] = [];
  let tokens = 0;

  const flush = () => {
    if (!pieces.length) return;
    const byKind = new Map<Chunk["chunk_type"], number>();
    for (const p of pieces) byKind.set(p.kind, (byKind.get(p.kind) ?? 0) + p.tokens);
    const [topKind, topTokens] = [...byKind.entries()].sort((a, b) => b[1] - a[1])[0]!;
    const content = pieces.map((p) => p.text).join("\n\n");
    chunks.push({
      chunk_index: chunks.length,
      content,
      page_numbers: [...new Set(pieces.map((p) => p.page))].sort((a, b) => a - b),
      heading_hierarchy: headings.map((h) => h.text),
      token_count: pieces.reduce((n, p) => n + p.tokens, 0) + pieces.length - 1,
      chunk_type: topTokens >= 0.6 * tokens ? topKind : "mixed",
    });
    pieces = [];
    tokens = 0;
  };
  const add = (piece: Piece) => {
    if (pieces.length && tokens + piece.tokens + 1 > opts.maxTokens) flush();
    pieces.push(piece);
    tokens += piece.tokens + (pieces.length > 1 ? 1 : 0);
  };

  for (const page of doc.pages) {
    for (const element of page.elements) {
      const text = element.content.trim();
      if (!text) continue;
      if (element.type === "heading") {
        flush();
        const level = Number(element.metadata?.level) || 1;
        while (headings.length && headings.at(-1)!.level >= level) headings.pop();
        headings.push({ level, text });
        add({ text, tokens: count(text), page: page.page_number, kind: "text" });
        continue;
      }
      const kind = KIND[element.type];
      const n = count(text);
      if (n <= opts.maxTokens) {
        add({ text, tokens: n, page: page.page_number, kind });
        continue;
      }
      const parts = element.type === "table" ? splitTable(text, count, opts.maxTokens) : splitLong(text, count, opts);
      for (const part of parts) add({ text: part, tokens: count(part), page: page.page_number, kind });
    }
  }
  flush();
  return chunks;
}
