/** A link as the API shows it: the File resource's common fields and the crawl's. */
import type { FileUrls } from "../files/file-urls.ts";
import type { FileRow } from "../files/file.ts";
import { commonFields } from "../files/file-view.ts";
import { crawlsOfFiles } from "./link-crawls.ts";
import { linkImagesOfLinks } from "./page-images.ts";
import { imageFactsOfFiles } from "../images/image-facts.ts";

/**
 * Links as crawled: favicon_url is a signed URL of the stored copy (it works without the
 * site), extracted_images the image files made from the page, with their variant URLs. A page of
 * links reads the crawls, the links' images and those images' variants and facts once each.
 */
export async function linkSummaries(rows: FileRow[], urls: FileUrls) {
  const ids = rows.map((row) => row.id);
  const [crawls, imagesOf] = await Promise.all([crawlsOfFiles(urls.sql, ids), linkImagesOfLinks(urls.sql, ids)]);
  const imageFiles = [...imagesOf.values()].flat().map((image) => image.file);
  const [variants, facts] = await Promise.all([urls.variantsOfFiles(imageFiles), imageFactsOfFiles(urls.sql, imageFiles.map((file) => file.id))]);
  return Promise.all(
    rows.map(async (row) => {
      const images = imagesOf.get(row.id)!.map(({ file, sourceUrl }) => {
        const shown = variants.get(file.id)!;
        return { id: file.id, source_url: sourceUrl, thumbnail_url: shown.small_256 ?? null, medium_url: shown.medium_750 ?? null, variant_status: facts.get(file.id)!.variantStatus };
      });
      const crawl = crawls.get(row.id) ?? null;
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
    }),
  );
}

/** A link's detail (its summary has the same fields). */
export async function linkDetail(row: FileRow, urls: FileUrls) {
  return { ...commonFields(row), ...(await linkSummaries([row], urls))[0]! };
}
