/**
 * A video's camera facts from its container tags as ffprobe prints them: the QuickTime metadata
 * keys phones write (`com.apple.quicktime.make`, `.model`, `.creationdate` with the local offset,
 * `.location.ISO6709`), the MP4 `location` atom of Android phones and cameras, and the
 * `com.android.manufacturer`/`.model` keys. `creation_time` is the container's write time (UTC,
 * often the moment the phone finished the file or an editor re-saved it), so the capture date
 * prefers `creationdate`.
 */
import { type CameraFacts, noCameraFacts } from "../camera/camera-facts.ts";
import { parseIsoTime, toInstant } from "../images/capture-date.ts";

type Tags = Record<string, string>;

/** The first non-empty tag among `keys`, case-insensitive (muxers differ in case and language suffixes). */
function tag(tags: Tags, ...keys: string[]): string | null {
  const lower = new Map(Object.entries(tags).map(([k, v]) => [k.toLowerCase(), v]));
  for (const key of keys) {
    const value = lower.get(key.toLowerCase())?.trim();
    if (value) return value;
  }
  return null;
}

/**
 * One ISO 6709 coordinate: ±DD[.d], ±DDMM[.m] or ±DDMMSS[.s] for latitude (2, 4 or 6 integer
 * digits), one more digit for the degrees of longitude.
 */
function iso6709Part(text: string, degreeDigits: 2 | 3): number | null {
  const m = /^([+-])(\d+)(\.\d+)?$/.exec(text);
  if (!m) return null;
  const digits = m[2]!;
  const fraction = Number(`0${m[3] ?? ""}`);
  let value: number;
  if (digits.length === degreeDigits) value = Number(digits) + fraction;
  else if (digits.length === degreeDigits + 2) value = Number(digits.slice(0, degreeDigits)) + (Number(digits.slice(degreeDigits)) + fraction) / 60;
  else if (digits.length === degreeDigits + 4)
    value = Number(digits.slice(0, degreeDigits)) + Number(digits.slice(degreeDigits, degreeDigits + 2)) / 60 + (Number(digits.slice(degreeDigits + 2)) + fraction) / 3600;
  else return null;
  return m[1] === "-" ? -value : value;
}

/** "+48.8584+002.2945+035.000/" (latitude, longitude, optional altitude in metres, optional CRS) as numbers. */
export function parseIso6709(text: string): { latitude: number; longitude: number; altitude: number | null } | null {
  const m = /^([+-][\d.]+)([+-][\d.]+)([+-][\d.]+)?(?:CRS[^/]*)?\/?$/.exec(text.trim());
  if (!m) return null;
  const latitude = iso6709Part(m[1]!, 2);
  const longitude = iso6709Part(m[2]!, 3);
  if (latitude === null || longitude === null || Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return null;
  const altitude = m[3] !== undefined ? Number(m[3]) : null;
  return { latitude, longitude, altitude: altitude !== null && Number.isFinite(altitude) ? altitude : null };
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The facts of the container's (and video stream's) tags; `tags` merges both, container first. */
export function cameraFactsFromVideoTags(tags: Tags): CameraFacts {
  const facts = noCameraFacts();
  facts.make = tag(tags, "com.apple.quicktime.make", "com.android.manufacturer", "make");
  facts.model = tag(tags, "com.apple.quicktime.model", "com.android.model", "model");
  const where = tag(tags, "com.apple.quicktime.location.ISO6709", "location", "location-eng");
  const point = where ? parseIso6709(where) : null;
  if (point) {
    facts.latitude = round(point.latitude, 7);
    facts.longitude = round(point.longitude, 7);
    facts.altitudeM = point.altitude === null ? null : round(point.altitude, 1);
  }
  const created = parseIsoTime(tag(tags, "com.apple.quicktime.creationdate"));
  const at = created ? toInstant(created) : null;
  if (created && at) {
    facts.takenAt = at;
    facts.takenAtOffset = created.offset;
    facts.takenAtSource = "QuickTime creationdate";
  }
  return facts;
}
