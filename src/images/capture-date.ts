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
 * zone only there); with none, it is read as UTC. This module only reads bytes it is handed: the
 * EXIF/XMP/IPTC blocks are gathered by the decoders (sharp's metadata, RAW and JPEG XL readers).
 */
import type { Metadata } from "sharp";
import { exifDirectories, exifPayloadToTiff, type IfdEntry, TAG, TiffBlock } from "./tiff-ifd.ts";

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
function normalizeOffset(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const value = raw.trim();
  if (value === "Z") return "+00:00";
  const m = OFFSET.exec(value);
  if (!m || Number(m[2]) > 14 || Number(m[3]) > 59) return null;
  return `${m[1]}${m[2]}:${m[3]}`;
}

interface LocalTime {
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

/** ISO 8601 as XMP writes it: a date, or a date and time with an optional fraction and zone. */
function parseXmpTime(value: string): LocalTime | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/.exec(value.trim());
  if (!m) return null;
  const local = validLocal(m[1]!, m[2]!, m[3]!, m[4] ?? "00", m[5] ?? "00", m[6] ?? "00");
  return local ? { local, offset: normalizeOffset(m[7]) } : null;
}

function toInstant(time: LocalTime, fallbackOffset: string | null = null): string | null {
  const ms = Date.parse(`${time.local}${time.offset ?? fallbackOffset ?? "Z"}`);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** The value of an XMP property in attribute (`ns:Name="v"`) or element (`<ns:Name>v</ns:Name>`) form, any of the prefixes. */
function xmpValue(packets: string[], prefixes: string[], name: string): string | null {
  for (const xml of packets) {
    for (const prefix of prefixes) {
      const attribute = new RegExp(`\\b${prefix}:${name}\\s*=\\s*["']([^"']+)["']`).exec(xml);
      if (attribute) return attribute[1]!;
      const element = new RegExp(`<${prefix}:${name}(?:\\s[^>]*)?>\\s*([^<]+?)\\s*</${prefix}:${name}>`).exec(xml);
      if (element) return element[1]!;
    }
  }
  return null;
}

/** IPTC-IIM datasets of record 2: dataset number → first value (Latin-1). */
function iptcRecord2(blocks: Uint8Array[]): Map<number, string> {
  const out = new Map<number, string>();
  for (const bytes of blocks) {
    for (let i = 0; i + 5 <= bytes.byteLength; i++) {
      if (bytes[i] !== 0x1c || bytes[i + 1] !== 0x02) continue;
      const dataset = bytes[i + 2]!;
      const length = (bytes[i + 3]! << 8) | bytes[i + 4]!;
      if (length & 0x8000 || i + 5 + length > bytes.byteLength) continue;
      if (!out.has(dataset)) out.set(dataset, String.fromCharCode(...bytes.subarray(i + 5, i + 5 + length)));
      i += 4 + length;
    }
  }
  return out;
}

/** IPTC date "CCYYMMDD" and time "HHMMSS±HHMM". */
function parseIptc(date: string | undefined, time: string | undefined): LocalTime | null {
  const d = date ? /^(\d{4})(\d{2})(\d{2})$/.exec(date.trim()) : null;
  if (!d) return null;
  const t = time ? /^(\d{2})(\d{2})(\d{2})([+-]\d{4})?$/.exec(time.trim()) : null;
  const local = validLocal(d[1]!, d[2]!, d[3]!, t?.[1] ?? "00", t?.[2] ?? "00", t?.[3] ?? "00");
  return local ? { local, offset: normalizeOffset(t?.[4]) } : null;
}

interface ExifTimes {
  original: LocalTime | null;
  created: LocalTime | null;
  modified: LocalTime | null;
  gps: string | null;
}

function exifTimes(blocks: TiffBlock[]): ExifTimes {
  const out: ExifTimes = { original: null, created: null, modified: null, gps: null };
  for (const tiff of blocks) {
    const { ifd0, exif, gps } = exifDirectories(tiff);
    // CR3 keeps the EXIF directory as a block of its own (its IFD0 is the EXIF IFD).
    const exifDir = exif.size ? exif : ifd0;
    const time = (dir: Map<number, IfdEntry>, tag: number, offsetTag: number): LocalTime | null => {
      const parsed = parseExifTime(tiff.text(dir.get(tag)));
      if (parsed && !parsed.offset) parsed.offset = normalizeOffset(tiff.text(exifDir.get(offsetTag)));
      return parsed;
    };
    out.original ??= time(exifDir, TAG.DateTimeOriginal, TAG.OffsetTimeOriginal);
    out.created ??= time(exifDir, TAG.CreateDate, TAG.OffsetTimeDigitized);
    out.modified ??= time(ifd0, TAG.ModifyDate, TAG.OffsetTime);
    const gpsDir = gps.size ? gps : ifd0.has(TAG.GpsDateStamp) ? ifd0 : gps;
    if (!out.gps) {
      const date = /^(\d{4}):(\d{2}):(\d{2})$/.exec(tiff.text(gpsDir.get(TAG.GpsDateStamp)) ?? "");
      const hms = tiff.numbers(gpsDir.get(TAG.GpsTimeStamp), 3);
      if (date && hms.length === 3) {
        const [h, m, s] = hms.map((v) => String(Math.floor(v)).padStart(2, "0"));
        const local = validLocal(date[1]!, date[2]!, date[3]!, h, m, s);
        if (local) out.gps = toInstant({ local, offset: "+00:00" });
      }
    }
  }
  return out;
}

/** The capture instant by the chain above, or null when the file records none. */
export function captureDate(blocks: MetadataBlocks): CaptureDate | null {
  const exif = exifTimes(blocks.exif);
  const xmp = (prefixes: string[], name: string) => {
    const value = xmpValue(blocks.xmp, prefixes, name);
    return value ? parseXmpTime(value) : null;
  };
  const xmpDates: [string, LocalTime | null][] = [
    ["XMP exif:DateTimeOriginal", xmp(["exif"], "DateTimeOriginal")],
    ["XMP photoshop:DateCreated", xmp(["photoshop"], "DateCreated")],
    ["XMP xmp:CreateDate", xmp(["xmp", "xap"], "CreateDate")],
    ["XMP exif:DateTimeDigitized", xmp(["exif"], "DateTimeDigitized")],
  ];
  const iptc = iptcRecord2(blocks.iptc);
  const iptcDates: [string, LocalTime | null][] = [
    ["IPTC DateCreated", parseIptc(iptc.get(55), iptc.get(60))],
    ["IPTC DigitalCreationDate", parseIptc(iptc.get(62), iptc.get(63))],
  ];

  // An EXIF time without its own offset borrows the zone of an XMP/IPTC date at the same local time
  // (to the minute: photoshop:DateCreated often drops the seconds).
  const zoned = [...xmpDates, ...iptcDates].map(([, t]) => t).filter((t): t is LocalTime => !!t?.offset);
  const borrowOffset = (time: LocalTime): string | null => zoned.find((t) => t.local.slice(0, 16) === time.local.slice(0, 16))?.offset ?? null;

  const candidates: [string, LocalTime | string | null][] = [
    ["EXIF DateTimeOriginal", exif.original],
    ["EXIF CreateDate", exif.created],
    ...xmpDates,
    ...iptcDates,
    ["GPS DateStamp/TimeStamp", exif.gps],
    ["EXIF ModifyDate", exif.modified],
    ["XMP xmp:ModifyDate", xmp(["xmp", "xap"], "ModifyDate")],
  ];
  for (const [source, time] of candidates) {
    if (!time) continue;
    const at = typeof time === "string" ? time : toInstant(time, time.offset ? null : borrowOffset(time));
    if (at) return { at, source };
  }
  return null;
}
