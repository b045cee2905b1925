/**
 * Reading a fetched page off the event loop: metadata and the readable article come from the
 * page-reading thread (page-reader-worker.ts). A page that keeps the thread busy past the time
 * limit (a pathological document) gets the thread terminated and an error for its stage; the next
 * page starts a fresh thread.
 */
import { WorkerThread } from "../native/worker-thread.ts";
import type { PageMetadata } from "./page-metadata.ts";
import type { ReadablePage } from "./readable.ts";
import type { PageReadReply, PageReadRequest } from "./page-reader-worker.ts";

/** Parsing a 2 MB page takes ~2 s on this machine kind; ten times that is a page not worth reading. */
export const PAGE_READ_TIME_LIMIT_MS = 30_000;

let thread: WorkerThread<PageReadRequest, PageReadReply> | null = null;
/** The reading thread, started on first use and replaced after it died or was stopped. */
const reader = () => (thread && !thread.broken ? thread : (thread = new WorkerThread<PageReadRequest, PageReadReply>("links/page-reader-worker.ts", "the page-reading thread")));

async function read(request: PageReadRequest, timeLimitMs: number): Promise<PageReadReply> {
  const worker = reader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const overtime = new Promise<Error>((settle) => {
    timer = setTimeout(() => {
      // Settled before the thread is stopped, so this request reports why; requests queued behind
      // it fail with the thread and are retried by their jobs.
      settle(new Error(`reading the page took longer than ${timeLimitMs / 1000} s and was stopped`));
      worker.terminate();
    }, timeLimitMs);
  });
  try {
    const reply = await Promise.race([worker.ask(request), overtime]);
    if (reply instanceof Error) throw reply;
    if ("error" in reply) throw new Error(reply.error);
    return reply;
  } finally {
    clearTimeout(timer);
  }
}

/** The page's metadata (og, Twitter, JSON-LD, HTML), read on the page-reading thread. */
export async function readPageMetadata(html: string, url: string, timeLimitMs = PAGE_READ_TIME_LIMIT_MS): Promise<PageMetadata> {
  const reply = await read({ kind: "metadata", html, url }, timeLimitMs);
  if (!("metadata" in reply)) throw new Error("the page-reading thread answered without metadata");
  return reply.metadata;
}

/** The page's readable article, read on the page-reading thread. */
export async function readReadablePage(html: string, url: string, timeLimitMs = PAGE_READ_TIME_LIMIT_MS): Promise<ReadablePage> {
  const reply = await read({ kind: "readable", html, url }, timeLimitMs);
  if (!("readable" in reply)) throw new Error("the page-reading thread answered without the article");
  return reply.readable;
}
