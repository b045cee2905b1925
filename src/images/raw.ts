/**
 * Camera RAW files (CR2, CR3, NEF, DNG, ARW, RAF, RW2, ORF, PEF; which RAW a file is:
 * camera/raw-formats.ts): the largest embedded preview JPEG (what variants, OCR and the detectors read: no RAW decoder that
 * runs offline from npm handles these formats, while every camera stores a JPEG rendering of
 * the shot inside the file), the sensor's image size and the orientation from the RAW's own
 * metadata, and the EXIF block the capture date is read from. The original stays as uploaded.
 */
import { exifDirectories, TAG, TiffBlock } from "../camera/tiff-ifd.ts";
import type { RawFormat } from "../camera/raw-formats.ts";

const ascii = (bytes: Uint8Array, start: number, length: number) => String.fromCharCode(...bytes.subarray(start, start + length));

interface JpegFound {
  start: number;
  end: number;
  width: number;
  height: number;
}

const SOF_BASELINE = new Set([0xc0, 0xc1, 0xc2]); // what libjpeg (sharp) decodes; lossless SOF3 is the RAW data itself

/**
 * Walks a JPEG's marker segments from `start` (an SOI) to its EOI: the frame size and where it
 * ends, or null when it is not a complete JPEG that sharp can decode (a lossless-JPEG raw strip,
 * a false SOI inside other data, a truncated preview).
 */
function walkJpeg(bytes: Uint8Array, start: number): JpegFound | null {
  let at = start + 2;
  let width = 0;
  let height = 0;
  let scanned = false;
  const limit = bytes.byteLength;
  while (at + 2 <= limit) {
    if (bytes[at] !== 0xff) return null;
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (marker === 0xd9) return scanned && width && height ? { start, end: at + 2, width, height } : null;
    if (marker >= 0xd0 && marker <= 0xd7) {
      at += 2;
      continue;
    }
    if (at + 4 > limit) return null;
    const length = (bytes[at + 2]! << 8) | bytes[at + 3]!;
    if (length < 2) return null;
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (!SOF_BASELINE.has(marker)) return null;
      height = (bytes[at + 5]! << 8) | bytes[at + 6]!;
      width = (bytes[at + 7]! << 8) | bytes[at + 8]!;
    }
    at += 2 + length;
    if (marker === 0xda) {
      if (!width || !height) return null;
      scanned = true;
      // Entropy-coded data: the next marker is an FF not followed by 00 (stuffing) or RSTn.
      while (at + 1 < limit) {
        if (bytes[at] === 0xff) {
          const next = bytes[at + 1]!;
          if (next !== 0x00 && !(next >= 0xd0 && next <= 0xd7) && next !== 0xff) break;
        }
        at++;
      }
    }
  }
  return null;
}

/**
 * The largest complete JPEG embedded anywhere in the file (by pixel count). Every RAW format
 * keeps its previews as plain JPEG streams, so one scan serves them all, whatever the container
 * (TIFF directories, Canon's ISO boxes, Fuji's header); JPEGs nested inside a larger one (its
 * EXIF thumbnail) are skipped over.
 */
export function largestEmbeddedJpeg(bytes: Uint8Array): { jpeg: Uint8Array; width: number; height: number } | null {
  let best: JpegFound | null = null;
  let at = 0;
  while ((at = bytes.indexOf(0xff, at)) !== -1 && at + 3 < bytes.byteLength) {
    if (bytes[at + 1] === 0xd8 && bytes[at + 2] === 0xff) {
      const found = walkJpeg(bytes, at);
      if (found) {
        if (!best || found.width * found.height > best.width * best.height) best = found;
        at = found.end;
        continue;
      }
    }
    at++;
  }
  return best ? { jpeg: bytes.subarray(best.start, best.end), width: best.width, height: best.height } : null;
}

