/**
 * Rendering an image's variants: the four resized copies (longest side 64/256/750/1024 px, never
 * upscaled, EXIF orientation applied, converted to sRGB, WebP), its BlurHash, upright
 * dimensions, format, capture time (capture-date.ts), whether the file is damaged, and the copy
 * OCR reads. Decoding (which format, wasm decoders, RAW previews, the pixel limit) is
 * open-image.ts's. Pure: bytes in, bytes out; storing them is the pipeline's job.
 */
import { encode as encodeBlurHash } from "blurhash";
import sharp, { type Sharp } from "sharp";
import type { CameraFacts } from "../camera/camera-facts.ts";
import { cameraFactsFromTags } from "./camera-exif.ts";
import { blocksFromJpegSegments, blocksFromSharp, captureDate, emptyBlocks, type CaptureDate, type MetadataBlocks } from "./capture-date.ts";
import { readPhotoTags } from "./photo-tags.ts";
import { isJxl, jxlMetadata } from "./jxl.ts";
import { rawFormatOf } from "../camera/raw-formats.ts";
import { RawDecodeError, readRaw } from "./raw.ts";
import { VARIANT_SIZES, VARIANT_TYPES, type VariantType } from "../files/variants.ts";
import { DEFAULT_MAX_PIXELS, ImageDecodeError, openImage, uprightPixels, type OpenedImage } from "./open-image.ts";

export { DEFAULT_MAX_PIXELS, ImageDecodeError };


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
  /** ISO timestamp by the capture-date chain (capture-date.ts), or null. */
  takenAt: string | null;
  /** Which metadata field takenAt came from ("EXIF DateTimeOriginal", "XMP photoshop:DateCreated", ...). */
  takenAtSource: string | null;
  /** What the camera recorded: make, model, lens, exposure, GPS, orientation, the date with its offset. */
  camera: CameraFacts;
  /**
   * Why the file is damaged when it decoded only partly (a truncated or corrupt JPEG shown as far
   * as it goes, the rest grey), else null. The variants are still made from what decoded.
   */
  damaged: string | null;
  variants: RenderedVariant[];
  /**
   * The one decode every variant was made from: upright sRGB RGBA pixels, longest side at most
   * 1024 (the large variant's size). Later stages read these instead of decoding again.
   */
  pixels: DecodedPixels;
  /** Mean sRGB colour of the outer 5% frame and its spread (the compliance rules read them). */
  border: { mean: [number, number, number]; stdDev: number };
  /**
   * The image as OCR reads it: the original when sharp reads it as is; otherwise (HEIC, JPEG XL,
   * RAW, damaged, huge) an upright PNG of at most READABLE_LONG_SIDE px, or the RAW's preview.
   */
  readable: Buffer;
}

export interface DecodedPixels {
  data: Buffer;
  width: number;
  height: number;
  channels: 4;
}

export interface RenderOptions {
  /** Images with more pixels are refused with a clear message (MEDIABOX_IMAGE_MAX_PIXELS). */
  maxPixels?: number;
}

/** OCR never reads more than 2500 px on the long side (ocr.ts), so a copy of this size loses nothing. */
export const READABLE_LONG_SIDE = 2500;
/** Above this many pixels the original is not handed to OCR (it would decode it whole): a bounded copy is. */
const READABLE_MAX_PIXELS = 40_000_000;

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

export interface PhotoMetadata {
  date: CaptureDate | null;
  camera: CameraFacts;
}

async function metadataOf(blocks: MetadataBlocks): Promise<PhotoMetadata> {
  const tags = await readPhotoTags(blocks);
  const date = captureDate(tags);
  return { date, camera: cameraFactsFromTags(tags, date) };
}

/** Reads the capture date and camera facts alone (no decoding): the pipeline can keep them even when rendering fails. */
export async function readPhotoMetadata(input: Buffer): Promise<PhotoMetadata | null> {
  try {
    return await metadataOf((await openImageHeaders(input)).blocks);
  } catch {
    return null; // unreadable metadata never fails anything
  }
}

export async function readCaptureDate(input: Buffer): Promise<CaptureDate | null> {
  return (await readPhotoMetadata(input))?.date ?? null;
}

