/** Links: web pages saved by URL, crawled (text, icon, snapshot, images) by the link pipeline. */
import type { LinkDeps } from "./deps.ts";
import type { MediaKind } from "../kinds/media-kind.ts";
import { LINK_FIELDS } from "../files/file-shapes.ts";
import { runLinkPipeline } from "./link-pipeline.ts";
import { linkFields } from "./link-views.ts";
import { recrawlLink } from "./links.ts";

export function linkKind(ctx: LinkDeps): MediaKind<"link"> {
  return {
    type: "link",
    // Saved by URL (POST /links), never uploaded.
    content: null,
    pipeline: {
      produces: { thumbnails: false, analysis: true },
      // Mostly waiting for the network; politeness per host is the fetcher's.
      concurrency: 2,
      run: (job, file) => runLinkPipeline(ctx, job, file),
    },
    // A link's summary and detail show the same fields.
    view: { summaryFields: LINK_FIELDS, detailFields: {}, summary: linkFields, detail: async () => ({}) },
    async purge(fileId) {
      const row = ctx.files.byId(fileId);
      for (const key of [row?.favicon_blob_key, row?.snapshot_blob_key]) if (key) await ctx.blobs.delete(key);
    },
    // A link is crawled again through the one recrawl path (POST /files/{id}/recrawl's).
    reprocess(orgId, fileId) {
      const { file, jobId } = recrawlLink(ctx, orgId, fileId);
      return { file, jobIds: [jobId] };
    },
  };
}
