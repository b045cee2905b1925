/** A link as the API shows it: the File resource's common fields and the crawl's. */
import type { FileUrls } from "../files/file-urls.ts";
import type { FileRow } from "../files/file.ts";
import { commonFields } from "../files/file-view.ts";
import { crawlOf } from "./link-crawls.ts";
import { linkImages } from "./page-images.ts";
import { imageFactsOf } from "../images/image-facts.ts";

/**
 * A link as crawled: favicon_url is a signed URL of the stored copy (it works without the
 * site), extracted_images the image files made from the page, with their variant URLs.
 */
export async function linkFields(row: FileRow, urls: FileUrls) {
  const images = await Promise.all(
    linkImages(urls.db, row.id).map(async ({ file, sourceUrl }) => {
      const variants = await urls.variants(file);
      return { id: file.id, source_url: sourceUrl, thumbnail_url: variants.small_256 ?? null, medium_url: variants.medium_750 ?? null, variant_status: imageFactsOf(urls.db, file.id).variantStatus };
    }),
  );
  const crawl = crawlOf(urls.db, row.id);
  return {
    domain: crawl?.domain ?? null,
    og_metadata: crawl?.ogMetadata ? (JSON.parse(crawl.ogMetadata) as Record<string, unknown>) : null,
    favicon_url: crawl?.faviconBlobKey ? await urls.blob(crawl.faviconBlobKey, crawl.faviconContentType ?? "image/x-icon") : null,
    crawl_status: crawl?.status ?? null,
    crawl_error: crawl?.error ?? null,
    crawled_at: crawl?.crawledAt ?? null,
    snapshot_available: (crawl?.snapshotBlobKey ?? null) !== null,
    extracted_images: images,
    extracted_images_count: images.length,
    // The page's first image (its og:image when it has one) stands for the link in a grid.
    thumbnail_url: images.find((i) => i.thumbnail_url)?.thumbnail_url ?? null,
  };
}

/** A link's detail (its summary has the same fields). */
export async function linkDetail(row: FileRow, urls: FileUrls) {
  return { ...commonFields(row), ...(await linkFields(row, urls)) };
}