// Opening a HEIC or JPEG XL decodes it; for the date alone only headers are needed, which
// open-image reads before decoding (a RAW's or sharp's metadata).
async function openImageHeaders(input: Buffer): Promise<Pick<OpenedImage, "blocks">> {
  if (isJxl(input)) return { blocks: jxlMetadata(input) };
  const rawFormat = rawFormatOf(input);
  if (!rawFormat) {
    const meta = await sharp(input, { limitInputPixels: false }).metadata().catch(() => null);
    return { blocks: meta ? blocksFromSharp(meta, input) : blocksFromJpegSegments(input) };
  }
  // A RAW's metadata is read from its own directories, whether or not it holds a preview to render.
  try {
    return { blocks: { ...emptyBlocks(), exif: readRaw(input, rawFormat).exif } };
  } catch (err) {
    if (err instanceof RawDecodeError) return { blocks: { ...emptyBlocks(), exif: err.exif } };
    throw err;
  }
}

interface Rendered {
  pixels: Buffer;
  info: { width: number; height: number };
  readable: Buffer | null;
}

/** Decodes once to the largest variant's size (libvips shrinks JPEGs on load), plus OCR's bounded copy when one is needed. */
async function decodeUpright(image: OpenedImage, maxPixels: number, failOn: "error" | "none", needReadable: boolean): Promise<Rendered> {
  const largest = VARIANT_SIZES.large_1024;
  const { data: pixels, info } = await uprightPixels(image, maxPixels, failOn)
    .resize(largest, largest, { fit: "inside", withoutEnlargement: true })
    .toColourspace("srgb")
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const readable = needReadable
    ? await uprightPixels(image, maxPixels, failOn)
        .resize(READABLE_LONG_SIDE, READABLE_LONG_SIDE, { fit: "inside", withoutEnlargement: true })
        .toColourspace("srgb")
        // Fast compression: the PNG lives only for this processing run.
        .png({ compressionLevel: 1 })
        .toBuffer()
    : null;
  return { pixels, info, readable };
}

/**
 * Renders the image; an ImageDecodeError carries the capture date and camera facts when the
 * metadata had them (`err.takenAt`, `err.camera`), so a file that never decodes still keeps them.
 */
export async function renderImage(input: Buffer, options: RenderOptions = {}): Promise<RenderedImage> {
  try {
    return await render(input, options);
  } catch (err) {
    if (err instanceof ImageDecodeError) {
      const metadata = await readPhotoMetadata(input);
      err.takenAt = metadata?.date?.at ?? null;
      err.camera = metadata?.camera ?? null;
    }
    throw err;
  }
}

async function render(input: Buffer, options: RenderOptions): Promise<RenderedImage> {
  const maxPixels = options.maxPixels ?? DEFAULT_MAX_PIXELS;
  const image = await openImage(input, maxPixels);
  const { pixels: source } = image;
  const { date, camera } = await metadataOf(image.blocks);
  const hugeOriginal = source.kind === "encoded" && source.width * source.height > READABLE_MAX_PIXELS;
  const originalReadable = source.kind === "encoded" && !hugeOriginal;

  let decoded: Rendered;
  let damaged: string | null = null;
  try {
    decoded = await decodeUpright(image, maxPixels, "error", !originalReadable);
  } catch (err) {
    if (source.kind !== "encoded") throw new ImageDecodeError(`the image could not be decoded: ${oneLine(err)}`);
    // A truncated or corrupt file: decode what is there (libvips fills the rest) and say so.
    try {
      decoded = await decodeUpright(image, maxPixels, "none", true);
    } catch {
      throw new ImageDecodeError(`the image could not be decoded: ${oneLine(err)}`);
    }
    damaged = `the ${image.format.toUpperCase()} is damaged and was decoded only as far as it goes: ${oneLine(err)}`;
  }

  try {
    const { pixels, info } = decoded;
    const raw = { raw: { width: info.width, height: info.height, channels: 4 as const } };
    const opaque = source.kind === "rgba" ? source.opaque : !source.hasAlpha;

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
      width: image.width,
      height: image.height,
      format: image.format,
      blurHash,
      takenAt: date?.at ?? null,
      takenAtSource: date?.source ?? null,
      camera,
      damaged,
      variants,
      pixels: { data: pixels, width: info.width, height: info.height, channels: 4 },
      border: await borderStats(sharp(pixels, raw)),
      readable: decoded.readable ?? (source.kind === "encoded" ? source.bytes : input),
    };
  } catch (err) {
    if (err instanceof ImageDecodeError) throw err;
    throw new ImageDecodeError(`the image could not be decoded: ${oneLine(err)}`);
  }
}

/** libvips reports one line per layer; one line reads better in logs and API errors. */
function oneLine(err: unknown): string {
  return String((err as Error)?.message ?? err).trim().replace(/\s*\n\s*/g, "; ");
}
