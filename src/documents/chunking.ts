/**
 * Cuts an extracted document into chunks for search, following its structure and sized by the
 * embedding model's own tokenizer (`count`).
 *
 * Rules:
 * 1. Pages' elements are read in order. A heading (level from `metadata.level`, default 1) closes
 *    the current chunk and opens a section: headings of its level or deeper are dropped from the
 *    hierarchy and it is pushed. Every chunk records `heading_hierarchy`, the enclosing headings'
 *    texts outermost first; a chunk never holds body text from two sections.
 * 2. The heading's text starts the first chunk of its section, so searching for a section title
 *    finds its text. A heading followed directly by a deeper one carries its text into that
 *    subsection's first chunk ("Report\n\nIntroduction\n\n…"); a heading whose section has no body
 *    at all (next heading same level or shallower, or end of document) is a chunk by itself.
 * 3. Paragraphs, lists, key-value blocks, tables and figure captions are packed, separated by a
 *    blank line, into the current chunk while it stays within `maxTokens`; an element that does
 *    not fit starts the next chunk of the section. Figures without a caption are skipped.
 * 4. An element larger than `maxTokens` is split at line and sentence ends (within a sentence
 *    longer than the limit, between words; within a "word" longer than it, between characters).
 *    Consecutive pieces share up to `overlapTokens` tokens (the last words of a piece start the
 *    next), so text cut in two is still found from either side. An element that would fit alone
 *    but not next to its section's heading is split the same way so the heading keeps body text.
 * 5. A table too large is split between rows; every piece repeats the header row (and the
 *    Markdown separator row), with no overlap.
 * 6. Each chunk has `page_numbers` (sorted, unique pages of the elements it holds),
 *    `token_count` (its tokens by `count`), and `chunk_type`: the kind holding most of its tokens
 *    (paragraph/heading/figure caption → "text", table, list, key_value) when it holds at least
 *    60% of them, otherwise "mixed". `chunk_index` runs 0.. in order; a document without text
 *    gives [].
 *
 * Sizing: `count` must count what the model sees without its special tokens, and `maxTokens` is
 * the limit for a chunk's content, so a caller passes the model's window minus [CLS]/[SEP] (the
 * default, 254, is all-MiniLM-L6-v2's 256-token window minus those two). Text counts at least one
 * token per `minCharsPerToken` characters whatever `count` says, so no chunk is longer than
 * maxTokens * minCharsPerToken characters (~4 KB by default) even for text without words.
 * Speed: `count` reads each element once (an element long enough to be split likely is read
 * sentence by sentence instead, and a large table row by row), plus the few words carried as
 * overlap; sizes are then added. Adding is exact for tokenizers that split at whitespace
 * (WordPiece, as in MiniLM, and word counts): pieces are joined only at whitespace, so a
 * chunk's `token_count` equals count(content) (for an estimate that rounds up per call, the
 * sum is an upper bound, so the limit still holds). A 100-page document takes milliseconds with a
 * word count and about one tokenizer pass (~1.5 M tokens/s) with the MiniLM tokenizer.
 */
import type { Chunk, DocElement, ElementType, DocumentContent } from "./types.ts";

export interface ChunkingOptions {
  /** Most tokens (as `count` measures) in one chunk's content. */
  maxTokens: number;
  /**
   * Fewest characters a token is taken to hold when counting: text counts at least
   * length / minCharsPerToken tokens, so a chunk holds at most maxTokens * minCharsPerToken
   * characters whatever the tokenizer says (a 10 MB word is one unknown token to WordPiece and 1.3
   * to the estimate, and was one 10 MB chunk). Prose runs 4-6 characters a token, far from it.
   */
  minCharsPerToken: number;
  /** Tokens repeated between consecutive pieces of an element split for size (at most half of maxTokens). */
  overlapTokens: number;
}

export const DEFAULT_CHUNKING: Readonly<ChunkingOptions> = { maxTokens: 254, overlapTokens: 32, minCharsPerToken: 16 };

