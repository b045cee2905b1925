/**
 * A photo's camera facts from its tags (photo-tags.ts): EXIF first, XMP where a converter kept
 * them only there (Lightroom's exif:/aux:/exifEX: properties), and the capture date by the chain.
 */
import { type CameraFacts, noCameraFacts } from "../camera/camera-facts.ts";
import type { CaptureDate } from "./capture-date.ts";
import { tagNumbers, tagText, xmpProperty, type PhotoTags } from "./photo-tags.ts";

const TAGS = {
  Make: 0x010f,
  Model: 0x0110,
  Orientation: 0x0112,
  ExposureTime: 0x829a,
  FNumber: 0x829d,
  Iso: 0x8827,
  FocalLength: 0x920a,
  FocalLength35mm: 0xa405,
  LensMake: 0xa433,
  LensModel: 0xa434,
  GpsLatitudeRef: 0x0001,
  GpsLatitude: 0x0002,
  GpsLongitudeRef: 0x0003,
  GpsLongitude: 0x0004,
  GpsAltitudeRef: 0x0005,
  GpsAltitude: 0x0006,
} as const;

const positive = (n: number | undefined): number | null => (n !== undefined && Number.isFinite(n) && n > 0 ? n : null);
const rounded = (n: number | null, digits: number): number | null => (n === null ? null : Math.round(n * 10 ** digits) / 10 ** digits);

/** Degrees from EXIF's [degrees, minutes, seconds] (or one decimal value) and its N/S/E/W reference. */
function exifDegrees(value: unknown, ref: unknown, negative: string): number | null {
  const parts = tagNumbers(value);
  if (parts.length === 0) return null;
  const [d = 0, m = 0, s = 0] = parts;
  const degrees = d + m / 60 + s / 3600;
  return tagText(ref)?.toUpperCase().startsWith(negative) ? -degrees : degrees;
}

/** XMP's "DDD,MM.mmk" or "DDD,MM,SSk" (k = N, S, E or W), as Lightroom and exiftool write GPS. */
function xmpDegrees(value: unknown): number | null {
  const m = /^\s*(\d{1,3}),(\d{1,2}(?:\.\d+)?)(?:,(\d{1,2}(?:\.\d+)?))?\s*([NSEW])\s*$/i.exec(tagText(value) ?? "");
  if (!m) return null;
  const degrees = Number(m[1]) + Number(m[2]) / 60 + Number(m[3] ?? 0) / 3600;
  return /[SW]/i.test(m[4]!) ? -degrees : degrees;
}

/** "1/250" or "0.004" as seconds. */
function xmpRational(value: unknown): number | null {
  const text = tagText(value);
  if (!text) return null;
  const [num, den] = text.split("/").map(Number);
  const n = den === undefined ? num : num! / den;
  return positive(n);
}

export function cameraFactsFromTags(tags: PhotoTags, date: CaptureDate | null): CameraFacts {
  const { ifd0, exif, gps } = tags;
  const xmp = (name: string, prefixes = ["exif", "tiff", "exifEX", "aux"]) => xmpProperty(tags, prefixes, name);
  const facts = noCameraFacts();
  facts.make = tagText(ifd0.get(TAGS.Make)) ?? tagText(xmp("Make", ["tiff"]));
  facts.model = tagText(ifd0.get(TAGS.Model)) ?? tagText(xmp("Model", ["tiff"]));
  facts.lens = tagText(exif.get(TAGS.LensModel)) ?? tagText(xmp("LensModel", ["exifEX"])) ?? tagText(xmp("Lens", ["aux"]));
  facts.focalLengthMm = rounded(positive(tagNumbers(exif.get(TAGS.FocalLength))[0]) ?? xmpRational(xmp("FocalLength")), 2);
  facts.focalLength35mm = positive(tagNumbers(exif.get(TAGS.FocalLength35mm))[0]) ?? xmpRational(xmp("FocalLengthIn35mmFilm"));
  facts.fNumber = rounded(positive(tagNumbers(exif.get(TAGS.FNumber))[0]) ?? xmpRational(xmp("FNumber")), 2);
  facts.exposureSeconds = positive(tagNumbers(exif.get(TAGS.ExposureTime))[0]) ?? xmpRational(xmp("ExposureTime"));
  const iso = positive(tagNumbers(exif.get(TAGS.Iso))[0]) ?? positive(tagNumbers(xmp("PhotographicSensitivity", ["exifEX"]))[0]) ?? positive(tagNumbers(xmp("ISOSpeedRatings"))[0]);
  facts.iso = iso === null ? null : Math.round(iso);
  const orientation = tagNumbers(ifd0.get(TAGS.Orientation))[0];
  facts.orientation = orientation !== undefined && orientation >= 1 && orientation <= 8 ? orientation : null;

  const latitude = exifDegrees(gps.get(TAGS.GpsLatitude), gps.get(TAGS.GpsLatitudeRef), "S") ?? xmpDegrees(xmp("GPSLatitude", ["exif"]));
  const longitude = exifDegrees(gps.get(TAGS.GpsLongitude), gps.get(TAGS.GpsLongitudeRef), "W") ?? xmpDegrees(xmp("GPSLongitude", ["exif"]));
  if (latitude !== null && longitude !== null) {
    facts.latitude = rounded(latitude, 7);
    facts.longitude = rounded(longitude, 7);
    const altitude = tagNumbers(gps.get(TAGS.GpsAltitude))[0];
    if (altitude !== undefined) facts.altitudeM = rounded(tagNumbers(gps.get(TAGS.GpsAltitudeRef))[0] === 1 ? -altitude : altitude, 1);
  }
  facts.takenAt = date?.at ?? null;
  facts.takenAtOffset = date?.offset ?? null;
  facts.takenAtSource = date?.source ?? null;
  return facts;
}
