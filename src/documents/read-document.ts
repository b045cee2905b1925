/**
 * Reading a document into pages of typed elements: the entry point that picks the reader for
 * PDF (read-pdf.ts), DOCX (read-docx.ts), TXT or MD (read-text.ts). Readers throw
 * DocumentReadError when the whole file is unreadable (empty, corrupt, encrypted, not the
 * format it claims) or is over a decode limit (document-limits.ts); a single page that fails is
 * marked failed on its own and the others go on. Nothing here touches the network. This runs in
 * the document reader's child process (document-reader.ts), never on the server's event loop.
 */
import type { Segmentation } from "../ocr/ocr.ts";
import type { LayoutRegionFinder } from "./layout-model/layout-detector.ts";
import { count, DOCUMENT_LIMITS, tooMuchText } from "./document-limits.ts";
import { interrupted } from "./reader-common.ts";
import { readDocx } from "./read-docx.ts";
import { readPdf } from "./read-pdf.ts";
import { readPlainText } from "./read-text.ts";
import { DocumentReadError, type DocumentContent } from "./types.ts";
import { DOCUMENT_TYPES, type DocumentType } from "../files/file.ts";

export interface OcrBox {
  x_min: number;
  y_min: number;
  x_max: number;
  y_max: number;
}

/** What extraction needs from OCR (src/ocr/ocr.ts's OcrEngine fits): lines, and their words when known. */
export interface OcrLike {
  recognize(image: Buffer, options?: { segmentation?: Segmentation }): Promise<{
    text: string;
    regions: { text: string; bounding_box: OcrBox; words?: { text: string; bounding_box: OcrBox }[] }[];
  }>;
}

export interface ReadOptions {
  /** Reads pages that have no text layer (scanned PDFs). */
  ocr: OcrLike;
  /** Checked between pages; extraction then rejects with "extraction interrupted". */
  signal?: AbortSignal;
  /** Called after each page is read. */
  onPage?: (done: number, total: number) => void;
  /** Pages beyond this are not read (page_count still reports them all). Default DOCUMENT_LIMITS.maxPages (2000). */
  maxPages?: number;
  /** A layout model finding PDF pages' regions (layout-model/); without one the rule-based layout serves alone. */
  layout?: LayoutRegionFinder | null;
}

export async function readDocument(bytes: Uint8Array, type: DocumentType, options: ReadOptions): Promise<DocumentContent> {
  if (!bytes || bytes.length === 0) throw new DocumentReadError("the file is empty");
  if (!DOCUMENT_TYPES.includes(type)) throw new DocumentReadError(`unsupported document type: ${String(type)}`);
  interrupted(options.signal);
  return withinElementLimit(await read(bytes, type, options));
}

function read(bytes: Uint8Array, type: DocumentType, options: ReadOptions): Promise<DocumentContent> | DocumentContent {
  switch (type) {
    case "pdf":
      return readPdf(bytes, options);
    case "docx":
      return readDocx(bytes, options.onPage);
    case "txt":
    case "md":
      return readPlainText(bytes, type, options.onPage);
  }
}

/** The last guard, whatever the format: what is stored, chunked and indexed stays bounded. */
function withinElementLimit(doc: DocumentContent): DocumentContent {
  const elements = doc.pages.reduce((n, p) => n + p.elements.length, 0);
  if (elements > DOCUMENT_LIMITS.maxElements) {
    throw new DocumentReadError(`the document was not read: it has ${count(elements)} elements (headings, paragraphs, tables...); the most Mediabox keeps is ${count(DOCUMENT_LIMITS.maxElements)}`);
  }
  if (doc.text.length > DOCUMENT_LIMITS.maxTextChars) throw tooMuchText(doc.text.length);
  return doc;
}
