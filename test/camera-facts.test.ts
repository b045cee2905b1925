/**
 * Camera facts through real HTTP: a phone JPEG (EXIF written by libvips through sharp: make,
 * model, lens, exposure, GPS with altitude, the date with its offset) and a phone MOV (QuickTime
 * metadata keys written by ffmpeg as iPhones write them) show `camera` and `location` in
 * GET /files/{id}, with the place named offline; GET /files filters by when, which camera,
 * whether located and a bounding box; the export has the camera columns; another organization
 * sees none of it. Also the pure readers: ISO 6709 forms, the gazetteer at sea.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { reverseGeocode } from "../src/camera/gazetteer.ts";
import { resolveFfmpegPaths } from "../src/video/ffmpeg-tools.ts";
import { cameraFactsFromVideoTags, parseIso6709 } from "../src/video/camera-tags.ts";
import { processed } from "./support/polling.ts";
import { startTestServer, tempDir, type Tenant, type TestServer } from "./support/server.ts";
import { uploadFile } from "./support/uploads.ts";

let server: TestServer;
let owner: Tenant;
let other: Tenant;
const ids: Record<string, string> = {};

/** A phone photo as libvips writes EXIF: rationals as "n/d" strings, GPS in degrees, minutes, seconds. */
function phoneJpeg(color: string, exif: { make: string; model: string; when: string; offset: string; gps?: { lat: string; latRef: string; lon: string; lonRef: string; alt?: string } }) {
  return sharp({ create: { width: 320, height: 240, channels: 3, background: color } })
    .jpeg()
    .withExif({
      IFD0: { Make: exif.make, Model: exif.model },
      IFD2: {
        DateTimeOriginal: exif.when,
        OffsetTimeOriginal: exif.offset,
        FNumber: "8/5",
        ExposureTime: "1/120",
        ISOSpeedRatings: "32",
        FocalLength: "420/100",
        FocalLengthIn35mmFilm: "26",
        LensModel: `${exif.model} back camera 4.2mm f/1.6`,
      },
      ...(exif.gps
        ? { IFD3: { GPSLatitudeRef: exif.gps.latRef, GPSLatitude: exif.gps.lat, GPSLongitudeRef: exif.gps.lonRef, GPSLongitude: exif.gps.lon, GPSAltitudeRef: "0", GPSAltitude: exif.gps.alt ?? "0/1" } }
        : {}),
    } as never)
    .toBuffer();
}

/** A phone clip as an iPhone writes it: QuickTime "mdta" keys for make, model, place and the local capture time. */
function phoneMov(): Buffer {
  const dir = tempDir("mediabox-mov-");
  try {
    const out = join(dir, "IMG_0001.MOV");
    const run = Bun.spawnSync([
      resolveFfmpegPaths().ffmpeg, "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=1",
      "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-movflags", "use_metadata_tags",
      "-metadata", "com.apple.quicktime.location.ISO6709=+40.6892-074.0445+010.000/",
      "-metadata", "com.apple.quicktime.make=Apple",
      "-metadata", "com.apple.quicktime.model=iPhone 13 mini",
      "-metadata", "com.apple.quicktime.creationdate=2022-07-04T18:30:00-0400",
      // The write time a phone's muxer stamps when it closes the file: not when the clip was filmed.
      "-metadata", "creation_time=2022-07-05T09:00:00Z",
      out,
    ]);
    if (run.exitCode !== 0) throw new Error(`ffmpeg: ${run.stderr.toString()}`);
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const upload = (tenant: Tenant, bytes: Uint8Array, filename: string) => uploadFile(tenant.api, bytes, filename, { auto_describe: "false" });

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.tenant({ tier: "CUSTOM" });
  other = await server.tenant({ tier: "CUSTOM" });
  const uploads = {
    paris: upload(owner, await phoneJpeg("#336699", { make: "Apple", model: "iPhone 12 Pro", when: "2021:06:01 12:34:56", offset: "+02:00", gps: { lat: "48/1 51/1 3024/100", latRef: "N", lon: "2/1 17/1 4020/100", lonRef: "E", alt: "35/1" } }), "paris.jpg"),
    sydney: upload(owner, await phoneJpeg("#996633", { make: "Canon", model: "Canon EOS R5", when: "2019:12:31 23:00:00", offset: "+11:00", gps: { lat: "33/1 51/1 2448/100", latRef: "S", lon: "151/1 12/1 5508/100", lonRef: "E" } }), "sydney.jpg"),
    indoors: upload(owner, await phoneJpeg("#669933", { make: "Canon", model: "Canon EOS R5", when: "2020:03:03 10:00:00", offset: "+00:00" }), "indoors.jpg"),
    plain: upload(owner, await sharp({ create: { width: 200, height: 100, channels: 3, background: "#777777" } }).png().toBuffer(), "plain.png"),
    clip: upload(owner, phoneMov(), "IMG_0001.MOV"),
    theirs: upload(other, await phoneJpeg("#123456", { make: "Apple", model: "iPhone 12 Pro", when: "2021:06:02 08:00:00", offset: "+02:00", gps: { lat: "48/1 51/1 0/1", latRef: "N", lon: "2/1 17/1 0/1", lonRef: "E" } }), "theirs.jpg"),
  };
  for (const [name, id] of Object.entries(uploads)) ids[name] = await id;
  for (const name of Object.keys(uploads)) await processed(name === "theirs" ? other : owner, ids[name]!, 180_000);
}, 300_000);
afterAll(() => server.close());

