/**
 * The page-reading thread (page-reader.ts): a fetched page's HTML is parsed here (linkedom) for
 * its metadata and its readable article (Readability), so the ~1 s per MB of parsing and scoring
 * never blocks the server's event loop. Stateless: one request at a time, plain data back.
 */
import { serveRequests } from "../native/worker-thread.ts";
import { errorMessage } from "../errors.ts";
import { pageMetadata, type PageMetadata } from "./page-metadata.ts";
import { readablePage, type ReadablePage } from "./readable.ts";

export type PageReadRequest = { kind: "metadata" | "readable"; html: string; url: string };

export type PageReadReply = { metadata: PageMetadata } | { readable: ReadablePage } | { error: string };

serveRequests<PageReadRequest, PageReadReply>(({ kind, html, url }) => {
  try {
    return { reply: kind === "metadata" ? { metadata: pageMetadata(html, url) } : { readable: readablePage(html, url) } };
  } catch (err) {
    return { reply: { error: errorMessage(err) } };
  }
});
