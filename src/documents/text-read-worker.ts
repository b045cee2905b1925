/**
 * Worker thread entry that reads a small plain-text or Markdown document, cuts it into chunks and
 * drafts its summary when asked (document-reader.ts sends them here instead of to the reader process). The work is bounded by
 * the size the reader allows here and linear in it; it runs off the event loop all the same.
 */
import { serveRequests } from "../native/worker-thread.ts";
import { approximateTokens, chunkDocument } from "./chunking.ts";
import { draftSummary, type SummaryDraft } from "../text/summary.ts";
import { readDocument } from "./read-document.ts";
import type { Chunk, DocumentContent } from "./types.ts";
import { DocumentReadError } from "./types.ts";
import { withoutWholeText } from "./reader-common.ts";
import { lowerThreadPriority } from "../native/thread-priority.ts";

export interface TextReadRequest {
  bytes: Uint8Array;
  type: "txt" | "md";
  /** Most tokens of a chunk's content (sizes estimated); null: no chunks. */
  maxTokens: number | null;
  /** Also draft the summary and keyphrases. */
  summarize: boolean;
}
export type TextReadReply = { doc: DocumentContent; chunks: Chunk[] | null; summary: SummaryDraft | null } | { error: string; permanent: boolean };

const NO_OCR = { recognize: () => Promise.reject(new Error("plain text has no images to read")) };

// Background work: the event loop that feeds this thread goes first on a busy machine.
lowerThreadPriority();

serveRequests<TextReadRequest, TextReadReply>(async ({ bytes, type, maxTokens, summarize }) => {
  try {
    const doc = await readDocument(bytes, type, { ocr: NO_OCR });
    const chunks = maxTokens === null ? null : chunkDocument(doc, approximateTokens, { maxTokens });
    const summary = summarize ? draftSummary(doc.text) : null;
    return { reply: { doc: withoutWholeText(doc), chunks, summary } };
  } catch (err) {
    return { reply: { error: err instanceof Error ? err.message : String(err), permanent: err instanceof DocumentReadError } };
  }
});