const listIds = async (tenant: Tenant, query: string): Promise<string[]> => {
  const res = await tenant.api.get(`/files?${query}&limit=100`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.items as { id: string }[]).map((item) => item.id).sort();
};
const named = (...names: string[]) => names.map((name) => ids[name]!).sort();

describe("GET /files/{id} shows what the camera recorded", () => {
  test("a phone JPEG: make, model, lens, exposure, the date with its offset, and where (named offline)", async () => {
    const res = await owner.api.get(`/files/${ids.paris}`);
    expect(res.status).toBe(200);
    expect(res.body.content_created_at).toBe("2021-06-01T10:34:56.000Z");
    expect(res.body.camera.exposure_time_seconds).toBeCloseTo(1 / 120, 6);
    expect({ ...res.body.camera, exposure_time_seconds: null }).toEqual({
      make: "Apple",
      model: "iPhone 12 Pro",
      lens: "iPhone 12 Pro back camera 4.2mm f/1.6",
      focal_length_mm: 4.2,
      focal_length_35mm: 26,
      f_number: 1.6,
      exposure_time_seconds: null,
      iso: 32,
      // libvips writes the orientation it saved the pixels in.
      orientation: 1,
      taken_at: "2021-06-01T10:34:56.000Z",
      taken_at_offset: "+02:00",
      taken_at_source: "EXIF DateTimeOriginal",
    });
    expect(res.body.location).toMatchObject({ latitude: 48.8584, longitude: 2.2945, altitude_m: 35, country_code: "FR", country: "France", region: "Île-de-France" });
    expect(res.body.location.city).toMatch(/^Paris/);
  });

  test("southern and eastern hemispheres sign the coordinates", async () => {
    const { body } = await owner.api.get(`/files/${ids.sydney}`);
    expect(body.location).toMatchObject({ latitude: expect.closeTo(-33.8568, 3), longitude: expect.closeTo(151.2153, 3), country_code: "AU", region: "New South Wales" });
  });

  test("a photo without GPS has camera facts and no location; one without any metadata has neither", async () => {
    const indoors = await owner.api.get(`/files/${ids.indoors}`);
    expect(indoors.body.camera).toMatchObject({ make: "Canon", model: "Canon EOS R5" });
    expect(indoors.body.location).toBeNull();
    const plain = await owner.api.get(`/files/${ids.plain}`);
    expect(plain.body).toMatchObject({ camera: null, location: null });
  });

  test("a phone MOV: make, model and place from its QuickTime keys; filmed at its creationdate, not the write time", async () => {
    const { body } = await owner.api.get(`/files/${ids.clip}`);
    expect(body.media_type).toBe("video");
    expect(body.content_created_at).toBe("2022-07-04T22:30:00.000Z");
    expect(body.camera).toMatchObject({ make: "Apple", model: "iPhone 13 mini", taken_at: "2022-07-04T22:30:00.000Z", taken_at_offset: "-04:00", taken_at_source: "QuickTime creationdate" });
    expect(body.location).toMatchObject({ latitude: 40.6892, longitude: -74.0445, altitude_m: 10, country_code: "US" });
  });

  test("another organization's file is not found", async () => {
    expect((await other.api.get(`/files/${ids.paris}`)).status).toBe(404);
  });
});