/** ISO-BMFF boxes of `bytes[start, end)`: type and payload range. */
function* boxes(bytes: Uint8Array, start: number, end: number): Generator<{ type: string; start: number; end: number }> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = start;
  while (at + 8 <= end) {
    let size = view.getUint32(at);
    let header = 8;
    if (size === 1 && at + 16 <= end) {
      size = Number(view.getBigUint64(at + 8));
      header = 16;
    } else if (size === 0) size = end - at;
    if (size < header || at + size > end) return;
    yield { type: ascii(bytes, at + 4, 4), start: at + header, end: at + size };
    at += size;
  }
}

const CANON_UUID = "85c0b687820f11e08111f4ce462b6a48";
const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** CR3 keeps IFD0 in a CMT1 box and the EXIF directory in CMT2, inside moov's Canon uuid box. */
function cr3Metadata(bytes: Uint8Array): { cmt1: TiffBlock | null; cmt2: TiffBlock | null; cmt4: TiffBlock | null } {
  const out = { cmt1: null as TiffBlock | null, cmt2: null as TiffBlock | null, cmt4: null as TiffBlock | null };
  for (const moov of boxes(bytes, 0, bytes.byteLength)) {
    if (moov.type !== "moov") continue;
    for (const box of boxes(bytes, moov.start, moov.end)) {
      if (box.type !== "uuid" || hex(bytes.subarray(box.start, box.start + 16)) !== CANON_UUID) continue;
      for (const cmt of boxes(bytes, box.start + 16, box.end)) {
        const block = TiffBlock.open(bytes.subarray(cmt.start, cmt.end));
        if (cmt.type === "CMT1") out.cmt1 = block;
        if (cmt.type === "CMT2") out.cmt2 = block;
        if (cmt.type === "CMT4") out.cmt4 = block;
      }
    }
  }
  return out;
}

/** Fuji's RAF header: the big-endian offset and length of the embedded JPEG (with its own EXIF), and the CFA records. */
function rafParts(bytes: Uint8Array): { jpeg: Uint8Array | null; width: number | null; height: number | null } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 108) return { jpeg: null, width: null, height: null };
  const jpegOffset = view.getUint32(84);
  const jpegLength = view.getUint32(88);
  const jpeg = jpegOffset + jpegLength <= bytes.byteLength && jpegLength > 0 ? bytes.subarray(jpegOffset, jpegOffset + jpegLength) : null;
  // CFA header records: tag 0x111 RawImageCroppedSize, 0x100 RawImageFullSize (height, width).
  const recordsAt = view.getUint32(92);
  let full: [number, number] | null = null;
  let cropped: [number, number] | null = null;
  if (recordsAt + 4 <= bytes.byteLength) {
    const count = Math.min(view.getUint32(recordsAt), 256);
    let at = recordsAt + 4;
    for (let i = 0; i < count && at + 4 <= bytes.byteLength; i++) {
      const tag = view.getUint16(at);
      const size = view.getUint16(at + 2);
      if (at + 4 + size > bytes.byteLength) break;
      if ((tag === 0x100 || tag === 0x111) && size >= 4) {
        const pair: [number, number] = [view.getUint16(at + 4), view.getUint16(at + 6)];
        if (tag === 0x100) full = pair;
        else cropped = pair;
      }
      at += 4 + size;
    }
  }
  const size = cropped ?? full;
  return { jpeg, width: size?.[1] ?? null, height: size?.[0] ?? null };
}

export interface RawImage {
  format: RawFormat;
  /** The largest embedded preview, with the RAW's orientation written into it when it had none of its own. */
  preview: Uint8Array;
  previewWidth: number;
  previewHeight: number;
  /** The sensor's image size as stored (before orientation), from the RAW's metadata; the preview's size when none is recorded. */
  width: number;
  height: number;
  /** EXIF orientation 1-8 of the RAW. */
  orientation: number;
  /** The EXIF-style TIFF blocks the capture date is read from (IFD0, EXIF and GPS directories). */
  exif: TiffBlock[];
}

