import { expect, test } from "bun:test";
import { pageMetadata } from "../src/links/page-metadata.ts";
import { readablePage } from "../src/links/readable.ts";
import { approximateTokens, chunkDocument } from "../src/documents/chunking.ts";
import { readPageMetadata, readReadablePage, readSnapshot } from "../src/links/page-reader.ts";
import { articleDocument } from "../src/links/reading-view.ts";
import { snapshotHtml } from "../src/links/readable.ts";

const PAGE = `<!doctype html><html lang="en"><head><title>Harbour works</title>
<meta property="og:title" content="Quay wall repairs begin">
<meta name="description" content="The east quay wall is being rebuilt.">
<link rel="icon" href="/icon.png"></head>
<body><nav>Home | News</nav><article><h1>Quay wall repairs begin</h1>
${"<p>The east quay wall, built in 1911, is being rebuilt stone by stone over the winter months.</p>".repeat(20)}
</article></body></html>`;

const URL_ = "https://example.test/news/quay";

test("the page-reading thread gives the same metadata, article, chunks and snapshot as reading in place", async () => {
  expect(await readPageMetadata(PAGE, URL_, 1024)).toEqual({ metadata: pageMetadata(PAGE, URL_), inlineIcons: [] });
  const article = await readReadablePage(PAGE, URL_, 100);
  const readable = readablePage(PAGE, URL_);
  expect(article.readable).toEqual(readable);
  expect(article.document).toEqual(articleDocument(readable));
  expect(article.chunks).toEqual(chunkDocument(articleDocument(readable), approximateTokens, { maxTokens: 100 }));
  const snapshot = { readable, meta: { title: "Quay" }, url: URL_, images: [] as [string, string][], savedAt: "2026-01-02T03:04:05.000Z" };
  expect(await readSnapshot(snapshot)).toBe(snapshotHtml(readable, snapshot.meta, URL_, { images: new Map(), savedAt: snapshot.savedAt }));
});

test("a page that keeps the thread past the time limit is stopped with a reason; the next page gets a fresh thread", async () => {
  // ~4 MB of nested markup: far more than a millisecond of parsing.
  const heavy = `<html><body>${"<div><p>word word word</p>".repeat(150_000)}</body></html>`;
  await expect(readReadablePage(heavy, "https://example.test/heavy", 100, { timeLimitMs: 1 })).rejects.toThrow(/^reading the page's article took longer than 0 s and was stopped$/);
  expect((await readPageMetadata(PAGE, URL_, 1024)).metadata.title).toBe("Quay wall repairs begin");
});

test("a request waiting its turn has its whole budget once it starts; a cancelled one stops the thread at once", async () => {
  const heavy = `<html><body>${"<div><p>word word word</p>".repeat(20_000)}</body></html>`;
  const first = readReadablePage(heavy, "https://example.test/first", 100, { timeLimitMs: 60_000 });
  // Queued behind the first: its 60 s budget is counted from when it starts, so it reads.
  const second = readPageMetadata(PAGE, URL_, 1024, { timeLimitMs: 60_000 });
  const controller = new AbortController();
  // Seconds of work: still waiting or running when it is cancelled.
  const heavier = `<html><body>${"<div><p>word word word</p>".repeat(300_000)}</body></html>`;
  const third = readReadablePage(heavier, "https://example.test/third", 100, { signal: controller.signal });
  expect((await first).readable.text.length).toBeGreaterThan(0);
  expect((await second).metadata.title).toBe("Quay wall repairs begin");
  controller.abort(new Error("cancelled by request"));
  await expect(third).rejects.toThrow("cancelled by request");
  expect((await readPageMetadata(PAGE, URL_, 1024)).metadata.title).toBe("Quay wall repairs begin");
});
