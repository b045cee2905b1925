/**
 * The link pipeline: a saved URL's crawl as a list of stages over one LinkWork (run by
 * processing/stage-runner.ts). The page fetch is required: without the page nothing else can
 * run, and its failure says what happened in `crawl_status` (blocked by policy, failed for good,
 * or pending a retry when the failure may pass: a timeout, a refused connection, a 5xx). The
 * other stages succeed or fail on their own: metadata, the stored icon, the readable text (chunks
 * and embeddings through the document machinery), the offline snapshot and the page's images.
 */
import type { Config } from "../config.ts";
import { isoAt } from "../clock.ts";
import { crawled, crawlEnded, crawlOf, crawlStarted, faviconStored, pageMetadataStored, snapshotStored } from "./link-crawls.ts";
import type { LinkDeps } from "./deps.ts";
import type { IngestDeps } from "../ingest/deps.ts";
import { storeDocument, enqueueEmbedding } from "../documents/document-pipeline.ts";
import { DEFAULT_MAX_TOKENS } from "../embeddings/text-embedder.ts";
import { errorMessage } from "../errors.ts";
import { faviconBlobKey, snapshotBlobKey } from "../files/blob-keys.ts";
import type { FileRow } from "../files/file.ts";
import type { FileJobPayload } from "../jobs/catalogue.ts";
import { PermanentJobError, type JobContext } from "../jobs/runner.ts";
import type { PipelineReport } from "../kinds/media-kind.ts";
import { failedStages, runStages, stageBudgetsOf, StageTimeoutError, type FileWork, type PipelineOptions, type Stage } from "../processing/stage-runner.ts";
import { dataUrl, type InlineImage } from "./favicon.ts";
import { type FetchedPage, LinkFetchError } from "./fetch-page.ts";
import { isTransient, type CrawlSession } from "./link-fetcher.ts";
import type { PageMetadata } from "./page-metadata.ts";
import { readPageMetadata, readReadablePage, readSnapshot, type ReadArticle } from "./page-reader.ts";
import { storePageImages } from "./page-images.ts";

/** Icons are small; a larger "icon" is somebody's photo. */
const ICON_MAX_BYTES = 512 * 1024;
/** Inlined images of one snapshot together, so a reading copy stays a reasonable download. */
export const SNAPSHOT_IMAGE_BYTES = 4 * 1024 * 1024;
/** Images of the article fetched for its snapshot at most (the others show as links). */
const SNAPSHOT_MAX_IMAGES = 50;
/** Crawl attempts of a link: transient failures get two more tries (1 s and 2 s later). */
export const LINK_MAX_ATTEMPTS = 3;

export const AIR_GAPPED_REASON = "link fetching is turned off on this appliance (MEDIABOX_LINK_FETCH=off); the URL is stored, the page was not fetched";

/** What the link pipeline takes from the settings, read once when the kind is built (linkPipelineOptions). */
export interface LinkPipelineOptions extends PipelineOptions {
  /** MEDIABOX_LINK_FETCH: false on an air-gapped appliance (every crawl is blocked, saying why). */
  fetch: boolean;
  /** The fetch stage's budget: robots.txt and the page, each within MEDIABOX_LINK_TIMEOUT_SECONDS, and a turn per host. */
  fetchBudgetMs: number;
  /** MEDIABOX_LINK_MAX_IMAGES: page images stored as image files (0: none). */
  maxImages: number;
  /** The largest icon read (and image stored): MEDIABOX_LINK_MAX_IMAGE_BYTES, at most ICON_MAX_BYTES for icons. */
  maxImageBytes: number;
}

export function linkPipelineOptions(config: Pick<Config, "linkFetch" | "linkTimeoutSeconds" | "linkMaxImages" | "linkMaxImageBytes" | "stageBudgets">): LinkPipelineOptions {
  return {
    fetch: config.linkFetch,
    fetchBudgetMs: 2 * config.linkTimeoutSeconds * 1000 + 60_000,
    maxImages: config.linkMaxImages,
    maxImageBytes: config.linkMaxImageBytes,
    stageBudgets: stageBudgetsOf(config, "link"),
  };
}

/**
 * What the link pipeline's stages use of the services (the compiler checks each stage against
 * it): the fetcher, and what ingest uses, as the page's images become files of their own.
 */
type LinkStageDeps = IngestDeps & Pick<LinkDeps, "links">;

interface LinkWork extends FileWork<LinkStageDeps> {
  options: LinkPipelineOptions;
  session: CrawlSession;
  page: FetchedPage | null;
  meta: PageMetadata | null;
  /** Raster icons the page carries inline (data: URLs), read with the metadata. */
  inlineIcons: InlineImage[];
  article: ReadArticle | null;
  chunks: number;
  embeddingJobId: string | null;
  images: { created: number; reused: number; listed: number };
  /** Whether the link was saved asking for the page's images (read before the stages, whose checks are synchronous). */
  extractImages: boolean;
}

