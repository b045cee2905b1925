/** HTTP binding of links (Mediabox extension; documented in docs/links.md): save, save many, recrawl, snapshot. */
import { Elysia, t } from "elysia";
import type { LinkDeps } from "./deps.ts";
import { permissions } from "../http/permissions.ts";
import { publicOrigin } from "../http/request-context.ts";
import { errorResponses } from "../http/shapes.ts";
import { fileShapes, FileParams } from "../files/file-shapes.ts";
import { crawlOf, crawlsOfFiles } from "./link-crawls.ts";
import { linkDetail } from "./link-views.ts";
import { FileUrls } from "../files/file-urls.ts";
import { recrawlLink, readSnapshot, saveLink, saveLinks } from "./links.ts";
import { SNAPSHOT_CSP } from "./readable.ts";
import { BatchResult, LinkBody, MAX_BATCH_BODY_ITEMS } from "./model.ts";


export function linkRoutes(ctx: LinkDeps) {
  const { FileDetail } = fileShapes(ctx.kinds.all());
  return new Elysia({ tags: ["Links"] })
    .use(permissions)
    .post(
      "/files/links",
      async ({ principal, body, request, set }) => {
        const outcome = await saveLink(ctx, principal, body);
        set.status = outcome.status === "created" ? 201 : 200;
        return linkDetail(outcome.file, new FileUrls(ctx, publicOrigin(ctx.config, request)));
      },
      {
        permission: "edit",
        body: LinkBody,
        response: { 200: FileDetail, 201: FileDetail, ...errorResponses([400, 404]) },
        detail: {
          summary: "Save a web page as a link file (extension)",
          description:
            "201 with the new link (crawl_status pending; the crawl runs as its processing job). A page the organization already saved (same URL after normalization: scheme and host case, default port, fragment, tracking parameters, query order) answers 200 with that file unless skip_duplicates is false. 400 INVALID_LINK_URL for a URL that is not absolute http(s), carries credentials or is too long.",
        },
      },
    )
    .post(
      "/files/links/batch",
      async ({ principal, body }) => {
        const { results } = await saveLinks(ctx, principal, body.links);
        const crawls = await crawlsOfFiles(ctx.sql, results.flatMap((r) => (r.file_id ? [r.file_id] : [])));
        return {
          results: results.map((r) => ({ ...r, crawl_status: r.file_id ? (crawls.get(r.file_id)?.status ?? null) : null })),
          created: results.filter((r) => r.status === "created").length,
          duplicates: results.filter((r) => r.status === "duplicate").length,
          rejected: results.filter((r) => r.status === "rejected").length,
        };
      },
      {
        permission: "edit",
        body: t.Object({
          links: t.Array(LinkBody, { minItems: 1, maxItems: MAX_BATCH_BODY_ITEMS, error: "links: 1 or more {url, ...} objects, up to the tier's batch size" }),
        }),
        response: {
          200: t.Object({ results: t.Array(BatchResult), created: t.Integer(), duplicates: t.Integer(), rejected: t.Integer() }),
          ...errorResponses([400]),
        },
        detail: {
          summary: "Save several web pages at once (extension)",
          description:
            "links: up to the tier's batch size (FREE 10, STARTER 50, PROFESSIONAL 100, ENTERPRISE 200; more is 400 BATCH_TOO_LARGE). Each link is saved on its own, as POST /files/links would; results[] says per URL created, duplicate (file_id is the existing file) or rejected (reason, code).",
        },
      },
    )
    .post(
      "/files/:file_id/recrawl",
      async ({ principal, params, request }) => {
        const { file, jobId } = await recrawlLink(ctx, principal.orgId, params.file_id);
        return { id: file.id, job_id: jobId, crawl_status: (await crawlOf(ctx.sql, file.id))?.status ?? "pending", file: await linkDetail(file, new FileUrls(ctx, publicOrigin(ctx.config, request))) };
      },
      {
        permission: "edit",
        params: FileParams,
        response: { 200: t.Object({ id: t.String(), job_id: t.String(), crawl_status: t.String(), file: FileDetail }), ...errorResponses([400, 404, 409]) },
        detail: {
          summary: "Crawl a link again (extension)",
          description: "Queues a new crawl of the saved URL; crawl_status goes back to pending. 409 CRAWL_IN_PROGRESS while a crawl is pending or running; 400 WRONG_MEDIA_TYPE for other files.",
        },
      },
    )
    .get(
      "/files/:file_id/snapshot",
      async ({ principal, params }) => {
        const { html } = await readSnapshot(ctx, principal.orgId, params.file_id);
        return new Response(html as Uint8Array<ArrayBuffer>, {
          headers: {
            "content-type": "text/html; charset=utf-8",
            // The snapshot runs nothing and loads nothing, even if a browser opens it on our origin.
            "content-security-policy": `${SNAPSHOT_CSP}; sandbox`,
            "x-content-type-options": "nosniff",
            "referrer-policy": "no-referrer",
            "cross-origin-resource-policy": "same-origin",
            "cache-control": "private, no-store",
          },
        });
      },
      {
        permission: "view",
        params: FileParams,
        response: { 200: t.String({ description: "The offline copy: text/html, inert (CSP default-src 'none' with sandbox, nosniff)" }), ...errorResponses([400, 404, 409]) },
        detail: {
          summary: "The link's offline snapshot (extension)",
          description: "The readable article saved at the last crawl as one self-contained HTML document (images inlined as data: URLs). Served with Content-Security-Policy default-src 'none' (plus sandbox), X-Content-Type-Options nosniff. 404 SNAPSHOT_NOT_READY until a crawl stored one.",
        },
      },
    );
}
