/**
 * The document reader's child process: `mediabox __document-reader`, started by document-reader.ts.
 * It reads one document at a time with readDocument (pdf.js, mammoth, the text readers) and
 * cuts it into chunks (with the text model's tokenizer when the server names one), and draws PDF
 * pages as pictures for the dashboard (render-page.ts), so a file that
 * eats memory or CPU costs this process, which the server watches and kills, never the server's
 * event loop. OCR of scanned pages is asked of the server, which owns the tesseract
 * workers. The process exits as soon as its parent is gone: the IPC channel closes, the parent pid
 * changes, or (Linux) the kernel's parent-death signal fires.
 */
import { errorMessage } from "../errors.ts";
import { approximateTokens, chunkDocument } from "./chunking.ts";
import { draftSummary } from "../text/summary.ts";
import { readDocument, type OcrLike } from "./read-document.ts";
import { renderPdfPage } from "./render-page.ts";
import { LayoutDetector } from "./layout-model/layout-detector.ts";
import { READER_PARENT_ENV, type ChunkingRequest, type FromReader, type LayoutRequest, type OcrAnswer, type ToReader } from "./reader-protocol.ts";
import { TextEmbedder } from "../embeddings/text-embedder.ts";
import { withoutWholeText } from "./reader-common.ts";
import { DocumentReadError, type Chunk, type DocumentContent } from "./types.ts";

const send = (message: FromReader) => process.send?.(message);

/**
 * Library errors sometimes name files by their absolute path (pdf.js's font data, the scratch
 * copy of the document); answers never show server paths, so only the file's own name is kept.
 */
export function withoutServerPaths(message: string): string {
  return message.replace(/(^|[\s'"(=:])(?:file:\/\/)?\/(?:[^\s/'"():]+\/)+([^\s/'"():]*)/g, "$1$2");
}

/** OCR answers awaited from the parent, by request. */
const pendingOcr = new Map<number, { resolve: (r: OcrAnswer) => void; reject: (e: Error) => void }>();
let nextOcr = 0;

function ocrThroughParent(id: number): OcrLike {
  return {
    recognize(image, options) {
      const ocrId = ++nextOcr;
      return new Promise<OcrAnswer>((resolve, reject) => {
        pendingOcr.set(ocrId, { resolve, reject });
        send({ type: "ocr", id, ocrId, png: new Uint8Array(image), segmentation: options?.segmentation });
      });
    },
  };
}

/** Layout models loaded in this process, by folder (null: the folder is absent, or the model failed to load). */
const layoutModels = new Map<string, Promise<LayoutDetector | null>>();

function layoutModel(request: LayoutRequest | null): Promise<LayoutDetector | null> {
  if (!request) return Promise.resolve(null);
  const key = `${request.modelsDir}\0${request.model}`;
  let model = layoutModels.get(key);
  // A model that fails to load leaves pages to the rules, as an absent one does; the server's models check names the fault.
  if (!model) layoutModels.set(key, (model = LayoutDetector.open(request.modelsDir, request.model).catch(() => null)));
  return model;
}

/** Tokenizers loaded in this process, by folder (the server checked them before naming them). */
const tokenizers = new Map<string, TextEmbedder>();

async function chunk(doc: DocumentContent, request: ChunkingRequest): Promise<{ chunks: Chunk[]; exactTokens: boolean }> {
  let count = approximateTokens;
  let exactTokens = false;
  let maxTokens = request.maxTokens;
  if (request.tokenizer) {
    const { modelsDir, model } = request.tokenizer;
    const key = `${modelsDir}\0${model}`;
    let embedder = tokenizers.get(key);
    if (!embedder) tokenizers.set(key, (embedder = new TextEmbedder({ modelsDir, model })));
    try {
      const tokenizer = await embedder.tokenizer();
      count = (text) => tokenizer.count(text);
      exactTokens = true;
      // The tokenizer's window has the model's document prompt taken off (the server sent the whole window).
      maxTokens = Math.max(32, Math.min(maxTokens, tokenizer.maxTokens - 2));
    } catch {
      // Estimated sizes, as the server does without a tokenizer; the job's result says so.
    }
  }
  return { chunks: chunkDocument(doc, count, { maxTokens }), exactTokens };
}

