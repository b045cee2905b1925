/**
 * Opening an uploaded image for rendering: what it is (`format`), its upright size as reported
 * to users, the metadata blocks its capture date is read from, and pixels sharp can render:
 * the bytes themselves for what libvips reads (JPEG, PNG, WebP, GIF, TIFF, AVIF, SVG), decoded
 * RGBA from the wasm decoders (HEIC, JPEG XL, LibRaw for RAWs whose previews are small or
 * missing), or a RAW's largest embedded preview JPEG. The
 * pixel limit is checked here, from headers, before anything is decoded.
 */
import sharp, { type Metadata, type SharpOptions } from "sharp";
import type { CameraFacts } from "../camera/camera-facts.ts";
import { blocksFromSharp, emptyBlocks, type MetadataBlocks } from "./capture-date.ts";
import { decodeHeic, isHevcHeif } from "./heic.ts";
import { decodeJxl, isJxl, jxlMetadata, jxlSize } from "./jxl.ts";
import { RawDecodeError, readRaw } from "./raw.ts";
import { developRaw } from "./raw-decode.ts";
import type { TiffBlock } from "../camera/tiff-ifd.ts";
import { VARIANT_SIZES } from "../files/variants.ts";
import { errorMessage } from "../errors.ts";
import { rawFormatOf } from "../camera/raw-formats.ts";

/** Default of MEDIABOX_IMAGE_MAX_PIXELS: room for 288 MP panoramas and 400 MP multi-shot cameras. */
export const DEFAULT_MAX_PIXELS = 500_000_000;

export class ImageDecodeError extends Error {
  override name = "ImageDecodeError";
  /** The capture date and camera facts read from the file's metadata anyway (renderImage sets them), for the pipeline to keep. */
  takenAt: string | null = null;
  camera: CameraFacts | null = null;
}

export interface OpenedImage {
  format: string;
  /** Upright size to report (a RAW's sensor size, turned by its orientation). */
  width: number;
  height: number;
  /** What sharp renders: encoded bytes (EXIF orientation still to apply), or upright RGBA pixels. */
  pixels: { kind: "encoded"; bytes: Buffer; width: number; height: number; hasAlpha: boolean } | { kind: "rgba"; data: Buffer; width: number; height: number; opaque: boolean };
  blocks: MetadataBlocks;
}

/** libvips reports AVIF and HEIC both as "heif"; the compression tells them apart. */
function formatOf(meta: Metadata): string {
  if (meta.format === "heif") return meta.compression === "av1" ? "avif" : "heic";
  return meta.format ?? "unknown";
}

const megapixels = (n: number) => `${(n / 1e6).toFixed(1)} megapixels`;

function checkPixels(width: number, height: number, maxPixels: number, what: string): void {
  if (width * height > maxPixels) {
    throw new ImageDecodeError(
      `the image could not be decoded: the ${what} is ${width}×${height} (${megapixels(width * height)}), over the ${megapixels(maxPixels)} limit (MEDIABOX_IMAGE_MAX_PIXELS)`,
    );
  }
}

const isOpaque = (data: Uint8Array | Uint8ClampedArray) => {
  for (let i = 3; i < data.length; i += 4) if (data[i] !== 255) return false;
  return true;
};

/** Options for every sharp instance reading the original: the limit is ours (checked above), not libvips' default. */
export const sharpInput = (maxPixels: number, failOn: SharpOptions["failOn"]): SharpOptions => ({ failOn, limitInputPixels: Math.max(1, Math.floor(maxPixels)) });

