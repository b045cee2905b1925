/**
 * The messages between the server and its document reader child process (document-reader.ts and
 * reader-child.ts), sent over Bun's IPC channel (structured clone, so byte arrays travel as they
 * are). One read (or page render) is in flight at a time; `id` ties every message to it. The document's bytes go
 * through a scratch file rather than the channel: cloning a 50 MB message stalls the server's
 * event loop for ~100 ms.
 */
import type { Segmentation } from "../ocr/ocr.ts";
import type { OcrLike } from "./read-document.ts";
import type { Chunk, DocumentContent } from "./types.ts";
import type { DocumentType } from "../files/file.ts";
import type { SummaryDraft } from "../text/summary.ts";

/** The hidden `mediabox` command that runs the reader (src/main.ts dispatches it). */
export const DOCUMENT_READER_COMMAND = "__document-reader";
/** Set by the parent to its pid, so the child can tell when it has been orphaned. */
export const READER_PARENT_ENV = "MEDIABOX_READER_PARENT_PID";

export type OcrAnswer = Awaited<ReturnType<OcrLike["recognize"]>>;

/**
 * How the child cuts the document into chunks after reading it (chunking a 2,000-page document
 * takes seconds with the model's tokenizer: that too belongs off the server's event loop).
 * `tokenizer`: the text model's folder, already checked by the server (manifest included); null
 * means sizes are estimated (approximateTokens).
 */
export interface ChunkingRequest {
  tokenizer: { modelsDir: string; model: string } | null;
  /** Most tokens of a chunk's content: the model's window less [CLS] and [SEP] (the child takes the document prompt off). */
  maxTokens: number;
}

/** The layout model the child finds PDF pages' regions with (layout-model/), already checked by the server (manifest included). */
export interface LayoutRequest {
  modelsDir: string;
  model: string;
}

export type ToReader =
  | { type: "read"; id: number; path: string; documentType: DocumentType; chunking: ChunkingRequest | null; summarize: boolean; layout: LayoutRequest | null }
  /** Draw one page of the PDF at `path` `width` pixels wide (null: the default size), as WebP (render-page.ts). */
  | { type: "render"; id: number; path: string; page: number; width: number | null }
  | { type: "ocr-result"; id: number; ocrId: number; result?: OcrAnswer; error?: string };

export type FromReader =
  | { type: "ready" }
  /** The child has the read in hand: from here on, its death is the document's doing. */
  | { type: "reading"; id: number }
  | { type: "page"; id: number; done: number; total: number }
  | { type: "ocr"; id: number; ocrId: number; png: Uint8Array; segmentation?: Segmentation }
  /** `chunks` when chunking was asked for; `exactTokens` false when sizes were estimated; `summary` when asked for and there is text. */
  | { type: "done"; id: number; doc: DocumentContent; chunks: Chunk[] | null; exactTokens: boolean; summary: SummaryDraft | null }
  /** A render's answer. */
  | { type: "rendered"; id: number; webp: Uint8Array; width: number; height: number }
  /** `permanent`: the file itself cannot be read (a DocumentReadError), so retrying is useless. */
  | { type: "failed"; id: number; message: string; permanent: boolean };
