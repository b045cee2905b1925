/**
 * When a photo was taken (`content_created_at`), from whatever metadata the file carries, in one
 * documented order of preference (docs/images.md):
 *
 *   1. EXIF DateTimeOriginal, with OffsetTimeOriginal
 *   2. EXIF CreateDate (DateTimeDigitized), with OffsetTimeDigitized
 *   3. XMP exif:DateTimeOriginal, photoshop:DateCreated, xmp:CreateDate, exif:DateTimeDigitized
 *   4. IPTC DateCreated + TimeCreated, then DigitalCreationDate + DigitalCreationTime
 *   5. GPS GPSDateStamp + GPSTimeStamp (always UTC)
 *   6. EXIF ModifyDate (IFD0 DateTime) with OffsetTime, then XMP xmp:ModifyDate
 *
 * EXIF times carry no zone of their own: an EXIF time without its OffsetTime* tag takes the
 * offset of an XMP or IPTC date naming the same local time (Lightroom and phones often keep the
 * zone only there); with none, it is read as UTC. The EXIF/XMP/IPTC blocks are gathered by the
 * decoders (sharp's metadata, RAW and JPEG XL readers) and read by exifr (photo-tags.ts).
 */
import type { Metadata } from "sharp";
import { tagNumbers, tagText, xmpProperty, type PhotoTags } from "./photo-tags.ts";
import { exifPayloadToTiff, TAG, TiffBlock } from "../camera/tiff-ifd.ts";

export interface MetadataBlocks {
  /** EXIF-style TIFF blocks, most authoritative first. */
  exif: TiffBlock[];
  /** XMP packets (XML text). */
  xmp: string[];
  /** IPTC-IIM data (a Photoshop IRB or bare IIM datasets). */
  iptc: Uint8Array[];
}

export interface CaptureDate {
  /** ISO 8601 UTC instant. */
  at: string;
  /** The local offset it was taken at ("+02:00"), or null when the file does not say (then `at` read the time as UTC). */
  offset: string | null;
  /** Which field it came from, e.g. "EXIF DateTimeOriginal" (for logs and tests). */
  source: string;
}

export const emptyBlocks = (): MetadataBlocks => ({ exif: [], xmp: [], iptc: [] });

/** The blocks libvips hands over for any format it opens (JPEG, PNG, WebP, TIFF, HEIF/AVIF, GIF). */
export function blocksFromSharp(meta: Metadata, original?: Uint8Array): MetadataBlocks {
  const blocks = emptyBlocks();
  const exif = exifPayloadToTiff(meta.exif);
  if (exif) blocks.exif.push(exif);
  if (meta.xmp) blocks.xmp.push(meta.xmp.toString("utf8"));
  if (meta.iptc) blocks.iptc.push(meta.iptc);
  // A TIFF's own IFD0 is its EXIF (libvips keeps only some of its tags as metadata).
  if (meta.format === "tiff" && original) {
    const tiff = TiffBlock.open(original);
    if (tiff) {
      blocks.exif.push(tiff);
      const ifd0 = tiff.readIfd(tiff.firstIfdOffset).entries;
      const xmp = ifd0.get(TAG.XmlPacket);
      if (xmp && !meta.xmp) blocks.xmp.push(new TextDecoder().decode(tiff.bytes.subarray(xmp.valueOffset, xmp.valueOffset + xmp.count)));
      const iptc = ifd0.get(TAG.Iptc);
      if (iptc && !meta.iptc) blocks.iptc.push(tiff.bytes.subarray(iptc.valueOffset, iptc.valueOffset + iptc.count * (iptc.type === 4 ? 4 : 1)));
    }
  }
  return blocks;
}

/**
 * The blocks of a JPEG read straight from its marker segments (APP1 EXIF and XMP, APP13 IPTC),
 * for a JPEG too damaged for libvips to open: its date is still worth keeping.
 */
