/**
 * The shapes a document passes through: what extraction reads from a PDF, DOCX, TXT or MD file
 * (pages of typed elements with normalized boxes), and the chunks cut from it for search.
 */
import type { DocumentType } from "../files/file.ts";

export const ELEMENT_TYPES = ["heading", "paragraph", "table", "key_value", "list", "figure"] as const;
export type ElementType = (typeof ELEMENT_TYPES)[number];

/** Normalized 0-1 relative to the page, origin top-left. */
export interface BoundingBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface DocElement {
  type: ElementType;
  /** Plain text; tables as Markdown; lists one item per line ("- item" / "1. item"); key_value as "Key: value". */
  content: string;
  bounding_box: BoundingBox;
  /** e.g. { level: 1 } for headings, { rows, columns } for tables, { ordered } for lists, { font_size }, { ocr: true }. */
  metadata?: Record<string, unknown>;
}

export interface DocPage {
  /** 1-indexed. */
  page_number: number;
  status: "completed" | "failed";
  error_message: string | null;
  /** True when the page had no text layer and was read by OCR. */
  ocr: boolean;
  /** Plain text of the page in reading order. */
  text: string;
  elements: DocElement[];
}

export interface DocumentContent {
  document_type: DocumentType;
  page_count: number;
  pages: DocPage[];
  /** All pages' text, pages separated by a blank line. */
  text: string;
  metadata: { title: string | null; author: string | null };
}

/** The whole file cannot be read (corrupt, encrypted, empty): the document fails with this message. */
export class DocumentReadError extends Error {
  override name = "DocumentReadError";
}

export interface Chunk {
  chunk_index: number;
  content: string;
  page_numbers: number[];
  /** Titles of the enclosing headings, outermost first. */
  heading_hierarchy: string[];
  token_count: number;
  /** The kind of content the chunk mostly holds. */
  chunk_type: "text" | "table" | "list" | "key_value" | "mixed";
}