const fetchStage: Stage<LinkWork> = {
  name: "fetch",
  required: true,
  weight: 4,
  budgetMs: (work) => work.options.fetchBudgetMs,
  async run(work) {
    const { ctx, file, job } = work;
    if (!work.options.fetch) {
      await crawlEnded(ctx.sql, ctx.files, file.id, "blocked", AIR_GAPPED_REASON);
      throw new PermanentJobError(AIR_GAPPED_REASON);
    }
    await crawlStarted(ctx.sql, ctx.files, file.id);
    try {
      work.page = await work.session.page(file.source_url!);
    } catch (err) {
      if (!(err instanceof LinkFetchError)) {
        await crawlEnded(ctx.sql, ctx.files, file.id, job.attempt >= job.maxAttempts ? "failed" : "pending", `the page could not be read: ${errorMessage(err)}`);
        throw err;
      }
      const where = err.url && err.url !== file.source_url ? ` (at ${err.url})` : "";
      const reason = `${err.reason}${where}`;
      if (err.kind === "cancelled") {
        // Past the stage's budget (a server that keeps the connection open) the link fails for good.
        const overBudget = work.signal.reason instanceof StageTimeoutError ? work.signal.reason : null;
        await crawlEnded(ctx.sql, ctx.files, file.id, overBudget ? "failed" : "pending", overBudget?.message ?? "the crawl was interrupted");
        throw overBudget ?? err;
      }
      const policy = err.kind === "blocked" || err.kind === "invalid-url";
      if (policy) {
        await crawlEnded(ctx.sql, ctx.files, file.id, "blocked", reason);
        throw new PermanentJobError(reason);
      }
      const retry = isTransient(err) && job.attempt < job.maxAttempts;
      await crawlEnded(ctx.sql, ctx.files, file.id, retry ? "pending" : "failed", reason);
      throw retry ? new Error(reason) : new PermanentJobError(reason);
    }
  },
};

const metadataStage: Stage<LinkWork> = {
  name: "metadata",
  budgetMs: 2 * 60_000,
  async run(work) {
    const { ctx, file } = work;
    const page = work.page!;
    const read = await readPageMetadata(page.text, page.finalUrl, Math.min(ICON_MAX_BYTES, work.options.maxImageBytes), { signal: work.signal });
    const meta = read.metadata;
    work.meta = meta;
    work.inlineIcons = read.inlineIcons;
    const ogMetadata = {
      ...meta.og_metadata,
      // What the crawl learnt besides the tags, for clients that show a card.
      final_url: page.finalUrl,
      canonical_url: meta.canonicalUrl,
      site_name: meta.siteName,
      author: meta.author,
      published_at: meta.publishedAt,
      language: meta.language,
      charset: page.charset,
      truncated: page.truncated,
    };
    await ctx.sql.transaction(async (tx) => {
      await pageMetadataStored(tx, ctx.files, file.id, JSON.stringify(ogMetadata));
      await ctx.files.withTx(tx).pageRead(file.id, {
      title: meta.title?.slice(0, 255) ?? null,
      description: meta.description,
      publishedAt: meta.publishedAt,
      byteLength: page.byteLength,
      });
    });
  },
};

const faviconStage: Stage<LinkWork> = {
  name: "favicon",
  appliesTo: (work) => work.meta !== null || "no metadata",
  async run(work) {
    const { ctx, file } = work;
    const declared = work.meta!.iconCandidates.filter((c) => c.rel !== "fallback");
    const fallback = work.meta!.iconCandidates.filter((c) => c.rel === "fallback");
    const maxBytes = Math.min(ICON_MAX_BYTES, work.options.maxImageBytes);
    const failures: string[] = [];
    const tryFetch = async (url: string) => {
      try {
        const icon = await work.session.image(url, "icon");
        return icon.bytes.byteLength <= maxBytes ? { bytes: icon.bytes, contentType: icon.contentType } : null;
      } catch (err) {
        failures.push(`${url}: ${errorMessage(err)}`);
        return null;
      }
    };
    let icon: { bytes: Uint8Array; contentType: string } | null = null;
    for (const candidate of declared) if (!icon) icon = await tryFetch(candidate.url);
    icon ??= work.inlineIcons[0] ?? null;
    for (const candidate of fallback) if (!icon) icon = await tryFetch(candidate.url);
    if (!icon) throw new Error(`no usable icon (${failures.join("; ") || "none declared"})`);
    const key = faviconBlobKey(file.org_id, file.id);
    await ctx.blobs.put(key, icon.bytes, icon.contentType);
    await faviconStored(ctx.sql, ctx.files, file.id, key, icon.contentType);
  },
};

const textStage: Stage<LinkWork> = {
  name: "text",
  weight: 2,
  budgetMs: 3 * 60_000,
  async run(work) {
    const { ctx, file } = work;
    const page = work.page!;
    const article = await readReadablePage(page.text, page.finalUrl, DEFAULT_MAX_TOKENS - 2, { signal: work.signal });
    work.article = article;
    const { document, chunks } = article;
    await storeDocument(ctx, file, document, chunks);
    work.chunks = chunks.length;
    if (chunks.length) work.embeddingJobId = await enqueueEmbedding(ctx, file);
  },
};

