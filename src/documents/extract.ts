/**
 * Reading a document into pages of typed elements: the entry point that picks the reader for
 * PDF, DOCX, TXT or MD. Readers throw DocumentExtractionError when the whole file is unreadable;
 * a page that fails is marked on its own.
 */
import { extractDocx } from "./extract-docx.ts";
import { extractPdf } from "./extract-pdf.ts";
import { extractPlain } from "./extract-text.ts";
import { DocumentExtractionError, type DocumentType, type ExtractedDocument } from "./types.ts";

export interface OcrLike {
  recognize(image: Buffer): Promise<{ text: string; regions: { text: string; bounding_box: { x_min: number; y_min: number; x_max: number; y_max: number } }[] }>;
}

export interface ExtractOptions {
  /** Reads pages that have no text layer (scanned PDFs). */
  ocr: OcrLike;
  signal?: AbortSignal;
  onPage?: (done: number, total: number) => void;
  /** Pages beyond this are not read (page_count still reports them all). Default 2000. */
  maxPages?: number;
}

export async function extractDocument(bytes: Uint8Array, type: DocumentType, options: ExtractOptions): Promise<ExtractedDocument> {
  if (bytes.length === 0) throw new DocumentExtractionError("the file is empty");
  switch (type) {
    case "pdf":
      return extractPdf(bytes, options);
    case "docx":
      return extractDocx(bytes);
    case "txt":
    case "md":
      return extractPlain(bytes, type);
  }
}
