/**
 * What the camera recorded about a photo or video: make, model, lens, exposure, where and when
 * (with the local offset). The image pipeline reads it from EXIF/XMP (images/camera-exif.ts), the
 * video pipeline from QuickTime/MP4 tags (video/camera-tags.ts); both store it here, in the
 * `camera_facts` table, which this module alone writes. The place is named once, when stored,
 * by the offline gazetteer.
 */
import type { SqlClient } from "../db/sql-client.ts";
import { factsRowsOf } from "../files/facts-table.ts";
import { reverseGeocode } from "./gazetteer.ts";

export interface CameraFacts {
  make: string | null;
  model: string | null;
  lens: string | null;
  focalLengthMm: number | null;
  /** The 35 mm-equivalent focal length, when the camera records it. */
  focalLength35mm: number | null;
  fNumber: number | null;
  exposureSeconds: number | null;
  iso: number | null;
  /** EXIF orientation 1-8 (photos only). */
  orientation: number | null;
  /** The capture instant (UTC), the local offset it was taken at and the field it came from. */
  takenAt: string | null;
  takenAtOffset: string | null;
  takenAtSource: string | null;
  latitude: number | null;
  longitude: number | null;
  altitudeM: number | null;
}

export const noCameraFacts = (): CameraFacts => ({
  make: null,
  model: null,
  lens: null,
  focalLengthMm: null,
  focalLength35mm: null,
  fNumber: null,
  exposureSeconds: null,
  iso: null,
  orientation: null,
  takenAt: null,
  takenAtOffset: null,
  takenAtSource: null,
  latitude: null,
  longitude: null,
  altitudeM: null,
});

/** Whether the facts say anything a user would look for (a date alone is the file's content_created_at already). */
export function hasCameraFacts(facts: CameraFacts): boolean {
  return [facts.make, facts.model, facts.lens, facts.focalLengthMm, facts.fNumber, facts.exposureSeconds, facts.iso, facts.latitude].some((v) => v !== null);
}

/** A point is only a location when both coordinates are in range; (0, 0) is what receivers write without a fix. */
export function validPoint(latitude: number | null, longitude: number | null): boolean {
  if (latitude === null || longitude === null || !Number.isFinite(latitude) || !Number.isFinite(longitude)) return false;
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return false;
  return !(latitude === 0 && longitude === 0);
}

export interface StoredCameraFacts extends CameraFacts {
  countryCode: string | null;
  country: string | null;
  region: string | null;
  city: string | null;
}

interface CameraRow {
  make: string | null;
  model: string | null;
  lens: string | null;
  focal_length_mm: number | null;
  focal_length_35mm: number | null;
  f_number: number | null;
  exposure_seconds: number | null;
  iso: number | null;
  orientation: number | null;
  taken_at: string | null;
  taken_at_offset: string | null;
  taken_at_source: string | null;
  latitude: number | null;
  longitude: number | null;
  altitude_m: number | null;
  country_code: string | null;
  country: string | null;
  region: string | null;
  city: string | null;
}

/**
 * Stores (or replaces) a file's facts, naming its place; a file whose metadata says nothing has
 * its row removed. One statement, through `sql` (the group-commit client): the place is looked up
 * before it, which is not a database call, so this is never called with a port transaction's `tx`.
 */
export async function storeCameraFacts(sql: SqlClient, orgId: string, fileId: string, facts: CameraFacts): Promise<void> {
  if (!hasCameraFacts(facts)) {
    await sql.run("DELETE FROM camera_facts WHERE file_id = ?", [fileId]);
    return;
  }
  const located = validPoint(facts.latitude, facts.longitude);
  const place = located ? await reverseGeocode(facts.latitude!, facts.longitude!) : null;
  const values = {
    org_id: orgId,
    make: facts.make,
    model: facts.model,
    lens: facts.lens,
    focal_length_mm: facts.focalLengthMm,
    focal_length_35mm: facts.focalLength35mm,
    f_number: facts.fNumber,
    exposure_seconds: facts.exposureSeconds,
    iso: facts.iso,
    orientation: facts.orientation,
    taken_at: facts.takenAt,
    taken_at_offset: facts.takenAtOffset,
    taken_at_source: facts.takenAtSource,
    latitude: located ? facts.latitude : null,
    longitude: located ? facts.longitude : null,
    altitude_m: located ? facts.altitudeM : null,
    country_code: place?.countryCode ?? null,
    country: place?.country ?? null,
    region: place?.region ?? null,
    city: place?.city ?? null,
  };
  // Every column is set, so the upsert replaces the row whole (INSERT OR REPLACE is SQLite's alone).
  const columns = Object.keys(values);
  await sql.run(
    `INSERT INTO camera_facts (file_id, ${columns.join(", ")}) VALUES (?, ${columns.map(() => "?").join(", ")})
     ON CONFLICT (file_id) DO UPDATE SET ${columns.map((c) => `${c} = excluded.${c}`).join(", ")}`,
    [fileId, ...Object.values(values)],
  );
}

export async function cameraFactsOf(sql: SqlClient, fileId: string): Promise<StoredCameraFacts | null> {
  const row = await sql.one<CameraRow>("SELECT * FROM camera_facts WHERE file_id = ?", [fileId]);
  return row ? toCameraFacts(row) : null;
}


/** The camera facts of several files in one read (an export's), by file id; a file without any is absent. */
export async function cameraFactsOfFiles(sql: SqlClient, fileIds: readonly string[]): Promise<Map<string, StoredCameraFacts>> {
  const rows = await factsRowsOf<CameraRow>(sql, "camera_facts", "*", fileIds);
  return new Map([...rows].map(([id, row]) => [id, toCameraFacts(row)]));
}

function toCameraFacts(row: CameraRow): StoredCameraFacts {
  return {
    make: row.make,
    model: row.model,
    lens: row.lens,
    focalLengthMm: row.focal_length_mm,
    focalLength35mm: row.focal_length_35mm,
    fNumber: row.f_number,
    exposureSeconds: row.exposure_seconds,
    iso: row.iso,
    orientation: row.orientation,
    takenAt: row.taken_at,
    takenAtOffset: row.taken_at_offset,
    takenAtSource: row.taken_at_source,
    latitude: row.latitude,
    longitude: row.longitude,
    altitudeM: row.altitude_m,
    countryCode: row.country_code,
    country: row.country,
    region: row.region,
    city: row.city,
  };
}