describe("GET /files filters by camera facts (extensions)", () => {
  test("taken_from and taken_to bound content_created_at", async () => {
    expect(await listIds(owner, "taken_from=2020-01-01T00:00:00Z&taken_to=2021-12-31T23:59:59Z")).toEqual(named("indoors", "paris"));
    expect(await listIds(owner, "taken_to=2019-12-31T23:59:59Z")).toEqual(named("sydney"));
  });

  test("camera matches part of make and model, case-insensitively", async () => {
    expect(await listIds(owner, "camera=eos%20r5")).toEqual(named("indoors", "sydney"));
    expect(await listIds(owner, "camera=iPhone")).toEqual(named("clip", "paris"));
    expect(await listIds(owner, "camera=apple%20iphone%2013")).toEqual(named("clip"));
    expect(await listIds(owner, "camera=50%25")).toEqual([]);
  });

  test("has_location and bbox (west,south,east,north)", async () => {
    expect(await listIds(owner, "has_location=true")).toEqual(named("clip", "paris", "sydney"));
    expect(await listIds(owner, "has_location=false")).toEqual(named("indoors", "plain"));
    expect(await listIds(owner, "bbox=-10,35,20,60")).toEqual(named("paris"));
    expect(await listIds(owner, "bbox=-180,-90,180,90&media_types=video")).toEqual(named("clip"));
    // West greater than east crosses the antimeridian: from 140°E over 180° to 60°W.
    expect(await listIds(owner, "bbox=140,-60,-60,60")).toEqual(named("clip", "sydney"));
  });

  test("another organization's photos never match", async () => {
    expect(await listIds(other, "has_location=true")).toEqual([ids.theirs!]);
    expect(await listIds(other, "camera=iPhone%2012")).toEqual([ids.theirs!]);
  });

  test("bad filters are 400 with the error envelope", async () => {
    for (const [query, detail] of [
      ["bbox=1,2,3", /bbox: must be four numbers/],
      ["bbox=a,b,c,d", /bbox: must be four numbers/],
      ["bbox=-190,0,10,10", /longitudes/],
      ["bbox=0,50,10,40", /south must not be greater than north/],
      ["taken_from=yesterday", /taken_from: must be an ISO 8601 timestamp/],
      ["has_location=maybe", /has_location/],
    ] as const) {
      const res = await owner.api.get(`/files?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.detail, query).toMatch(detail);
    }
  });
});

test("the export has the camera columns", async () => {
  const columns = await owner.api.get("/files/export/columns");
  expect(columns.body.groups.camera.map((c: { field_key: string }) => c.field_key)).toEqual(
    expect.arrayContaining(["camera_make", "camera_model", "lens", "latitude", "longitude", "country", "city"]),
  );
  const res = await owner.api.post("/files/export", {
    format: "csv",
    file_ids: [ids.paris, ids.plain],
    columns: [{ field_key: "filename" }, { field_key: "camera_model" }, { field_key: "f_number" }, { field_key: "latitude" }, { field_key: "country" }],
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const csv = await (await fetch(res.body.download_url)).text();
  const lines = csv.trim().split(/\r?\n/).sort();
  expect(lines).toContain("paris.jpg,iPhone 12 Pro,1.6,48.8584,France");
  expect(lines).toContain("plain.png,,,,");
});

describe("readers", () => {
  test("ISO 6709 in degrees, degrees-minutes and degrees-minutes-seconds", () => {
    expect(parseIso6709("+48.8584+002.2945+035.000/")).toEqual({ latitude: 48.8584, longitude: 2.2945, altitude: 35 });
    expect(parseIso6709("-3351.41+15112.92/")).toEqual({ latitude: expect.closeTo(-33.8568, 4), longitude: expect.closeTo(151.2153, 4), altitude: null });
    expect(parseIso6709("+404122.24-0740240.2/")).toEqual({ latitude: expect.closeTo(40.6895, 4), longitude: expect.closeTo(-74.0445, 4), altitude: null });
    expect(parseIso6709("+95.0+010.0/")).toBeNull();
    expect(parseIso6709("somewhere")).toBeNull();
  });

  test("Android's location atom and manufacturer keys", () => {
    const facts = cameraFactsFromVideoTags({ location: "+37.7749-122.4194/", "com.android.manufacturer": "Google", "com.android.model": "Pixel 7", creation_time: "2023-01-01T00:00:00Z" });
    expect(facts).toMatchObject({ make: "Google", model: "Pixel 7", latitude: 37.7749, longitude: -122.4194, takenAt: null });
  });

  test("the gazetteer names nothing in open sea or at (0, 0), and a place on land", async () => {
    expect(await reverseGeocode(0, 0)).toBeNull();
    expect(await reverseGeocode(-30, -30)).toBeNull();
    expect(await reverseGeocode(35.6586, 139.7454)).toMatchObject({ countryCode: "JP", country: "Japan", region: "Tokyo" });
  });
});

describe("GET /files/timeline (extension)", () => {
  test("counts per UTC month, newest first, and the undated files", async () => {
    const res = await owner.api.get("/files/timeline");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      granularity: "month",
      buckets: [
        { key: "2022-07", count: 1, start: "2022-07-01T00:00:00.000Z", end: "2022-08-01T00:00:00.000Z" },
        { key: "2021-06", count: 1, start: "2021-06-01T00:00:00.000Z", end: "2021-07-01T00:00:00.000Z" },
        { key: "2020-03", count: 1, start: "2020-03-01T00:00:00.000Z", end: "2020-04-01T00:00:00.000Z" },
        { key: "2019-12", count: 1, start: "2019-12-01T00:00:00.000Z", end: "2020-01-01T00:00:00.000Z" },
      ],
      dated_count: 4,
      undated_count: 1,
    });
  });

  test("years, oldest first, under GET /files filters; a bucket's bounds list its files", async () => {
    const res = await owner.api.get("/files/timeline?granularity=year&order=asc&media_types=image&camera=canon");
    expect(res.body.buckets.map((b: { key: string; count: number }) => [b.key, b.count])).toEqual([["2019", 1], ["2020", 1]]);
    const bucket = res.body.buckets[1];
    expect(await listIds(owner, `taken_from=${bucket.start}&taken_to=${new Date(Date.parse(bucket.end) - 1).toISOString()}`)).toEqual(named("indoors"));
  });

  test("only the caller's organization, with view permission; bad input is 400", async () => {
    const theirs = await other.api.get("/files/timeline");
    expect(theirs.body.buckets).toEqual([{ key: "2021-06", count: 1, start: "2021-06-01T00:00:00.000Z", end: "2021-07-01T00:00:00.000Z" }]);
    expect((await (await owner.keyWith(["edit"])).get("/files/timeline")).status).toBe(403);
    expect((await (await owner.keyWith(["view"])).get("/files/timeline")).status).toBe(200);
    expect((await server.anonymous().get("/files/timeline")).status).toBe(401);
    for (const query of ["granularity=week", "order=up", "taken_from=soon", "bbox=1,2"]) {
      const res = await owner.api.get(`/files/timeline?${query}`);
      expect(res.status, query).toBe(400);
      expect(typeof res.body.detail, query).toBe("string");
    }
  });
});

describe("GET /files/locations (extension)", () => {
  test("at zoom 0 nearby points share a cluster; zoomed in they split", async () => {
    // A second photo 300 m from the first in Paris.
    const near = await upload(owner, await phoneJpeg("#224466", { make: "Apple", model: "iPhone 12 Pro", when: "2021:06:01 13:00:00", offset: "+02:00", gps: { lat: "48/1 51/1 4000/100", latRef: "N", lon: "2/1 17/1 3000/100", lonRef: "E" } }), "paris-2.jpg");
    await processed(owner, near, 180_000);
    try {
      const world = await owner.api.get("/files/locations?zoom=0");
      expect(world.status).toBe(200);
      expect(world.body).toMatchObject({ zoom: 0, located_count: 4, truncated: false });
      const paris = world.body.clusters.find((c: { count: number }) => c.count === 2);
      expect(paris.file_ids.sort()).toEqual([ids.paris, near].sort());
      expect(paris.latitude).toBeCloseTo(48.86, 1);
      expect(paris.bbox[0]).toBeLessThan(paris.bbox[2]);
      expect(world.body.clusters.map((c: { count: number }) => c.count).sort()).toEqual([1, 1, 2]);
      // At zoom 16 a 64-px cell is ~600 m wide at the equator, ~400 m in Paris.
      const street = await owner.api.get("/files/locations?zoom=16&bbox=2.28,48.85,2.31,48.87");
      expect(street.body.clusters.map((c: { count: number }) => c.count)).toEqual([1, 1]);
      expect(street.body.located_count).toBe(2);
      const capped = await owner.api.get("/files/locations?zoom=16&limit=1");
      expect(capped.body).toMatchObject({ truncated: true, located_count: 4 });
      expect(capped.body.clusters).toHaveLength(1);
    } finally {
      await owner.api.delete(`/files/${near}`);
    }
  }, 240_000);

  test("filters, isolation, roles and bad input", async () => {
    const videos = await owner.api.get("/files/locations?media_types=video");
    expect(videos.body.clusters).toEqual([{ latitude: 40.6892, longitude: -74.0445, count: 1, bbox: [-74.0445, 40.6892, -74.0445, 40.6892], file_ids: [ids.clip] }]);
    const theirs = await other.api.get("/files/locations?zoom=3");
    expect(theirs.body.located_count).toBe(1);
    expect(theirs.body.clusters[0].file_ids).toEqual([ids.theirs]);
    expect((await (await owner.keyWith(["delete"])).get("/files/locations")).status).toBe(403);
    for (const query of ["zoom=23", "zoom=-1", "zoom=x", "limit=0", "bbox=0,0,0"]) {
      const res = await owner.api.get(`/files/locations?${query}`);
      expect(res.status, query).toBe(400);
      expect(typeof res.body.detail, query).toBe("string");
    }
  });
});
