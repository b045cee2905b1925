/** Links: web pages saved by URL, crawled (text, icon, snapshot, images) by the link pipeline. */
import type { LinkDeps } from "./deps.ts";
import type { Database } from "bun:sqlite";
import type { ExportColumn, MediaKind } from "../kinds/media-kind.ts";
import { listExtractions } from "../extractions/extractions.ts";
import { LINK_DETAIL_FIELDS, LINK_FIELDS } from "../files/file-shapes.ts";
import { crawlOf } from "./link-crawls.ts";
import { documentFactsOf } from "../documents/document-facts.ts";
import { runLinkPipeline, linkPipelineOptions } from "./link-pipeline.ts";
import { linkFields } from "./link-views.ts";
import { recrawlLink } from "./links.ts";

/** Columns of POST /files/export after the file's source_url: the crawl's (a primary-key read per cell). */
function linkExportColumns(db: Database): ExportColumn[] {
  const crawl = (id: string) => crawlOf(db, id);
  /** One field of the page's og_metadata, as text (the first of repeated tags). */
  const og = (id: string, key: string) => {
    const stored = crawl(id)?.ogMetadata;
    const value = stored ? (JSON.parse(stored) as Record<string, unknown>)[key] : null;
    const first = Array.isArray(value) ? value[0] : value;
    return typeof first === "string" ? first : null;
  };
  return [
    { key: "domain", display: "Domain", value: (row) => crawl(row.id)?.domain ?? null },
    { key: "crawl_status", display: "Crawl status", value: (row) => crawl(row.id)?.status ?? null },
    { key: "crawl_error", display: "Crawl error", value: (row) => crawl(row.id)?.error ?? null },
    { key: "crawled_at", display: "Crawled at", value: (row) => crawl(row.id)?.crawledAt ?? null },
    { key: "site_name", display: "Site name", value: (row) => og(row.id, "site_name") },
    { key: "og_image", display: "Open Graph image", value: (row) => og(row.id, "og:image") },
  ];
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
    conditionFacts: (fileId) => ({ page_count: documentFactsOf(ctx.db, fileId).pageCount, domain: crawlOf(ctx.db, fileId)?.domain ?? null }),
    exportColumns: linkExportColumns(ctx.db),
    // A link's detail adds only its extractions (a custom schema a rule ran on the page) to its summary.
    view: { summaryFields: LINK_FIELDS, detailFields: LINK_DETAIL_FIELDS, summary: linkFields, detail: async (row) => ({ extractions: listExtractions(ctx.db, row.id) }) },
    async purge(fileId) {
      const crawl = crawlOf(ctx.db, fileId);
      for (const key of [crawl?.faviconBlobKey, crawl?.snapshotBlobKey]) if (key) await ctx.blobs.delete(key);
    },
    // A link is crawled again through the one recrawl path (POST /files/{id}/recrawl's).
    async reprocess(orgId, fileId) {
      const { file, jobId } = await recrawlLink(ctx, orgId, fileId);
      return { file, jobIds: [jobId], message: "crawl queued again", crawlStatus: crawlOf(ctx.db, file.id)?.status ?? null };
    },
  };
}
