/** Which uploaded content is an image (the camera RAWs and SVG, told by their bytes, are ingest/detect.ts's). */
import { isRawFormat, RAW_MIME } from "../camera/raw-formats.ts";
import type { UploadedContent } from "../kinds/media-kind.ts";
import { FIXED_LIMITS } from "../tenancy/tiers.ts";

/** file-type's extension -> the format name the API shows. */
const IMAGE_FORMATS: Record<string, string> = {
  jpg: "jpeg",
  png: "png",
  gif: "gif",
  webp: "webp",
  tif: "tiff",
  avif: "avif",
  heic: "heic",
  jxl: "jxl",
};

export const IMAGE_CONTENT: UploadedContent = {
  type: "image",
  detect({ ext, mime }) {
    if (isRawFormat(ext)) return { mime: RAW_MIME[ext], format: ext };
    const format = IMAGE_FORMATS[ext];
    return format ? { mime, format } : null;
  },
  accepts: "images (jpeg, png, gif, webp, tiff, avif, heic, jxl, camera raw: cr2, cr3, nef, dng, arw, raf, rw2, orf, pef, srw)",
  maxStreamingBytes: FIXED_LIMITS.maxImageBytes,
  hints: { contentTypes: /^image\//, names: /\.(jpe?g|png|gif|webp|tiff?|avif|heic|heif|svg|jxl|cr2|cr3|nef|dng|arw|raf|rw2|orf|pef|srw)$/i },
};