export function blocksFromJpegSegments(jpeg: Uint8Array): MetadataBlocks {
  const blocks = emptyBlocks();
  if (jpeg[0] !== 0xff || jpeg[1] !== 0xd8) return blocks;
  const latin1 = (start: number, length: number) => String.fromCharCode(...jpeg.subarray(start, start + length));
  let at = 2;
  while (at + 4 <= jpeg.byteLength && jpeg[at] === 0xff) {
    const marker = jpeg[at + 1]!;
    if (marker === 0xda || marker === 0xd9) break;
    const length = (jpeg[at + 2]! << 8) | jpeg[at + 3]!;
    const payload = jpeg.subarray(at + 4, Math.min(jpeg.byteLength, at + 2 + length));
    if (marker === 0xe1 && latin1(at + 4, 6) === "Exif\0\0") {
      const tiff = exifPayloadToTiff(payload);
      if (tiff) blocks.exif.push(tiff);
    } else if (marker === 0xe1 && latin1(at + 4, 29) === "http://ns.adobe.com/xap/1.0/\0") {
      blocks.xmp.push(new TextDecoder().decode(payload.subarray(29)));
    } else if (marker === 0xed) blocks.iptc.push(payload);
    at += 2 + length;
  }
  return blocks;
}

const OFFSET = /^([+-])(\d{2}):?(\d{2})$/;

/** "+02:00" / "-0530" / "Z" normalized to "+HH:MM", or null. */
export function normalizeOffset(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const value = raw.trim();
  if (value === "Z") return "+00:00";
  const m = OFFSET.exec(value);
  if (!m || Number(m[2]) > 14 || Number(m[3]) > 59) return null;
  return `${m[1]}${m[2]}:${m[3]}`;
}

export interface LocalTime {
  /** "YYYY-MM-DDTHH:MM:SS" */
  local: string;
  offset: string | null;
}

function validLocal(y: string, mo: string, d: string, h = "00", mi = "00", s = "00"): string | null {
  const year = Number(y);
  if (year < 1800 || year > 2200 || Number(mo) < 1 || Number(mo) > 12 || Number(d) < 1 || Number(d) > 31) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 60) return null;
  return `${y}-${mo}-${d}T${h}:${mi}:${s === "60" ? "59" : s}`;
}

