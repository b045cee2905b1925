/**
 * The icons a page carries inline, as `data:` URLs in its <link rel="icon"> tags: page-metadata
 * leaves them out of its fetchable candidates, and they need no fetch, only decoding under the
 * same rules as a fetched icon (a raster format the pipeline opens, within the byte cap).
 */
import { sniffImageType } from "./fetch-page.ts";
import { parsePage } from "./html-document.ts";

export interface InlineImage {
  bytes: Uint8Array;
  contentType: string;
}

/** The page's inline raster icons, in document order. */
export function inlineIcons(html: string, maxBytes: number): InlineImage[] {
  // Parsing a large page again costs the event loop a second or more: only when it may have one.
  if (!/<link\b[^>]*\bhref\s*=\s*["']?\s*data:/i.test(html)) return [];
  const document = parsePage(html);
  const icons: InlineImage[] = [];
  for (const link of document.querySelectorAll("link[rel][href]")) {
    const rel = (link.getAttribute("rel") ?? "").toLowerCase().split(/\s+/);
    if (!rel.some((token) => token === "icon" || token.startsWith("apple-touch-icon"))) continue;
    const image = decodeDataImage(link.getAttribute("href") ?? "", maxBytes);
    if (image) icons.push(image);
  }
  return icons;
}

/** A base64 `data:` URL's bytes when they are a raster image within `maxBytes`; null otherwise (SVG included). */
export function decodeDataImage(url: string, maxBytes: number): InlineImage | null {
  const match = /^\s*data:([^;,]*)(;[^,]*)?,(.*)$/is.exec(url);
  if (!match || !/;base64/i.test(match[2] ?? "")) return null;
  // Base64 is 4 characters per 3 bytes: refuse before decoding what would exceed the cap.
  if ((match[3]!.length * 3) / 4 > maxBytes + 3) return null;
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(Buffer.from(match[3]!.replace(/\s+/g, ""), "base64"));
  } catch {
    return null;
  }
  const contentType = sniffImageType(bytes);
  return contentType && bytes.byteLength <= maxBytes ? { bytes, contentType } : null;
}

/** `data:image/png;base64,...` of raster bytes. */
export const dataUrl = (bytes: Uint8Array, contentType: string) => `data:${contentType};base64,${Buffer.from(bytes).toString("base64")}`;
