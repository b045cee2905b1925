/** Which uploaded content is a document (plain text and Markdown, told by sniffing, are ingest/detect.ts's). */
import type { UploadedContent } from "../kinds/media-kind.ts";
import { FIXED_LIMITS } from "../tenancy/tiers.ts";

export const DOCUMENT_CONTENT: UploadedContent = {
  type: "document",
  detect({ ext, mime }) {
    if (ext === "pdf") return { mime, format: "pdf", documentType: "pdf" };
    if (ext === "docx") return { mime, format: "docx", documentType: "docx" };
    return null;
  },
  accepts: "documents (pdf, docx, txt, md)",
  maxStreamingBytes: FIXED_LIMITS.maxDocumentBytes,
  hints: {
    contentTypes: /^(application\/pdf|application\/vnd\.openxmlformats-officedocument\.wordprocessingml\.document|text\/plain|text\/markdown|text\/x-markdown)$/,
    names: /\.(pdf|docx|txt|text|md|markdown)$/i,
  },
};