/** Without the model's tokenizer, chunk sizes use this estimate (word pieces run ~1.3 per word). */
export const approximateTokens = (text: string) => Math.ceil((text.match(/\S+/g)?.length ?? 0) * 1.3);

type Kind = Exclude<Chunk["chunk_type"], "mixed">;

const KIND: Record<ElementType, Kind> = {
  heading: "text",
  paragraph: "text",
  figure: "text",
  table: "table",
  list: "list",
  key_value: "key_value",
};

/** The share of a chunk's tokens one kind must hold to name the chunk's type. */
const DOMINANT_SHARE = 0.6;

type Count = (text: string) => number;

/** A piece of text with its token count; `sep` joins it to the piece before it in a split element. */
interface Unit {
  text: string;
  tokens: number;
  sep: string;
}

/** What a chunk is built from: an element or a piece of one. */
interface Part {
  text: string;
  tokens: number;
  page: number;
  kind: Kind;
  heading: boolean;
}

/** Sentence ends: terminal punctuation (and closing quotes/brackets) followed by whitespace. */
const SENTENCE_END = /(?<=[.!?…。！？]["'”’)\]]*)\s+/u;

/** The most of a heading's text every chunk of its section repeats (a "heading" can be a megabyte). */
const HEADING_LABEL_CHARS = 300;

function headingLabel(text: string): string {
  const label = text.slice(0, HEADING_LABEL_CHARS * 4).replace(/\s+/g, " ");
  return label.length > HEADING_LABEL_CHARS ? `${label.slice(0, safeCut(label, HEADING_LABEL_CHARS - 1))}…` : label;
}

function headingLevel(element: DocElement): number {
  const level = Number(element.metadata?.level);
  return Number.isFinite(level) && level >= 1 ? Math.floor(level) : 1;
}

/** A cut at `at` that does not split a surrogate pair (an emoji, a rare CJK character). */
function safeCut(text: string, at: number): number {
  if (at <= 0 || at >= text.length) return at;
  const code = text.charCodeAt(at);
  return code >= 0xdc00 && code <= 0xdfff && at > 1 ? at - 1 : at;
}

/**
 * Cuts one word longer than `cap` tokens into slices that fit (a run of symbols, a URL, base64,
 * 10 MB of one letter). Linear: the rest's tokens are estimated by subtracting each slice's, and
 * counted again only once the estimate says the rest may fit (recounting the rest after every
 * slice made a 10 MB word take minutes).
 */
function sliceWord(word: string, tokens: number, cap: number, count: Count, sep: string): Unit[] {
  const units: Unit[] = [];
  let at = 0;
  let restTokens = tokens;
  while (at < word.length) {
    if (restTokens <= cap) {
      const rest = word.slice(at);
      const n = count(rest);
      if (n <= cap) {
        units.push({ text: rest, tokens: n, sep: units.length ? " " : sep });
        break;
      }
      restTokens = n;
    }
    let length = Math.max(1, Math.floor(((word.length - at) * cap) / restTokens));
    let end = Math.max(at + 1, safeCut(word, at + length));
    let n = count(word.slice(at, end));
    while (n > cap && end - at > 1) {
      length = Math.max(1, Math.floor((end - at) / 2));
      end = Math.max(at + 1, safeCut(word, at + length));
      n = count(word.slice(at, end));
    }
    units.push({ text: word.slice(at, end), tokens: n, sep: units.length ? " " : sep });
    at = end;
    restTokens = Math.max(1, restTokens - n);
  }
  return units;
}

/** Lines, then sentences, of `text` as units of at most `cap` tokens (long sentences go to words). */
function* unitsOf(text: string, cap: number, count: Count): Generator<Unit> {
  for (const line of text.split(/\r?\n/)) {
    let sep = "\n";
    for (const sentence of line.split(SENTENCE_END)) {
      const trimmed = sentence.trim();
      if (!trimmed) continue;
      const tokens = count(trimmed);
      if (tokens <= cap) {
        yield { text: trimmed, tokens, sep };
      } else {
        for (const word of trimmed.split(/\s+/)) {
          const n = count(word);
          if (n <= cap) yield { text: word, tokens: n, sep };
          else yield* sliceWord(word, n, cap, count, sep);
          sep = " ";
        }
      }
      sep = " ";
    }
  }
}

const textUnits = (text: string, cap: number, count: Count): Unit[] => [...unitsOf(text, cap, count)];

const render = (units: Unit[]) => units.map((u, i) => (i ? u.sep : "") + u.text).join("");
const sum = (units: Unit[]) => units.reduce((n, u) => n + u.tokens, 0);

/** The last words of `units`, as one unit of at most `limit` tokens (null when nothing fits). */
function tailOverlap(units: Unit[], limit: number, count: Count): Unit | null {
  if (limit <= 0) return null;
  const words: string[] = [];
  let tokens = 0;
  for (let u = units.length - 1; u >= 0; u--) {
    const unitWords = units[u]!.text.split(/\s+/);
    for (let w = unitWords.length - 1; w >= 0; w--) {
      const word = unitWords[w]!;
      if (!word) continue;
      const n = count(word);
      if (tokens + n > limit) return words.length ? { text: words.join(" "), tokens, sep: "" } : null;
      words.unshift(word);
      tokens += n;
    }
  }
  return words.length ? { text: words.join(" "), tokens, sep: "" } : null;
}

/**
 * Packs units into pieces: the first of at most `firstCap` tokens, the others of at most `cap`,
 * each after the first starting with up to `overlap` tokens of the one before. The first piece is
 * empty when not even the first unit fits in `firstCap`. Every unit must be at most `cap`.
 */
function packUnits(units: Iterable<Unit>, firstCap: number, cap: number, overlap: number, count: Count): Unit[] {
  const pieces: Unit[] = [];
  let current: Unit[] = [];
  let tokens = 0;
  let limit = firstCap;
  let fresh = 0; // units in `current` that are not overlap
  for (const unit of units) {
    if (tokens + unit.tokens > limit) {
      if (fresh > 0) {
        pieces.push({ text: render(current), tokens, sep: "" });
        const carried = tailOverlap(current, Math.min(overlap, cap - unit.tokens), count);
        current = carried ? [carried] : [];
        tokens = carried?.tokens ?? 0;
        fresh = 0;
      } else {
        pieces.push({ text: "", tokens: 0, sep: "" });
      }
      limit = cap;
    }
    current.push(unit);
    tokens += unit.tokens;
    fresh++;
  }
  if (fresh > 0) pieces.push({ text: render(current), tokens, sep: "" });
  return pieces;
}

const TABLE_SEPARATOR = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

/**
 * An element's text, measured once: its token count, and its pieces when it has to be split
 * (the first of at most `firstCap` tokens, possibly empty; the others of at most `cap`).
 */
interface Measured {
  text: string;
  tokens: number;
  pieces(firstCap: number): Unit[];
}

/**
 * Elements longer than this many characters per token of the limit are measured sentence by
 * sentence right away (as costly as one count of the whole), since they are likely split anyway.
 */
const LIKELY_SPLIT_CHARS_PER_TOKEN = 2;

/**
 * Elements longer than this are measured and cut without holding a unit per sentence or word at
 * once (counted twice instead): a 10 MB paragraph of one-letter words held 5 million units, 800 MB.
 */
const STREAMED_ELEMENT_CHARS = 200_000;

function measureText(text: string, cap: number, overlap: number, count: Count, minCharsPerToken: number): Measured {
  if (text.length > STREAMED_ELEMENT_CHARS) {
    let tokens = 0;
    for (const unit of unitsOf(text, cap, count)) tokens += unit.tokens;
    return {
      // Its text is used only when it fits in a chunk whole: then it has few units.
      text: tokens <= cap && text.length > tokens * minCharsPerToken ? render([...unitsOf(text, cap, count)]) : text,
      tokens,
      pieces: (firstCap) => packUnits(unitsOf(text, cap, count), firstCap, cap, overlap, count),
    };
  }
  let units = text.length > cap * LIKELY_SPLIT_CHARS_PER_TOKEN ? textUnits(text, cap, count) : null;
  const tokens = units ? sum(units) : count(text);
  return {
    // Units leave out the whitespace between them: text mostly made of it (a heading of a
    // megabyte of spaces) is kept as its units, joined by one separator each.
    text: units && text.length > tokens * minCharsPerToken ? render(units) : text,
    tokens,
    pieces: (firstCap) => packUnits((units ??= textUnits(text, cap, count)), firstCap, cap, overlap, count),
  };
}

/** A Markdown table: split between rows, each piece starting with the header row(s), no overlap. */
function measureTable(text: string, cap: number, overlap: number, count: Count, minCharsPerToken: number): Measured {
  const lines = text.split(/\r?\n/).filter((line) => line.trim());
  const headerLines = lines.length > 1 && TABLE_SEPARATOR.test(lines[1]!) ? 2 : 1;
  const header = lines.slice(0, headerLines).join("\n");
  const rowLines = lines.slice(headerLines);
  // Rows are measured one by one only for a table that is likely split.
  if (text.length <= cap * LIKELY_SPLIT_CHARS_PER_TOKEN || rowLines.length === 0) {
    const tokens = count(text);
    return { text, tokens, pieces: (firstCap) => measureRows().pieces(firstCap) };
  }
  return measureRows();

  function measureRows(): Measured {
    const headerTokens = count(header);
    // A header that leaves no room for rows, or a table of one line, is split as text.
    if (!rowLines.length || headerTokens > cap / 2) return measureText(text, cap, overlap, count, minCharsPerToken);
    const rows = rowLines.map((row) => ({ text: row, tokens: count(row) }));
    return {
      text,
      tokens: headerTokens + rows.reduce((n, r) => n + r.tokens, 0),
      pieces(firstCap) {
        const pieces: Unit[] = [];
        let current: string[] = [];
        let tokens = headerTokens;
        let limit = firstCap;
        const close = () => {
          pieces.push({ text: current.length ? [header, ...current].join("\n") : "", tokens: current.length ? tokens : 0, sep: "" });
          current = [];
          tokens = headerTokens;
          limit = cap;
        };
        for (const row of rows) {
          if (headerTokens + row.tokens > cap) {
            // A row too long even for a piece of its own becomes pieces of its own, as text.
            if (current.length || !pieces.length) close();
            pieces.push(...measureText(row.text, cap, overlap, count, minCharsPerToken).pieces(cap));
            continue;
          }
          if (tokens + row.tokens > limit) close();
          current.push(row.text);
          tokens += row.tokens;
        }
        if (current.length) close();
        return pieces;
      },
    };
  }
}

function normalizeOptions(options: Partial<ChunkingOptions>): ChunkingOptions {
  const maxTokens = Math.floor(options.maxTokens ?? DEFAULT_CHUNKING.maxTokens);
  if (!(maxTokens >= 1)) throw new RangeError(`chunking maxTokens must be at least 1, got ${options.maxTokens}`);
  const overlap = Math.floor(options.overlapTokens ?? DEFAULT_CHUNKING.overlapTokens);
  if (!(overlap >= 0)) throw new RangeError(`chunking overlapTokens must be 0 or more, got ${options.overlapTokens}`);
  const minCharsPerToken = options.minCharsPerToken ?? DEFAULT_CHUNKING.minCharsPerToken;
  if (!(minCharsPerToken >= 1)) throw new RangeError(`chunking minCharsPerToken must be at least 1, got ${options.minCharsPerToken}`);
  return { maxTokens, overlapTokens: Math.min(overlap, Math.floor(maxTokens / 2)), minCharsPerToken };
}

export function chunkDocument(doc: DocumentContent, countTokens: Count, options: Partial<ChunkingOptions> = {}): Chunk[] {
  const { maxTokens, overlapTokens, minCharsPerToken } = normalizeOptions(options);
  const count: Count = (text) => Math.max(countTokens(text), Math.ceil(text.length / minCharsPerToken));
  const chunks: Chunk[] = [];
  const hierarchy: { level: number; text: string }[] = [];
  let parts: Part[] = [];
  let partTokens = 0;

  const emit = () => {
    if (!parts.length) return;
    const content = parts.map((p) => p.text).join("\n\n");
    const byKind = new Map<Kind, number>();
    for (const p of parts) byKind.set(p.kind, (byKind.get(p.kind) ?? 0) + p.tokens);
    let top: Kind = "text";
    let topTokens = -1;
    for (const [kind, n] of byKind) if (n > topTokens) [top, topTokens] = [kind, n];
    chunks.push({
      chunk_index: chunks.length,
      content,
      page_numbers: [...new Set(parts.map((p) => p.page))].sort((a, b) => a - b),
      heading_hierarchy: hierarchy.map((h) => h.text),
      token_count: partTokens,
      chunk_type: partTokens === 0 || topTokens >= DOMINANT_SHARE * partTokens ? top : "mixed",
    });
    parts = [];
    partTokens = 0;
  };
  const add = (part: Part) => {
    parts.push(part);
    partTokens += part.tokens;
  };
  const onlyHeadings = () => parts.length > 0 && parts.every((p) => p.heading);

  /** Adds an element too large for the room left: its pieces, all but the last as chunks of their own. */
  const addSplit = (element: Measured, kind: Kind, page: number, firstCap: number) => {
    const pieces = element.pieces(firstCap);
    pieces.forEach((piece, i) => {
      if (piece.text) add({ text: piece.text, tokens: piece.tokens, page, kind, heading: false });
      if (i < pieces.length - 1) emit();
    });
  };

  for (const page of doc.pages) {
    for (const element of page.elements) {
      // Figures without a caption and empty blocks add nothing; running headers and footers would repeat on every chunk.
      if (!element.content.trim() || element.metadata?.furniture) continue;
      const kind = KIND[element.type];
      const measured = (element.type === "table" ? measureTable : measureText)(element.content.trim(), maxTokens, overlapTokens, count, minCharsPerToken);
      const { text, tokens } = measured;
      const pageNumber = page.page_number;

      if (element.type === "heading") {
        const level = headingLevel(element);
        const deeper = hierarchy.length > 0 && level > hierarchy.at(-1)!.level;
        // Only headings so far: a subsection carries them into its first chunk; otherwise
        // (or with body text) the current chunk is complete.
        if (!(onlyHeadings() && deeper && partTokens + tokens <= maxTokens / 2)) emit();
        while (hierarchy.length && hierarchy.at(-1)!.level >= level) hierarchy.pop();
        hierarchy.push({ level, text: headingLabel(text) });
        if (tokens <= maxTokens) add({ text, tokens, page: pageNumber, kind, heading: true });
        else addSplit(measured, kind, pageNumber, maxTokens); // a "heading" as long as a chunk
        continue;
      }

      if (partTokens + tokens <= maxTokens) {
        add({ text, tokens, page: pageNumber, kind, heading: false });
      } else if (onlyHeadings() && maxTokens - partTokens >= maxTokens / 2) {
        // Keep the section's heading with the start of its body.
        addSplit(measured, kind, pageNumber, maxTokens - partTokens);
      } else {
        emit();
        if (tokens <= maxTokens) add({ text, tokens, page: pageNumber, kind, heading: false });
        else addSplit(measured, kind, pageNumber, maxTokens);
      }
    }
  }
  emit();
  return chunks;
}