/**
 * Plain text under this size leaves garbage of about its own size: no full collection after it.
 * Two forced collections (~15 ms each with pdf.js loaded) were 30 of the 31 ms a small note took
 * to read, which bounded a bulk import of notes to ~30 documents a second.
 */
const SMALL_TEXT_BYTES = 1024 * 1024;

async function read(message: Extract<ToReader, { type: "read" }>): Promise<void> {
  const { id } = message;
  send({ type: "reading", id });
  let collect = true;
  try {
    const bytes = await Bun.file(message.path).bytes();
    collect = !((message.documentType === "txt" || message.documentType === "md") && bytes.byteLength < SMALL_TEXT_BYTES);
    const doc = await readDocument(bytes, message.documentType, {
      ocr: ocrThroughParent(id),
      layout: message.documentType === "pdf" ? await layoutModel(message.layout) : null,
      onPage: (done, total) => send({ type: "page", id, done, total }),
    });
    for (const page of doc.pages) if (page.error_message) page.error_message = withoutServerPaths(page.error_message);
    // The reader's garbage (mammoth's XML trees, pdf.js's pages) goes before chunking adds its own.
    if (message.chunking && collect) Bun.gc(true);
    const chunked = message.chunking ? await chunk(doc, message.chunking) : null;
    const summary = message.summarize ? draftSummary(doc.text) : null;
    // Without the whole text, which the server joins again from the pages (withoutWholeText).
    send({ type: "done", id, doc: withoutWholeText(doc), chunks: chunked?.chunks ?? null, exactTokens: chunked?.exactTokens ?? false, summary });
  } catch (err) {
    send({ type: "failed", id, message: withoutServerPaths(errorMessage(err)), permanent: err instanceof DocumentReadError });
  } finally {
    // Hand the document's garbage back now, so the parent's idle check sees what this process really keeps.
    if (collect) Bun.gc(true);
  }
}

/** Draws one page of a PDF for the server's page image cache (documents/page-images.ts). */
async function render(message: Extract<ToReader, { type: "render" }>): Promise<void> {
  const { id } = message;
  send({ type: "reading", id });
  try {
    const rendered = await renderPdfPage(await Bun.file(message.path).bytes(), message.page, message.width);
    send({ type: "rendered", id, ...rendered });
  } catch (err) {
    send({ type: "failed", id, message: withoutServerPaths(errorMessage(err)), permanent: err instanceof DocumentReadError });
  } finally {
    Bun.gc(true);
  }
}

/** Asks the kernel to SIGKILL this process when its parent dies (Linux; elsewhere the other checks suffice). */
async function dieWithParent(): Promise<void> {
  if (process.platform !== "linux") return;
  try {
    const { dlopen, FFIType } = await import("bun:ffi");
    const libc = dlopen("libc.so.6", { prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 } });
    const PR_SET_PDEATHSIG = 1;
    const SIGKILL = 9n;
    libc.symbols.prctl(PR_SET_PDEATHSIG, SIGKILL, 0n, 0n, 0n);
  } catch {
    // No libc to call (musl, a sandbox): the IPC and pid checks below still end the process.
  }
}

export async function serveDocumentReader(): Promise<void> {
  const parent = Number(process.env[READER_PARENT_ENV] ?? process.ppid);
  await dieWithParent();
  // The parent may have died before the signal was armed.
  if (process.ppid !== parent) process.exit(0);
  process.on("disconnect", () => process.exit(0));
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 1000).unref();
  process.on("message", (message: ToReader) => {
    if (message.type === "read") void read(message);
    else if (message.type === "render") void render(message);
    else if (message.type === "ocr-result") {
      const waiting = pendingOcr.get(message.ocrId);
      pendingOcr.delete(message.ocrId);
      if (!waiting) return;
      if (message.result) waiting.resolve(message.result);
      else waiting.reject(new Error(message.error ?? "OCR failed"));
    }
  });
  send({ type: "ready" });
}
