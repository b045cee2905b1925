/**
 * Renders one page of a PDF as a WebP picture: pdf.js draws it on an @napi-rs/canvas (as
 * read-pdf.ts does for scanned pages) and sharp encodes the pixels. Runs in the document reader's
 * child process only (reader-child.ts), under its memory and CPU-time watchdog: a hostile page
 * costs that process, never the server's event loop.
 */
import sharp from "sharp";
import { openPdf } from "./pdfjs.ts";
import { canvasFactory } from "./read-pdf.ts";
import { DocumentReadError } from "./types.ts";

/** No side of a rendered page goes past this (a 1 x 100 inch ribbon asked at 2048 px wide would be 200,000 px tall). */
export const PAGE_IMAGE_MAX_SIDE = 4096;
/** Without a width asked for, the page's long side is drawn this many pixels long. */
export const PAGE_IMAGE_DEFAULT_LONG_SIDE = 1024;
/** WebP quality: text stays crisp at a fraction of PNG's size. */
const WEBP_QUALITY = 82;

export interface RenderedPage {
  webp: Uint8Array;
  width: number;
  height: number;
}

/**
 * Page `pageNumber` (1-indexed) drawn `width` pixels wide on white (narrower when its height
 * would pass PAGE_IMAGE_MAX_SIDE); `width` null: its long side PAGE_IMAGE_DEFAULT_LONG_SIDE long. Throws a DocumentReadError when the file is no readable PDF or
 * has no such page.
 */
export async function renderPdfPage(bytes: Uint8Array, pageNumber: number, width: number | null): Promise<RenderedPage> {
  const { task, close } = await openPdf(bytes);
  try {
    const doc = await task.promise.catch((err: unknown) => {
      throw new DocumentReadError(`the PDF could not be opened: ${err instanceof Error ? err.message : String(err)}`);
    });
    if (pageNumber < 1 || pageNumber > doc.numPages) throw new DocumentReadError(`the PDF has ${doc.numPages} page${doc.numPages === 1 ? "" : "s"}; there is no page ${pageNumber}`);
    const page = await doc.getPage(pageNumber);
    try {
      const base = page.getViewport({ scale: 1 });
      const long = Math.max(base.width, base.height);
      const scale = Math.min(width === null ? PAGE_IMAGE_DEFAULT_LONG_SIDE / long : width / base.width, PAGE_IMAGE_MAX_SIDE / long);
      const viewport = page.getViewport({ scale });
      const w = Math.max(1, Math.round(viewport.width));
      const h = Math.max(1, Math.round(viewport.height));
      const factory = canvasFactory(doc);
      const target = factory.create(w, h);
      try {
        await page.render({ canvas: target.canvas as never, canvasContext: target.context as never, viewport, background: "white" }).promise;
        const context = target.context as { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
        const pixels = context.getImageData(0, 0, w, h).data;
        const webp = await sharp(Buffer.from(pixels.buffer, pixels.byteOffset, pixels.byteLength), { raw: { width: w, height: h, channels: 4 } })
          .webp({ quality: WEBP_QUALITY })
          .toBuffer();
        return { webp: new Uint8Array(webp.buffer, webp.byteOffset, webp.byteLength), width: w, height: h };
      } finally {
        factory.destroy(target);
      }
    } finally {
      page.cleanup();
    }
  } finally {
    await close();
  }
}
