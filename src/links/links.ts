/**
 * Saving links: one URL or a batch of them becomes a link file queued for its crawl (the
 * duplicate of a page the organization already saved answers with that file instead), a
 * finished crawl can be run again, and the stored snapshot is read back. Plain functions over
 * the context; the routes only bind them to HTTP.
 */
import type { Principal } from "../auth/principal.ts";
import type { LinkDeps } from "./deps.ts";
import { ApiError } from "../errors.ts";
import type { FileRow } from "../files/file.ts";
import { readObject } from "../storage/blob-store.ts";
import { placement as filePlacement } from "../folders/placement.ts";
import { uploadOptions } from "../ingest/options.ts";
import { TIER_LIMITS } from "../tenancy/tiers.ts";
import { LINK_MAX_ATTEMPTS } from "./link-pipeline.ts";
import { crawlCreated, crawlOf, crawlRequeued, findLink } from "./link-crawls.ts";
import { normalizeUrl, validateLinkUrl } from "../net/url-policy.ts";

export interface LinkRequest {
  url: string;
  title?: string | null;
  tags?: string[];
  project_id?: string | null;
  folder_id?: string | null;
  extract_images?: boolean;
  skip_duplicates?: boolean;
}

export type SaveOutcome = { status: "created"; file: FileRow } | { status: "duplicate"; file: FileRow };

/** Where a link goes and what it carries, checked (400 otherwise) before anything is written. */
async function checkRequest(ctx: LinkDeps, orgId: string, request: LinkRequest, field = "url") {
  const verdict = validateLinkUrl(request.url);
  if (!verdict.ok) throw new ApiError("INVALID_LINK_URL", `${field}: ${verdict.reason}`);
  const options = uploadOptions({ title: request.title ?? null, tags: request.tags ?? [], folder_id: request.folder_id ?? null, project_id: request.project_id ?? null });
  // A link names no custom schema: only where it goes is checked.
  const placement = await filePlacement(ctx.sql, orgId, options.folderId, options.projectId);
  return { url: verdict.url, options, placement };
}

/** Saves one link: a new file queued for its crawl, or the organization's existing file for the same page. */
export async function saveLink(ctx: LinkDeps, principal: Principal, request: LinkRequest, field = "url"): Promise<SaveOutcome> {
  const { url, options, placement } = await checkRequest(ctx, principal.orgId, request, field);
  const urlKey = normalizeUrl(url);
  const skipDuplicates = request.skip_duplicates ?? true;
  return ctx.sql.transaction(async (tx): Promise<SaveOutcome> => {
    // Inside the write transaction, the organization's saves taking turns (PostgreSQL's lock;
    // SQLite has one writer): two saves of one page at once still make one file.
    if (skipDuplicates) await tx.one(tx.dialect.transactionLock(`links_of_${principal.orgId.replace(/[^A-Za-z0-9_]/g, "_")}`));
    const existing = skipDuplicates ? await findLink(tx, principal.orgId, urlKey) : null;
    if (existing) return { status: "duplicate", file: existing };
    const files = ctx.files.withTx(tx);
    const id = crypto.randomUUID();
    const job = await ctx.jobs.submit({ queue: "file.process", orgId: principal.orgId, payload: { fileId: id }, maxAttempts: LINK_MAX_ATTEMPTS }, tx);
    await files.createLink({
      id, orgId: principal.orgId, projectId: placement.projectId, folderId: placement.folderId, url: url.href,
      filename: linkFilename(url), title: options.title, tags: options.tags, uploadedBy: principal.keyId, processingJobId: job.id,
    });
    await crawlCreated(tx, id, { urlKey, domain: url.hostname.replace(/\.$/, ""), extractImages: request.extract_images ?? true });
    return { status: "created", file: (await files.byId(id))! };
  });
}

export interface BatchItemResult {
  index: number;
  url: string;
  status: "created" | "duplicate" | "rejected";
  file_id: string | null;
  /** Why a URL was rejected (the 400 the single form would answer), null otherwise. */
  reason: string | null;
  code: string | null;
}

/** Saves each link on its own: one bad URL never stops the others. More than the tier's batch size is 400 as a whole. */
export async function saveLinks(ctx: LinkDeps, principal: Principal, links: LinkRequest[]): Promise<{ results: BatchItemResult[] }> {
  const max = TIER_LIMITS[principal.tier].batchFiles;
  if (max !== null && links.length > max) throw new ApiError("BATCH_TOO_LARGE", `links: the ${principal.tier} tier saves at most ${max} links per batch (got ${links.length})`);
  const results: BatchItemResult[] = [];
  // One after the other: a later link of the batch finds an earlier one as its duplicate.
  for (const [index, link] of links.entries()) {
    try {
      const outcome = await saveLink(ctx, principal, link, `links.${index}.url`);
      results.push({ index, url: link.url, status: outcome.status, file_id: outcome.file.id, reason: null, code: null });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 400 && err.status !== 404) throw err;
      results.push({ index, url: link.url, status: "rejected", file_id: null, reason: err.detail, code: err.code });
    }
  }
  return { results };
}

/** Queues a finished crawl again (409 while one is pending or running). */
export async function recrawlLink(ctx: LinkDeps, orgId: string, ref: string): Promise<{ file: FileRow; jobId: string }> {
  const row = await ctx.files.findOfType(orgId, ref, "link");
  const jobId = await ctx.sql.transaction(async (tx) => {
    const files = ctx.files.withTx(tx);
    const current = (await files.byId(row.id))!;
    const previous = current.processing_job_id ? await ctx.jobs.store.get(current.processing_job_id, tx) : null;
    const orphaned = !previous || !LIVE_JOB.has(previous.status);
    const job = await ctx.jobs.submit({ queue: "file.process", orgId, payload: { fileId: row.id }, maxAttempts: LINK_MAX_ATTEMPTS }, tx);
    if (!(await crawlRequeued(tx, row.id, orphaned))) {
      throw new ApiError("CRAWL_IN_PROGRESS", `link ${row.id} is being crawled (crawl_status ${(await crawlOf(tx, row.id))?.status}); try again when it finishes`);
    }
    await files.recrawlQueued(row.id, job.id);
    return job.id;
  });
  return { file: (await ctx.files.byId(row.id))!, jobId };
}

/** Job states in which a crawl will still move on by itself. */
const LIVE_JOB = new Set(["pending", "processing"]);

/** The stored offline snapshot's HTML (404 SNAPSHOT_NOT_READY until a crawl stored one). */
export async function readSnapshot(ctx: LinkDeps, orgId: string, ref: string): Promise<{ file: FileRow; html: Uint8Array }> {
  const row = await ctx.files.findOfType(orgId, ref, "link");
  const crawl = await crawlOf(ctx.sql, row.id);
  const bytes = crawl?.snapshotBlobKey ? await readObject(ctx.blobs, crawl.snapshotBlobKey) : null;
  if (!bytes) throw new ApiError("SNAPSHOT_NOT_READY", `link ${row.id} has no snapshot yet (crawl_status ${crawl?.status ?? null})`);
  return { file: row, html: bytes };
}

/** "example.com/news/story" for https://www.example.com/news/story?id=1: what the page is, as a name. */
function linkFilename(url: URL): string {
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/$/, "");
  let name = `${url.hostname.replace(/\.$/, "")}${path}`;
  try {
    name = decodeURIComponent(name);
  } catch {
    // Keep the escapes of a path that does not decode.
  }
  return name.replace(/[\u0000-\u001f]/g, "").slice(0, 255);
}