export class RawDecodeError extends Error {
  override name = "RawDecodeError";
  /**
   * `found`: what the metadata said anyway (sensor size as stored, orientation and EXIF), for a
   * fallback rendering; `exif`: the EXIF blocks found, whether or not the size was (the capture
   * date and camera facts survive a RAW that cannot be rendered).
   */
  constructor(
    message: string,
    readonly found: Pick<RawImage, "width" | "height" | "orientation" | "exif"> | null = null,
    readonly exif: TiffBlock[] = found?.exif ?? [],
  ) {
    super(message);
  }
}

/** A JPEG's own EXIF orientation (APP1 "Exif"), or null when it carries none. */
function jpegOrientation(jpeg: Uint8Array): number | null {
  const tiff = exifOfJpeg(jpeg);
  return tiff ? tiff.number(tiff.readIfd(tiff.firstIfdOffset).entries.get(TAG.Orientation)) : null;
}

/** The JPEG with an APP1 EXIF segment holding only `orientation` put right after its SOI (lossless: no re-encode). */
export function withOrientation(jpeg: Uint8Array, orientation: number): Uint8Array {
  const tiff = [0x49, 0x49, 0x2a, 0x00, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, orientation, 0, 0, 0, 0, 0, 0, 0];
  const payload = [...Array.from("Exif\0\0", (c) => c.charCodeAt(0)), ...tiff];
  const segment = [0xff, 0xe1, ((payload.length + 2) >> 8) & 0xff, (payload.length + 2) & 0xff, ...payload];
  const out = new Uint8Array(jpeg.byteLength + segment.length);
  out.set(jpeg.subarray(0, 2));
  out.set(segment, 2);
  out.set(jpeg.subarray(2), 2 + segment.length);
  return out;
}

/** Largest ImageWidth × ImageLength among IFD0, its chain and SubIFDs (the raw data's directory is the full sensor image). */
function largestDirectory(tiff: TiffBlock): { width: number; height: number } | null {
  let best: { width: number; height: number } | null = null;
  const seen = new Set<number>();
  const visit = (offset: number, depth: number) => {
    if (!offset || seen.has(offset) || seen.size > 32 || depth > 3) return;
    seen.add(offset);
    const { entries, next } = tiff.readIfd(offset);
    const width = tiff.number(entries.get(TAG.ImageWidth)) ?? 0;
    const height = tiff.number(entries.get(TAG.ImageLength)) ?? 0;
    // DNG names the visible area of the raw data; other formats store it as is.
    const crop = tiff.numbers(entries.get(TAG.DefaultCropSize), 2);
    const subfile = tiff.number(entries.get(TAG.NewSubfileType)) ?? 0;
    const [w, h] = crop.length === 2 && subfile === 0 ? [Math.round(crop[0]!), Math.round(crop[1]!)] : [width, height];
    if (w && h && (!best || w * h > best.width * best.height)) best = { width: w, height: h };
    for (const sub of tiff.numbers(entries.get(TAG.SubIFDs), 8)) visit(sub, depth + 1);
    visit(next, depth);
  };
  visit(tiff.firstIfdOffset, 0);
  return best;
}

/** Panasonic RW2 stores the sensor area as borders in IFD0 (tags 4-7), the full size in tags 2-3. */
function rw2Size(tiff: TiffBlock): { width: number; height: number } | null {
  const ifd0 = tiff.readIfd(tiff.firstIfdOffset).entries;
  const [top, left, bottom, right] = [4, 5, 6, 7].map((tag) => tiff.number(ifd0.get(tag)) ?? -1) as [number, number, number, number];
  if (top >= 0 && left >= 0 && right > left && bottom > top) return { width: right - left, height: bottom - top };
  const width = tiff.number(ifd0.get(2));
  const height = tiff.number(ifd0.get(3));
  return width && height ? { width, height } : null;
}

