/**
 * The page-reading thread (page-reader.ts): everything a crawl does with a fetched page's markup
 * runs here, never on the event loop: its metadata and inline icons, its readable article (as
 * text, sanitized HTML, a one-page document and that document's chunks, and the images it shows),
 * and the offline snapshot. Parsing and scoring cost ~1 s per MB of an ordinary page and tens of
 * seconds for a hostile one (deep nesting, hundreds of thousands of elements), which the thread's
 * budget stops. Stateless: one request at a time, plain data back.
 */
import { serveRequests } from "../native/worker-thread.ts";
import { errorMessage } from "../errors.ts";
import { approximateTokens, chunkDocument } from "../documents/chunking.ts";
import type { Chunk, DocumentContent } from "../documents/types.ts";
import { inlineIcons, type InlineImage } from "./favicon.ts";
import { parsePage } from "./html-document.ts";
import { pageMetadata, type PageMetadata } from "./page-metadata.ts";
import { readablePage, snapshotHtml, type ReadablePage } from "./readable.ts";
import { articleDocument } from "./reading-view.ts";

export type PageReadRequest =
  | { kind: "metadata"; html: string; url: string; iconMaxBytes: number }
  | { kind: "readable"; html: string; url: string; maxTokens: number }
  | {
      kind: "snapshot";
      readable: Pick<ReadablePage, "html" | "title" | "byline">;
      meta: Partial<Pick<PageMetadata, "title" | "siteName" | "author" | "publishedAt" | "language">>;
      url: string;
      images: [string, string][];
      savedAt: string;
    };

export type PageReadReply =
  | { metadata: PageMetadata; inlineIcons: InlineImage[] }
  | { readable: ReadablePage; document: DocumentContent; chunks: Chunk[]; imageSources: string[] }
  | { snapshot: string }
  | { error: string };

/** The http(s) sources of the article's images, in order, once each. */
function imageSources(html: string): string[] {
  const sources = new Set<string>();
  for (const img of parsePage(`<body>${html}</body>`).querySelectorAll("img[src]")) {
    const src = img.getAttribute("src")!;
    if (/^https?:/i.test(src)) sources.add(src);
  }
  return [...sources];
}

function answer(request: PageReadRequest): PageReadReply {
  switch (request.kind) {
    case "metadata":
      return { metadata: pageMetadata(request.html, request.url), inlineIcons: inlineIcons(request.html, request.iconMaxBytes) };
    case "readable": {
      const readable = readablePage(request.html, request.url);
      const document = articleDocument(readable);
      const chunks = chunkDocument(document, approximateTokens, { maxTokens: request.maxTokens });
      return { readable, document, chunks, imageSources: imageSources(readable.html) };
    }
    case "snapshot":
      return { snapshot: snapshotHtml(request.readable, request.meta, request.url, { images: new Map(request.images), savedAt: request.savedAt }) };
  }
}

serveRequests<PageReadRequest, PageReadReply>((request) => {
  try {
    return { reply: answer(request) };
  } catch (err) {
    return { reply: { error: errorMessage(err) } };
  }
});
