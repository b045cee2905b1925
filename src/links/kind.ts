/** Links: web pages saved by URL, crawled (text, icon, snapshot, images) by the link pipeline. */
import type { LinkDeps } from "./deps.ts";
import type { SqlClient } from "../db/sql-client.ts";
import type { KindExports, MediaKind } from "../kinds/media-kind.ts";
import { listExtractions } from "../extractions/extractions.ts";
import { LINK_DETAIL_FIELDS, LINK_FIELDS } from "../files/file-shapes.ts";
import { crawlOf, crawlsOfFiles } from "./link-crawls.ts";
import { documentFactsOf } from "../documents/document-facts.ts";
import { runLinkPipeline, linkPipelineOptions } from "./link-pipeline.ts";
import { linkSummaries } from "./link-views.ts";
import { recrawlLink } from "./links.ts";

/** Columns of POST /files/export after the file's source_url: the crawl's (one read for the exported links). */
function linkExports(sql: SqlClient): KindExports {
  return {
    columns: [
      { key: "domain", display: "Domain" },
      { key: "crawl_status", display: "Crawl status" },
      { key: "crawl_error", display: "Crawl error" },
      { key: "crawled_at", display: "Crawled at" },
      { key: "site_name", display: "Site name" },
      { key: "og_image", display: "Open Graph image" },
    ],
    async read(rows) {
      const crawls = await crawlsOfFiles(sql, rows.map((row) => row.id));
      /** One field of the page's og_metadata, as text (the first of repeated tags). */
      const og = (stored: string | null | undefined, key: string) => {
        const value = stored ? (JSON.parse(stored) as Record<string, unknown>)[key] : null;
        const first = Array.isArray(value) ? value[0] : value;
        return typeof first === "string" ? first : null;
      };
      return (row, key) => {
        const crawl = crawls.get(row.id);
        if (key === "domain") return crawl?.domain ?? null;
        if (key === "crawl_status") return crawl?.status ?? null;
        if (key === "crawl_error") return crawl?.error ?? null;
        if (key === "crawled_at") return crawl?.crawledAt ?? null;
        return og(crawl?.ogMetadata, key === "site_name" ? "site_name" : "og:image");
      };
    },
  };
}

export function linkKind(ctx: LinkDeps): MediaKind<"link"> {
  const options = linkPipelineOptions(ctx.config);
  return {
    type: "link",
    // Saved by URL (POST /links), never uploaded.
    content: null,
    pipeline: {
      produces: { thumbnails: false, analysis: true },
      // Mostly waiting for the network; politeness per host is the fetcher's.
      concurrency: 2,
      run: (job, file) => runLinkPipeline(ctx, options, job, file),
    },
    // A saved page's article is read as a one-page document.
    conditionFacts: async (sql, fileId) => ({ page_count: (await documentFactsOf(sql, fileId)).pageCount, domain: (await crawlOf(sql, fileId))?.domain ?? null }),
    exports: linkExports(ctx.sql),
    // A link's detail adds only its extractions (a custom schema a rule ran on the page) to its summary.
    view: { summaryFields: LINK_FIELDS, detailFields: LINK_DETAIL_FIELDS, summaries: linkSummaries, detail: async (row) => ({ extractions: await listExtractions(ctx.sql, row.id) }) },
    async purge(fileId) {
      const crawl = await crawlOf(ctx.sql, fileId);
      for (const key of [crawl?.faviconBlobKey, crawl?.snapshotBlobKey]) if (key) await ctx.blobs.delete(key);
    },
    // A link is crawled again through the one recrawl path (POST /files/{id}/recrawl's).
    async reprocess(orgId, fileId) {
      const { file, jobId } = await recrawlLink(ctx, orgId, fileId);
      return { file, jobIds: [jobId], message: "crawl queued again", crawlStatus: (await crawlOf(ctx.sql, file.id))?.status ?? null };
    },
  };
}