/** Reads a RAW: its preview, sensor size, orientation and EXIF; throws RawDecodeError when it holds no usable preview. */
export function readRaw(bytes: Uint8Array, format: RawFormat): RawImage {
  const exif: TiffBlock[] = [];
  let size: { width: number; height: number } | null = null;
  let orientation: number | null = null;
  let found = largestEmbeddedJpeg(bytes);

  if (format === "raf") {
    const parts = rafParts(bytes);
    if (parts.width && parts.height) size = { width: parts.width, height: parts.height };
    // The RAF's JPEG carries the camera's EXIF (dates, orientation) in its own APP1.
    const jpeg = parts.jpeg ?? found?.jpeg;
    const app1 = jpeg ? exifOfJpeg(jpeg) : null;
    if (app1) {
      exif.push(app1);
      // Without the CFA records, the JPEG's EXIF pixel dimensions name the developed image's size.
      if (!size) {
        const entries = exifDirectories(app1).exif;
        const width = app1.number(entries.get(TAG.PixelXDimension));
        const height = app1.number(entries.get(TAG.PixelYDimension));
        if (width && height) size = { width, height };
      }
    }
  } else if (format === "cr3") {
    const { cmt1, cmt2, cmt4 } = cr3Metadata(bytes);
    for (const block of [cmt1, cmt2, cmt4]) if (block) exif.push(block);
    if (cmt1) orientation = cmt1.number(cmt1.readIfd(cmt1.firstIfdOffset).entries.get(TAG.Orientation));
    if (cmt2) {
      const entries = cmt2.readIfd(cmt2.firstIfdOffset).entries;
      const width = cmt2.number(entries.get(TAG.PixelXDimension));
      const height = cmt2.number(entries.get(TAG.PixelYDimension));
      if (width && height) size = { width, height };
    }
  } else {
    const tiff = TiffBlock.open(bytes);
    if (tiff) {
      exif.push(tiff);
      const { ifd0, exif: exifIfd } = exifDirectories(tiff);
      orientation = tiff.number(ifd0.get(TAG.Orientation));
      const pixelX = tiff.number(exifIfd.get(TAG.PixelXDimension));
      const pixelY = tiff.number(exifIfd.get(TAG.PixelYDimension));
      // EXIF's pixel dimensions are the developed image's size where cameras record it (Canon,
      // Sony); otherwise the raw data's directory is.
      size = format === "rw2" ? rw2Size(tiff) : format !== "dng" && pixelX && pixelY && pixelX > 160 ? { width: pixelX, height: pixelY } : largestDirectory(tiff);
    }
  }
  if (!found) {
    const known = size ? { width: size.width, height: size.height, orientation: orientation && orientation <= 8 ? orientation : 1, exif } : null;
    throw new RawDecodeError(`the ${format.toUpperCase()} file holds no embedded preview JPEG that can be decoded`, known, exif);
  }

  let preview = found.jpeg;
  // Some previews carry the camera's EXIF themselves (Panasonic's JpgFromRaw): a date source too.
  const previewExif = exifOfJpeg(preview);
  if (previewExif && format !== "raf") exif.push(previewExif);
  const own = jpegOrientation(preview);
  if (own === null && orientation && orientation > 1 && orientation <= 8) preview = withOrientation(preview, orientation);
  const effective = own ?? orientation ?? 1;
  // A preview's aspect always follows the sensor's; a recorded size that contradicts it (swapped axes) is turned to match.
  let { width, height } = size ?? { width: found.width, height: found.height };
  if ((width > height) !== (found.width > found.height) && width !== height && found.width !== found.height) [width, height] = [height, width];
  return {
    format,
    preview,
    previewWidth: found.width,
    previewHeight: found.height,
    width,
    height,
    orientation: effective >= 1 && effective <= 8 ? effective : 1,
    exif,
  };
}

/** The TIFF block of a JPEG's APP1 EXIF segment. */
export function exifOfJpeg(jpeg: Uint8Array): TiffBlock | null {
  let at = 2;
  while (at + 4 <= jpeg.byteLength && jpeg[at] === 0xff) {
    const marker = jpeg[at + 1]!;
    if (marker === 0xda || marker === 0xd9) return null;
    const length = (jpeg[at + 2]! << 8) | jpeg[at + 3]!;
    if (marker === 0xe1 && ascii(jpeg, at + 4, 6) === "Exif\0\0") return TiffBlock.open(jpeg.subarray(at + 10, at + 2 + length));
    at += 2 + length;
  }
  return null;
}