/** "YYYY:MM:DD HH:MM:SS" (EXIF), with an optional trailing zone some writers add. */
function parseExifTime(value: string | null): LocalTime | null {
  if (!value) return null;
  const m = /^(\d{4})[:-](\d{2})[:-](\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?/.exec(value.trim());
  if (!m) return null;
  const local = validLocal(m[1]!, m[2]!, m[3]!, m[4], m[5], m[6] ?? "00");
  return local ? { local, offset: normalizeOffset(m[7]) } : null;
}

/** ISO 8601 as XMP (and QuickTime) write it: a date, or a date and time with an optional fraction and zone. */
export function parseIsoTime(value: unknown): LocalTime | null {
  const text = tagText(value);
  if (!text) return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/.exec(text);
  if (!m) return null;
  const local = validLocal(m[1]!, m[2]!, m[3]!, m[4] ?? "00", m[5] ?? "00", m[6] ?? "00");
  return local ? { local, offset: normalizeOffset(m[7]) } : null;
}

export function toInstant(time: LocalTime, fallbackOffset: string | null = null): string | null {
  const ms = Date.parse(`${time.local}${time.offset ?? fallbackOffset ?? "Z"}`);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** IPTC date "CCYYMMDD" and time "HHMMSS±HHMM". */
function parseIptc(date: string | undefined, time: string | undefined): LocalTime | null {
  const d = date ? /^(\d{4})(\d{2})(\d{2})$/.exec(date.trim()) : null;
  if (!d) return null;
  const t = time ? /^(\d{2})(\d{2})(\d{2})([+-]\d{4})?$/.exec(time.trim()) : null;
  const local = validLocal(d[1]!, d[2]!, d[3]!, t?.[1] ?? "00", t?.[2] ?? "00", t?.[3] ?? "00");
  return local ? { local, offset: normalizeOffset(t?.[4]) } : null;
}

/** EXIF tags the chain reads. */
const EXIF = {
  DateTimeOriginal: 0x9003,
  CreateDate: 0x9004,
  OffsetTime: 0x9010,
  OffsetTimeOriginal: 0x9011,
  OffsetTimeDigitized: 0x9012,
  ModifyDate: 0x0132,
  GpsTimeStamp: 0x0007,
  GpsDateStamp: 0x001d,
} as const;

function exifTime(tags: PhotoTags, directory: "ifd0" | "exif", tag: number, offsetTag: number): LocalTime | null {
  const parsed = parseExifTime(tagText(tags[directory].get(tag)));
  if (parsed && !parsed.offset) parsed.offset = normalizeOffset(tagText(tags.exif.get(offsetTag)));
  return parsed;
}

function gpsTime(tags: PhotoTags): string | null {
  const date = /^(\d{4}):(\d{2}):(\d{2})$/.exec(tagText(tags.gps.get(EXIF.GpsDateStamp)) ?? "");
  const hms = tagNumbers(tags.gps.get(EXIF.GpsTimeStamp));
  if (!date || hms.length !== 3) return null;
  const [h, m, s] = hms.map((v) => String(Math.floor(v)).padStart(2, "0"));
  const local = validLocal(date[1]!, date[2]!, date[3]!, h, m, s);
  return local ? toInstant({ local, offset: "+00:00" }) : null;
}

/** The capture time by the chain above (with the local offset it was taken at, when known), or null when the file records none. */
export function captureDate(tags: PhotoTags): CaptureDate | null {
  const xmp = (prefixes: string[], name: string) => parseIsoTime(xmpProperty(tags, prefixes, name));
  const xmpDates: [string, LocalTime | null][] = [
    ["XMP exif:DateTimeOriginal", xmp(["exif"], "DateTimeOriginal")],
    ["XMP photoshop:DateCreated", xmp(["photoshop"], "DateCreated")],
    ["XMP xmp:CreateDate", xmp(["xmp", "xap"], "CreateDate")],
    ["XMP exif:DateTimeDigitized", xmp(["exif"], "DateTimeDigitized")],
  ];
  const iptcDates: [string, LocalTime | null][] = [
    ["IPTC DateCreated", parseIptc(tags.iptc.get(55), tags.iptc.get(60))],
    ["IPTC DigitalCreationDate", parseIptc(tags.iptc.get(62), tags.iptc.get(63))],
  ];

  // An EXIF time without its own offset borrows the zone of an XMP/IPTC date at the same local time
  // (to the minute: photoshop:DateCreated often drops the seconds).
  const zoned = [...xmpDates, ...iptcDates].map(([, t]) => t).filter((t): t is LocalTime => !!t?.offset);
  const borrowOffset = (time: LocalTime): string | null => zoned.find((t) => t.local.slice(0, 16) === time.local.slice(0, 16))?.offset ?? null;

  const candidates: [string, LocalTime | string | null][] = [
    ["EXIF DateTimeOriginal", exifTime(tags, "exif", EXIF.DateTimeOriginal, EXIF.OffsetTimeOriginal)],
    ["EXIF CreateDate", exifTime(tags, "exif", EXIF.CreateDate, EXIF.OffsetTimeDigitized)],
    ...xmpDates,
    ...iptcDates,
    ["GPS DateStamp/TimeStamp", gpsTime(tags)],
    ["EXIF ModifyDate", exifTime(tags, "ifd0", EXIF.ModifyDate, EXIF.OffsetTime)],
    ["XMP xmp:ModifyDate", xmp(["xmp", "xap"], "ModifyDate")],
  ];
  for (const [source, time] of candidates) {
    if (!time) continue;
    if (typeof time === "string") return { at: time, offset: null, source }; // GPS time is UTC; the local zone is unknown
    const offset = time.offset ?? borrowOffset(time);
    const at = toInstant(time, offset);
    if (at) return { at, offset, source };
  }
  return null;
}

