/**
 * Rendering an image's variants: the four resized copies (longest side 64/256/750/1024 px, never
 * upscaled, EXIF orientation applied, converted to sRGB, WebP), its BlurHash, upright
 * dimensions, format and the capture time from EXIF. Pure: bytes in, bytes out; storing them is
 * the pipeline's job.
 */
import { encode as encodeBlurHash } from "blurhash";
import exifr from "exifr";
import sharp, { type Metadata, type Sharp } from "sharp";
import { heicToPng, isHevcHeif } from "./heic.ts";

export const VARIANT_SIZES = { tiny_64: 64, small_256: 256, medium_750: 750, large_1024: 1024 } as const;
export type VariantType = keyof typeof VARIANT_SIZES;
export const VARIANT_TYPES = Object.keys(VARIANT_SIZES) as VariantType[];

export const VARIANT_CONTENT_TYPE = "image/webp";

export interface RenderedVariant {
  type: VariantType;
  width: number;
  height: number;
  data: Buffer;
}

export interface RenderedImage {
  /** Upright size (after EXIF orientation). */
  width: number;
  height: number;
  format: string;
  blurHash: string;
  /** ISO timestamp of DateTimeOriginal / CreateDate, or null. */
  takenAt: string | null;
  variants: RenderedVariant[];
  /** Mean sRGB colour of the outer 5% frame and its spread (the compliance rules read them). */
  border: { mean: [number, number, number]; stdDev: number };
  /** The full image as later stages (OCR) decode it: the original, or a PNG of a HEIC's pixels. */
  readable: Buffer;
}

export class ImageDecodeError extends Error {
  override name = "ImageDecodeError";
}

/** libvips reports AVIF and HEIC both as "heif"; the compression tells them apart. */
function formatOf(meta: Metadata): string {
  if (meta.format === "heif") return meta.compression === "av1" ? "avif" : "heic";
  if (meta.format === "jpeg") return "jpeg";
  return meta.format ?? "unknown";
}

// EXIF times carry no zone unless OffsetTime* is present; without it they are read as UTC.
function exifTime(value: unknown, offset: unknown): string | null {
  if (typeof value !== "string") return null;
  const m = /^(\d{4}):(\d{2}):(\d{2})[ T](\d{2}):(\d{2}):(\d{2})/.exec(value.trim());
  if (!m) return null;
  const zone = typeof offset === "string" && /^[+-]\d{2}:\d{2}$/.test(offset.trim()) ? offset.trim() : "Z";
  const ms = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${zone}`);
  return Number.isFinite(ms) && Number(m[1]) > 1900 ? new Date(ms).toISOString() : null;
}

async function readCaptureTime(input: Buffer): Promise<string | null> {
  try {
    const tags = await exifr.parse(input, {
      pick: ["DateTimeOriginal", "CreateDate", "OffsetTimeOriginal", "OffsetTime"],
      reviveValues: false,
    });
    if (!tags) return null;
    return exifTime(tags.DateTimeOriginal, tags.OffsetTimeOriginal) ?? exifTime(tags.CreateDate, tags.OffsetTime);
  } catch {
    return null; // unreadable EXIF never fails the image
  }
}

async function borderStats(upright: Sharp): Promise<RenderedImage["border"]> {
  // A 40x40 thumbnail is enough to judge whether the frame is a plain (e.g. white) background.
  const { data, info } = await upright.clone().resize(40, 40, { fit: "fill" }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const frame = 2;
  const channels: number[][] = [[], [], []];
  for (let y = 0; y < info.height; y++) {
    for (let x = 0; x < info.width; x++) {
      if (x >= frame && y >= frame && x < info.width - frame && y < info.height - frame) continue;
      const i = (y * info.width + x) * info.channels;
      for (let c = 0; c < 3; c++) channels[c]!.push(data[i + c]!);
    }
  }
  const means = channels.map((values) => values.reduce((a, b) => a + b, 0) / values.length);
  // Spread per channel, averaged: a plain background scores near 0 whatever its colour.
  const stdDev = channels.reduce((sum, values, c) => sum + Math.sqrt(values.reduce((a, v) => a + (v - means[c]!) ** 2, 0) / values.length), 0) / 3;
  const mean = means.map(Math.round) as [number, number, number];
  return { mean, stdDev: Math.round(stdDev * 10) / 10 };
}

export async function renderImage(input: Buffer): Promise<RenderedImage> {
  let format: string;
  let meta: Metadata;
  let readable: Buffer;
  try {
    const original = await sharp(input).metadata();
    format = formatOf(original);
    readable = isHevcHeif(original) ? await heicToPng(input, original) : input;
    meta = readable === input ? original : await sharp(readable).metadata();
  } catch (err) {
    throw new ImageDecodeError(`the image could not be decoded: ${(err as Error).message}`);
  }
  const width = meta.autoOrient?.width ?? meta.width;
  const height = meta.autoOrient?.height ?? meta.height;
  if (!width || !height) throw new ImageDecodeError("the image could not be decoded: no dimensions");

  try {
    // Decode once to the largest variant (libvips shrinks on load), then derive the smaller ones
    // from those pixels instead of decoding the original four times.
    const largest = VARIANT_SIZES.large_1024;
    const upright = sharp(readable, { failOn: "error" })
      .rotate()
      .resize(largest, largest, { fit: "inside", withoutEnlargement: true })
      .toColourspace("srgb");
    const { data: pixels, info } = await upright.clone().ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const raw = { raw: { width: info.width, height: info.height, channels: 4 as const } };
    const opaque = meta.hasAlpha !== true;

    const variants = await Promise.all(
      VARIANT_TYPES.map(async (type) => {
        const side = VARIANT_SIZES[type];
        let pipeline = sharp(pixels, raw);
        if (Math.max(info.width, info.height) > side) pipeline = pipeline.resize(side, side, { fit: "inside" });
        if (opaque) pipeline = pipeline.removeAlpha();
        const { data, info: out } = await pipeline.webp({ quality: type === "tiny_64" ? 70 : 80, effort: 2 }).toBuffer({ resolveWithObject: true });
        return { type, width: out.width, height: out.height, data };
      }),
    );

    const small = await sharp(pixels, raw).resize(32, 32, { fit: "inside" }).raw().toBuffer({ resolveWithObject: true });
    const componentsX = small.info.width >= small.info.height ? 4 : 3;
    const componentsY = small.info.width >= small.info.height ? 3 : 4;
    const blurHash = encodeBlurHash(new Uint8ClampedArray(small.data), small.info.width, small.info.height, componentsX, componentsY);

    return {
      width,
      height,
      format,
      blurHash,
      takenAt: await readCaptureTime(input),
      variants,
      border: await borderStats(sharp(pixels, raw)),
      readable,
    };
  } catch (err) {
    if (err instanceof ImageDecodeError) throw err;
    throw new ImageDecodeError(`the image could not be decoded: ${(err as Error).message}`);
  }
}