const snapshotStage: Stage<LinkWork> = {
  name: "snapshot",
  weight: 2,
  budgetMs: 3 * 60_000,
  appliesTo: (work) => work.article !== null || "no readable text",
  async run(work) {
    const { ctx, file } = work;
    const { readable, imageSources } = work.article!;
    const images = new Map<string, string>();
    let budget = SNAPSHOT_IMAGE_BYTES;
    for (const src of imageSources.slice(0, SNAPSHOT_MAX_IMAGES)) {
      if (budget <= 0) break;
      try {
        const fetched = await work.session.image(src);
        if (fetched.bytes.byteLength > budget || !/^image\/(png|jpeg|gif|webp|avif)$/.test(fetched.contentType)) continue;
        images.set(src, dataUrl(fetched.bytes, fetched.contentType));
        budget -= fetched.bytes.byteLength;
      } catch {
        // The snapshot shows the image as a link to its source instead.
      }
    }
    const html = await readSnapshot(
      { readable: { html: readable.html, title: readable.title, byline: readable.byline }, meta: snapshotMeta(work.meta), url: work.page!.finalUrl, images: [...images], savedAt: new Date(ctx.clock.now()).toISOString() },
      { signal: work.signal },
    );
    const key = snapshotBlobKey(file.org_id, file.id);
    await ctx.blobs.put(key, new TextEncoder().encode(html), "text/html; charset=utf-8");
    await snapshotStored(ctx.sql, ctx.files, file.id, key);
  },
};

const imagesStage: Stage<LinkWork> = {
  name: "images",
  weight: 3,
  appliesTo: ({ extractImages, meta, options }) =>
    !extractImages ? "extract_images is false" : options.maxImages === 0 ? "MEDIABOX_LINK_MAX_IMAGES is 0" : meta ? true : "no metadata",
  async run(work, progress) {
    const { ctx, file } = work;
    const candidates = work.meta!.imageCandidates.slice(0, work.options.maxImages);
    const fetched: { url: string; bytes: Uint8Array }[] = [];
    const failures: string[] = [];
    for (const [i, candidate] of candidates.entries()) {
      try {
        const image = await work.session.image(candidate.url);
        fetched.push({ url: candidate.url, bytes: image.bytes });
      } catch (err) {
        failures.push(`${candidate.url}: ${errorMessage(err)}`);
      }
      progress((i + 1) / (candidates.length + 1));
    }
    const stored = await storePageImages(ctx, file, fetched);
    work.images = { created: stored.created, reused: stored.reused, listed: stored.fileIds.length };
    const problems = [...failures, ...stored.refused];
    // Some images of a page failing is normal (404s, trackers); only all of them failing is the stage's failure.
    if (candidates.length > 0 && stored.fileIds.length === 0 && problems.length) throw new Error(`no image could be stored (${problems.slice(0, 3).join("; ")})`);
  },
};

/** What of the metadata the snapshot shows (plain data, for the page-reading thread). */
function snapshotMeta(meta: PageMetadata | null) {
  if (!meta) return {};
  return { title: meta.title, siteName: meta.siteName, author: meta.author, publishedAt: meta.publishedAt, language: meta.language };
}

/** Every link goes through these, in this order. */
export const LINK_STAGES: Stage<LinkWork>[] = [fetchStage, metadataStage, faviconStage, textStage, snapshotStage, imagesStage];

export async function runLinkPipeline(ctx: LinkDeps, options: LinkPipelineOptions, job: JobContext<FileJobPayload>, file: FileRow): Promise<PipelineReport> {
  const work: LinkWork = {
    ctx, options, job, file, outcomes: {}, signal: job.signal, session: null!,
    page: null, meta: null, inlineIcons: [], article: null, chunks: 0, embeddingJobId: null, images: { created: 0, reused: 0, listed: 0 },
    extractImages: (await crawlOf(ctx.sql, file.id))?.extractImages ?? false,
  };
  // Each fetch is cancelled by the stage that asked for it (its budget) or the job.
  work.session = ctx.links.session(file.org_id, () => work.signal);
  await runStages(work, LINK_STAGES);
  await job.transaction((tx) => crawled(tx, ctx.files, file.id, isoAt(ctx.clock.now())));
  const page = work.page!;
  return {
    summary: {
      link_id: file.id,
      crawl_status: "completed",
      final_url: page.finalUrl,
      redirects: page.redirects,
      bytes: page.byteLength,
      truncated: page.truncated,
      chunk_count: work.chunks,
      embedding_job_id: work.embeddingJobId,
      extracted_images: work.images,
      stages: work.outcomes,
    },
    warnings: failedStages(work.outcomes),
  };
}
