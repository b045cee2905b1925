import { expect, test } from "bun:test";
import { pageMetadata } from "../src/links/page-metadata.ts";
import { readablePage } from "../src/links/readable.ts";
import { readPageMetadata, readReadablePage } from "../src/links/page-reader.ts";

const PAGE = `<!doctype html><html lang="en"><head><title>Harbour works</title>
<meta property="og:title" content="Quay wall repairs begin">
<meta name="description" content="The east quay wall is being rebuilt.">
<link rel="icon" href="/icon.png"></head>
<body><nav>Home | News</nav><article><h1>Quay wall repairs begin</h1>
${"<p>The east quay wall, built in 1911, is being rebuilt stone by stone over the winter months.</p>".repeat(20)}
</article></body></html>`;

test("the page-reading thread gives the same metadata and article as reading in place", async () => {
  expect(await readPageMetadata(PAGE, "https://example.test/news/quay")).toEqual(pageMetadata(PAGE, "https://example.test/news/quay"));
  expect(await readReadablePage(PAGE, "https://example.test/news/quay")).toEqual(readablePage(PAGE, "https://example.test/news/quay"));
});

test("a page that keeps the thread past the time limit is stopped with a reason; the next page gets a fresh thread", async () => {
  // ~4 MB of nested markup: far more than a millisecond of parsing.
  const heavy = `<html><body>${"<div><p>word word word</p>".repeat(150_000)}</body></html>`;
  await expect(readReadablePage(heavy, "https://example.test/heavy", 1)).rejects.toThrow(/longer than 0.001 s and was stopped/);
  expect((await readPageMetadata(PAGE, "https://example.test/news/quay")).title).toBe("Quay wall repairs begin");
});
