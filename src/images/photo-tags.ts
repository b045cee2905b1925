/**
 * The tags a photo's metadata blocks carry, read by exifr (EXIF/TIFF directories, XMP packets,
 * IPTC-IIM datasets) into one set: the capture-date chain (capture-date.ts) and the camera facts
 * (camera-exif.ts) read from it. Gathering the blocks stays with the decoders (sharp's metadata,
 * the RAW and JPEG XL readers), which know where each format keeps them.
 */
import { parse as parseExif, segmentParsers } from "exifr";
import type { MetadataBlocks } from "./capture-date.ts";

type TagValue = string | number | number[] | Uint8Array | null | undefined;
type Directory = Map<number, TagValue>;

export interface PhotoTags {
  /** IFD0, EXIF and GPS directories by tag number; the first block holding a tag wins. */
  ifd0: Directory;
  exif: Directory;
  gps: Directory;
  /** XMP properties by namespace prefix as written ("exif", "xmp" or "xap", "photoshop", "aux", ...). */
  xmp: Record<string, Record<string, unknown>>;
  /** IPTC record 2 datasets by number (first value of repeated ones). */
  iptc: Map<number, string>;
}

const TIFF_OPTIONS = {
  tiff: true,
  exif: true,
  gps: true,
  ifd1: false,
  interop: false,
  xmp: false,
  iptc: false,
  icc: false,
  jfif: false,
  ihdr: false,
  makerNote: false,
  userComment: false,
  // Raw values by tag number: dates stay as written, so the chain can read their zones.
  translateKeys: false,
  translateValues: false,
  reviveValues: false,
  mergeOutput: false,
  silentErrors: true,
} as const;

/** GPS tags of a GPS directory kept as its own block (CR3's CMT4) or in IFD0 by some converters. */
const GPS_DATE_STAMP = 0x001d;
const GPS_LATITUDE_REF = 0x0001;

function merge(into: Directory, from: Record<string, TagValue> | undefined): void {
  if (!from) return;
  for (const [key, value] of Object.entries(from)) {
    const tag = Number(key);
    if (Number.isInteger(tag) && value !== undefined && value !== null && !into.has(tag)) into.set(tag, value);
  }
}

/** Whether IFD0 of a block is really a GPS directory (a block holding only GPS tags). */
function isGpsDirectory(ifd0: Record<string, TagValue>): boolean {
  const ref = ifd0[GPS_LATITUDE_REF];
  return ifd0[GPS_DATE_STAMP] !== undefined || ref === "N" || ref === "S";
}

async function readTiff(tags: PhotoTags, bytes: Uint8Array): Promise<void> {
  // exifr reads the TIFF header's magic loosely, so Panasonic's "IIU" and Olympus' "IIRO" open too.
  const parsed = (await parseExif(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), TIFF_OPTIONS).catch(() => null)) as Record<
    string,
    Record<string, TagValue>
  > | null;
  if (!parsed) return;
  const { ifd0, exif, gps } = parsed;
  merge(tags.ifd0, ifd0);
  merge(tags.exif, exif);
  merge(tags.gps, gps);
  // CR3 keeps its EXIF and GPS directories as TIFF blocks of their own: their IFD0 is that directory.
  if (ifd0 && !exif) merge(tags.exif, ifd0);
  if (ifd0 && !gps && isGpsDirectory(ifd0)) merge(tags.gps, ifd0);
}

function readXmp(tags: PhotoTags, packet: string): void {
  let parsed: Record<string, Record<string, unknown>>;
  try {
    parsed = segmentParsers.get("xmp").parse(packet, { reviveValues: false });
  } catch {
    return; // malformed XML is no date source
  }
  for (const [prefix, properties] of Object.entries(parsed ?? {})) {
    if (prefix === "xmlns" || typeof properties !== "object" || properties === null) continue;
    const into = (tags.xmp[prefix] ??= {});
    for (const [name, value] of Object.entries(properties)) if (!(name in into)) into[name] = value;
  }
}

function readIptc(tags: PhotoTags, bytes: Uint8Array): void {
  let parsed: Record<string, string | string[]>;
  try {
    parsed = segmentParsers.get("iptc").parse(bytes, { translateKeys: false, translateValues: false });
  } catch {
    return;
  }
  for (const [key, value] of Object.entries(parsed ?? {})) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === "string" && !tags.iptc.has(Number(key))) tags.iptc.set(Number(key), first);
  }
}

/** Every block's tags in one set (blocks listed first win). Unreadable blocks add nothing. */
export async function readPhotoTags(blocks: MetadataBlocks): Promise<PhotoTags> {
  const tags: PhotoTags = { ifd0: new Map(), exif: new Map(), gps: new Map(), xmp: {}, iptc: new Map() };
  for (const block of blocks.exif) await readTiff(tags, block.bytes);
  for (const packet of blocks.xmp) readXmp(tags, packet);
  for (const bytes of blocks.iptc) readIptc(tags, bytes);
  return tags;
}

/** A tag's text (trimmed; null when absent, empty or not text). */
export function tagText(value: unknown): string | null {
  if (typeof value === "number") return String(value);
  if (typeof value !== "string") return null;
  const text = value.replace(/\0[\s\S]*$/, "").trim();
  return text || null;
}

/** A tag's numbers (a rational list, or one number). */
export function tagNumbers(value: unknown): number[] {
  if (typeof value === "number") return Number.isFinite(value) ? [value] : [];
  if (Array.isArray(value) || value instanceof Uint8Array) return Array.from(value as ArrayLike<number>).filter((n) => typeof n === "number" && Number.isFinite(n));
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return [Number(value)];
  return [];
}

/** The value of an XMP property under any of `prefixes` (writers differ: "xmp" or the older "xap"). */
export function xmpProperty(tags: PhotoTags, prefixes: string[], name: string): unknown {
  for (const prefix of prefixes) {
    const value = tags.xmp[prefix]?.[name];
    if (value !== undefined && value !== null) return value;
  }
  return undefined;
}