/** Opens the image, or throws ImageDecodeError naming why it cannot be. */
export async function openImage(input: Buffer, maxPixels = DEFAULT_MAX_PIXELS): Promise<OpenedImage> {
  const rawFormat = rawFormatOf(input);
  if (rawFormat) {
    let raw;
    try {
      raw = readRaw(input, rawFormat);
    } catch (err) {
      if (!(err instanceof RawDecodeError)) throw new ImageDecodeError(`the image could not be decoded: ${(err as Error).message}`);
      const developed = await developedRaw(input, rawFormat, err.found, err.exif, maxPixels);
      if (developed.image) return developed.image;
      const fallback = await rawWithoutPreview(input, rawFormat, err, maxPixels);
      if (fallback) return fallback;
      throw new ImageDecodeError(`the image could not be decoded: ${err.message}; ${developed.why}`);
    }
    if (Math.max(raw.previewWidth, raw.previewHeight) < DEVELOP_BELOW) {
      const developed = await developedRaw(input, rawFormat, raw, raw.exif, maxPixels);
      if (developed.image) return developed.image;
    }
    checkPixels(raw.previewWidth, raw.previewHeight, maxPixels, `${rawFormat.toUpperCase()} preview`);
    const turned = raw.orientation >= 5;
    return {
      format: rawFormat,
      width: turned ? raw.height : raw.width,
      height: turned ? raw.width : raw.height,
      pixels: { kind: "encoded", bytes: Buffer.from(raw.preview), width: raw.previewWidth, height: raw.previewHeight, hasAlpha: false },
      blocks: { ...emptyBlocks(), exif: raw.exif },
    };
  }

  if (isJxl(input)) {
    const size = jxlSize(input);
    if (size) checkPixels(size.width, size.height, maxPixels, "JPEG XL");
    let decoded;
    try {
      decoded = await decodeJxl(input);
    } catch (err) {
      throw new ImageDecodeError(`the image could not be decoded: ${(err as Error).message}`);
    }
    const data = Buffer.from(decoded.data.buffer, decoded.data.byteOffset, decoded.data.byteLength);
    return {
      format: "jxl",
      width: decoded.width,
      height: decoded.height,
      pixels: { kind: "rgba", data, width: decoded.width, height: decoded.height, opaque: isOpaque(data) },
      blocks: jxlMetadata(input),
    };
  }

  let meta: Metadata;
  try {
    // Reading the header only: the limit is checked below with a clear message.
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw new ImageDecodeError(`the image could not be decoded: ${(err as Error).message}`);
  }
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  if (!width || !height) throw new ImageDecodeError("the image could not be decoded: no dimensions");
  checkPixels(width, height, maxPixels, "image");
  const blocks = blocksFromSharp(meta, input);

  if (isHevcHeif(meta)) {
    let decoded;
    try {
      decoded = await decodeHeic(input);
    } catch (err) {
      throw new ImageDecodeError(`the image could not be decoded: ${(err as Error).message}`);
    }
    const data = Buffer.from(decoded.data.buffer, decoded.data.byteOffset, decoded.data.byteLength);
    // libheif applies the container's rotation and mirroring: these pixels are upright.
    return {
      format: "heic",
      width: decoded.width,
      height: decoded.height,
      pixels: { kind: "rgba", data, width: decoded.width, height: decoded.height, opaque: isOpaque(data) },
      blocks,
    };
  }
  return {
    format: formatOf(meta),
    width: meta.autoOrient?.width ?? width,
    height: meta.autoOrient?.height ?? height,
    pixels: { kind: "encoded", bytes: input, width, height, hasAlpha: meta.hasAlpha === true },
    blocks,
  };
}

/** RAWs whose largest preview is shorter than the largest variant are developed from their sensor data. */
const DEVELOP_BELOW = VARIANT_SIZES.large_1024;

/**
 * The RAW developed by LibRaw (raw-decode.ts), upright; `why` it was not when LibRaw cannot
 * develop it (the caller falls back to a preview). `sensor`: the size and orientation the
 * metadata gave, when it gave them.
 */
async function developedRaw(
  input: Buffer,
  format: string,
  sensor: { width: number; height: number; orientation: number } | null,
  exif: TiffBlock[],
  maxPixels: number,
): Promise<{ image: OpenedImage; why?: never } | { image: null; why: string }> {
  let developed;
  try {
    // Over the limit, the preview (if any) is still rendered.
    if (sensor) checkPixels(sensor.width, sensor.height, maxPixels, `${format.toUpperCase()} sensor image`);
    developed = await developRaw(input, sensor ?? { width: 0, height: 0 });
  } catch (err) {
    return { image: null, why: errorMessage(err) };
  }
  const turned = (sensor?.orientation ?? 1) >= 5;
  const { width, height, data } = developed;
  return {
    image: {
      format,
      // The size users are told is the sensor's (a half-size development has half of it).
      width: sensor ? (turned ? sensor.height : sensor.width) : width,
      height: sensor ? (turned ? sensor.width : sensor.height) : height,
      pixels: { kind: "rgba", data, width, height, opaque: true },
      blocks: { ...emptyBlocks(), exif },
    },
  };
}

/**
 * A TIFF-structured RAW without any JPEG preview (some DNG converters and phones store only an
 * uncompressed thumbnail): libvips reads its first directory, a small RGB image, which is still
 * better than nothing for variants; the sensor size stays the metadata's.
 */
async function rawWithoutPreview(input: Buffer, format: string, err: RawDecodeError, maxPixels: number): Promise<OpenedImage | null> {
  if (format === "cr3" || format === "raf" || !err.found) return null;
  const meta = await sharp(input, { limitInputPixels: false }).metadata().catch(() => null);
  if (!meta?.width || !meta.height || meta.width * meta.height > maxPixels) return null;
  const ok = await sharp(input, sharpInput(maxPixels, "error")).resize(8, 8).raw().toBuffer().then(() => true, () => false);
  if (!ok) return null;
  const turned = err.found.orientation >= 5;
  return {
    format,
    width: turned ? err.found.height : err.found.width,
    height: turned ? err.found.width : err.found.height,
    pixels: { kind: "encoded", bytes: input, width: meta.width, height: meta.height, hasAlpha: meta.hasAlpha === true },
    blocks: { ...emptyBlocks(), exif: err.found.exif },
  };
}

/** A sharp instance over the opened pixels, upright (EXIF orientation applied to encoded bytes). */
export function uprightPixels(image: OpenedImage, maxPixels: number, failOn: SharpOptions["failOn"]) {
  const { pixels } = image;
  if (pixels.kind === "rgba") return sharp(pixels.data, { raw: { width: pixels.width, height: pixels.height, channels: 4 }, limitInputPixels: false });
  return sharp(pixels.bytes, sharpInput(maxPixels, failOn)).rotate();
}
