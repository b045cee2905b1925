/**
 * Reading a fetched page off the event loop (page-reader-worker.ts does the work): its metadata,
 * its readable article with the article's document and chunks, and its offline snapshot. Each
 * request has a time budget counted from when the thread takes it up; past it (a pathological
 * page) the thread is terminated and the request fails with the catalogue's message; the pages
 * behind it get a fresh thread. A crawl stage's signal (its own budget, a cancelled job, a
 * stopping server) stops its request the same way.
 */
import type { Chunk, DocumentContent } from "../documents/types.ts";
import { BudgetedThread } from "../native/budgeted-thread.ts";
import type { InlineImage } from "./favicon.ts";
import type { PageMetadata } from "./page-metadata.ts";
import type { PageReadReply, PageReadRequest } from "./page-reader-worker.ts";
import type { ReadablePage } from "./readable.ts";

/** Parsing a 2 MB page takes ~2 s on this machine kind; ten times that is a page not worth reading. */
export const PAGE_READ_TIME_LIMIT_MS = 30_000;

let thread: BudgetedThread<PageReadRequest, PageReadReply> | null = null;
/** The reading thread, started on first use (and again, by BudgetedThread, after one was stopped). */
const reader = () => (thread ??= new BudgetedThread<PageReadRequest, PageReadReply>("links/page-reader-worker.ts", "the page-reading thread"));

export interface PageReadOptions {
  signal?: AbortSignal;
  timeLimitMs?: number;
}

async function read(request: PageReadRequest, work: string, { signal, timeLimitMs = PAGE_READ_TIME_LIMIT_MS }: PageReadOptions): Promise<PageReadReply> {
  const reply = await reader().run(request, { budgetMs: timeLimitMs, work, ...(signal ? { signal } : {}) });
  if ("error" in reply) throw new Error(reply.error);
  return reply;
}

/** The page's metadata (og, Twitter, JSON-LD, HTML) and the raster icons it carries inline (each within `iconMaxBytes`). */
export async function readPageMetadata(html: string, url: string, iconMaxBytes: number, options: PageReadOptions = {}): Promise<{ metadata: PageMetadata; inlineIcons: InlineImage[] }> {
  const reply = await read({ kind: "metadata", html, url, iconMaxBytes }, "reading the page's metadata", options);
  if (!("metadata" in reply)) throw new Error("the page-reading thread answered without metadata");
  return reply;
}

export interface ReadArticle {
  readable: ReadablePage;
  /** The article as a one-page document, and its chunks of at most `maxTokens` (estimated). */
  document: DocumentContent;
  chunks: Chunk[];
  /** The http(s) images the article shows, once each, in order. */
  imageSources: string[];
}

/** The page's readable article, with its document, chunks and images. */
export async function readReadablePage(html: string, url: string, maxTokens: number, options: PageReadOptions = {}): Promise<ReadArticle> {
  const reply = await read({ kind: "readable", html, url, maxTokens }, "reading the page's article", options);
  if (!("readable" in reply)) throw new Error("the page-reading thread answered without the article");
  return reply;
}

/** The offline snapshot of an article (readable.ts snapshotHtml), its images inline from `images` (URL → data: URL). */
export async function readSnapshot(
  request: Omit<Extract<PageReadRequest, { kind: "snapshot" }>, "kind">,
  options: PageReadOptions = {},
): Promise<string> {
  const reply = await read({ kind: "snapshot", ...request }, "writing the page's snapshot", options);
  if (!("snapshot" in reply)) throw new Error("the page-reading thread answered without the snapshot");
  return reply.snapshot;
}
