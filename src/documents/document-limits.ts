/**
 * The decode limits every document reader checks before doing the work, in one place (docs/documents.md,
 * "Document reading and its limits", lists the same numbers). They are generous for real documents (a 2,000-page
 * report reads) and stop the files built to exhaust a reader (zip bombs, millions of tiny
 * paragraphs, gigapixel images) with a reason, before the memory watchdog of document-reader.ts
 * has to. A file over a limit fails for good with a DocumentReadError.
 */
import { DocumentReadError } from "./types.ts";

const MiB = 1024 * 1024;

export const DOCUMENT_LIMITS = {
  /** PDF pages read (page_count still reports them all). */
  maxPages: 2_000,
  /** Elements (headings, paragraphs, tables...) in one document, whatever its format. */
  maxElements: 250_000,
  /**
   * Characters of text in one document, whatever its format (~8,000 pages of prose; a 2,000-page
   * report has ~6 million). The server stores a document's text several times over (pages,
   * elements, the whole text, chunks, the search index), each on its event loop: 100 MB of one
   * word held it for 3.4 s.
   */
  maxTextChars: 16_000_000,
  pdf: {
    /**
     * Images of more pixels are not decoded (pdf.js maxImageSize): a 600 dpi A4 scan is 35 MP; a
     * decoded image costs 4 bytes a pixel, several times over while it is drawn.
     */
    maxImagePixels: 40_000_000,
    /** Scanned pages are rendered for OCR at 200 dpi, at most this many pixels a side (16 MP). */
    ocrRenderMaxSide: 4_000,
  },
  docx: {
    /** Entries in the archive (a DOCX has tens; one with many pictures, hundreds). */
    maxEntries: 10_000,
    /** Sum of what the entries claim to inflate to. */
    maxTotalUncompressed: 512 * MiB,
    /** Any one XML part (word/document.xml above all). */
    maxPartBytes: 64 * MiB,
    /** Inflated/compressed size past which an entry over ratioFloorBytes is a bomb (text XML runs 5-150x; deflate's maximum is ~1030x). */
    maxCompressionRatio: 250,
    ratioFloorBytes: 1 * MiB,
    /** Paragraphs (w:p) in all XML parts together. */
    maxParagraphs: 100_000,
    /** XML elements in all parts together: mammoth holds ~2 KB of memory for each while it converts. */
    maxXmlElements: 500_000,
    /** Nesting depth of XML elements (tables in tables run a few tens deep). */
    maxXmlDepth: 256,
  },
  text: {
    /** Non-blank lines of a TXT or MD file (a 2,000-page text report has ~120,000). */
    maxLines: 1_000_000,
  },
} as const;

/** 67108864 → "64 MB" (binary megabytes, as the settings count them). */
export const megabytes = (bytes: number) => `${Math.round(bytes / MiB).toLocaleString("en-US")} MB`;

/** 1234567 → "1,234,567". */
export const count = (n: number) => n.toLocaleString("en-US");

/** The refusal of a document with more text than maxTextChars (`atLeast`: counted from its size before decoding). */
export const tooMuchText = (chars: number, atLeast = false) =>
  new DocumentReadError(
    `the document was not read: it holds ${atLeast ? "at least " : ""}${count(chars)} characters of text; the most Mediabox keeps is ${count(DOCUMENT_LIMITS.maxTextChars)}`,
  );
