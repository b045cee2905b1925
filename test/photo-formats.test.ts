/**
 * The photo-format matrix through real HTTP: every supported format (JPEG, PNG, WebP, AVIF,
 * TIFF with its directory past 64 KiB, GIF, HEIC, JPEG XL, and the camera RAWs CR2, CR3, NEF,
 * DNG, ARW, RAF, RW2, ORF; a DNG with only its sensor data, developed by LibRaw) and every capture-date source (EXIF with and without offsets, XMP,
 * IPTC, GPS, ModifyDate) is accepted with the right format, dimensions, orientation and
 * content_created_at. The fixtures are made here (sharp pixels, hand-built EXIF/XMP/IPTC and RAW
 * containers, the wasm JPEG XL encoder), so the test needs nothing outside the checkout. Also:
 * a truncated JPEG still renders, and the pixel limit and huge-image rendering of renderImage.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { OcrEngine } from "../src/ocr/ocr.ts";
import { ImageDecodeError, readCaptureDate, renderImage } from "../src/images/variants.ts";
import { detectType } from "../src/ingest/detect.ts";
import { IMAGE_CONTENT } from "../src/images/image-content.ts";
import { heicHalves } from "./support/heic.ts";
import { photo } from "./support/images.ts";
import * as F from "./support/photo-fixtures.ts";
import { processed } from "./support/polling.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";
import { uploadFile } from "./support/uploads.ts";

let server: TestServer;
let owner: Tenant;

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.tenant({ tier: "CUSTOM" });
});
afterAll(() => server.close());

/** The ImageDecodeError renderImage rejects with (failing the test when it renders). */
async function renderFailure(bytes: Buffer): Promise<ImageDecodeError> {
  const failure = await renderImage(bytes).then(
    () => null,
    (err: unknown) => err,
  );
  expect(failure).toBeInstanceOf(ImageDecodeError);
  return failure as ImageDecodeError;
}

// Descriptions need the detectors; this test is about decoding, dimensions and dates.
const upload = (bytes: Uint8Array, filename: string) => uploadFile(owner.api, bytes, filename, { auto_describe: "false" });

async function fetchSigned(path: string): Promise<Buffer> {
  const res = await owner.api.get(path);
  expect(res.status, JSON.stringify(res.body)).toBe(302);
  return Buffer.from(await (await fetch(res.headers.get("location")!)).arrayBuffer());
}

interface Case {
  name: string;
  filename: string;
  make: () => Promise<Uint8Array>;
  format: string;
  dimensions: { width: number; height: number };
  /** Where the red half shows in the served variant ("top": the stored image was turned 90° clockwise). */
  red: "left" | "right" | "top" | "bottom";
  /** The expected instant (any ISO form), or null. */
  takenAt: string | null;
}

const preview = () => F.halves(600, 400);
/** Orientation 6 (turn 90° clockwise to display) and a capture time at UTC-3. */
const cameraExif = { orientation: 6, dateTimeOriginal: "2019:05:04 10:11:12", offsetTimeOriginal: "-03:00" };
const cameraTime = "2019-05-04T13:11:12Z";
const sensor = { width: 6000, height: 4000 };
const portrait = { width: 4000, height: 6000 };

const FORMATS: Case[] = [
  {
    name: "JPEG with EXIF orientation 6 and an offset",
    filename: "camera.jpg",
    make: async () => F.withSegments(await F.halves(800, 400), F.exifSegment(cameraExif)),
    format: "jpeg",
    dimensions: { width: 400, height: 800 },
    red: "top",
    takenAt: cameraTime,
  },
  {
    name: "PNG with an eXIf chunk",
    filename: "screen.png",
    make: async () => sharp(await F.halves(640, 480, "png")).png().withExif({ IFD2: { DateTimeOriginal: "2020:02:29 23:59:58" } } as never).toBuffer(),
    format: "png",
    dimensions: { width: 640, height: 480 },
    red: "left",
    takenAt: "2020-02-29T23:59:58Z",
  },
  {
    name: "WebP with EXIF (its date used to be ignored)",
    filename: "phone.webp",
    make: async () => sharp(await F.halves(640, 480, "png")).webp().withExif({ IFD2: { DateTimeOriginal: "2021:07:08 09:10:11", OffsetTimeOriginal: "+05:30" } } as never).toBuffer(),
    format: "webp",
    dimensions: { width: 640, height: 480 },
    red: "left",
    takenAt: "2021-07-08T03:40:11Z",
  },
  {
    name: "AVIF with EXIF",
    filename: "modern.avif",
    make: async () => sharp(await F.halves(320, 240, "png")).avif({ effort: 0 }).withExif({ IFD2: { DateTimeOriginal: "2022:01:02 03:04:05", OffsetTimeOriginal: "+00:00" } } as never).toBuffer(),
    format: "avif",
    dimensions: { width: 320, height: 240 },
    red: "left",
    takenAt: "2022-01-02T03:04:05Z",
  },
  {
    name: "TIFF whose directory lies past the first 64 KiB, dated in XMP",
    filename: "scan.tif",
    make: async () => {
      const tiff = await sharp(await F.halves(400, 300, "png")).tiff({ compression: "none" }).withXmp(F.xmpPacket({ "xmp:CreateDate": "2012-03-04T05:06:07+01:00" })).toBuffer();
      // Uncompressed 400×300 RGB is 360 KB of pixels before libtiff's directory.
      expect(tiff.readUInt32LE(4)).toBeGreaterThan(65536);
      return tiff;
    },
    format: "tiff",
    dimensions: { width: 400, height: 300 },
    red: "left",
    takenAt: "2012-03-04T04:06:07Z",
  },
  {
    name: "TIFF from a scanner whose maker also makes cameras (not taken for a RAW)",
    filename: "coolscan.tif",
    make: async () => {
      const { data } = await sharp(await F.halves(200, 100, "png")).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const tiff = new F.TiffBuilder();
      const pixels = tiff.blob(data);
      const ifd0 = tiff.ifd({
        0x0100: { long: [200] },
        0x0101: { long: [100] },
        0x0102: { short: [8, 8, 8] },
        0x0103: { short: [1] },
        0x0106: { short: [2] },
        0x010f: { ascii: "Nikon" },
        0x0111: { long: [pixels] },
        0x0115: { short: [3] },
        0x0116: { long: [100] },
        0x0117: { long: [data.length] },
      });
      return tiff.setFirstIfd(ifd0).bytes();
    },
    format: "tiff",
    dimensions: { width: 200, height: 100 },
    red: "left",
    takenAt: null,
  },
  { name: "GIF", filename: "anim.gif", make: () => F.halves(200, 100, "gif"), format: "gif", dimensions: { width: 200, height: 100 }, red: "left", takenAt: null },
  { name: "HEIC", filename: "iphone.heic", make: async () => heicHalves(), format: "heic", dimensions: { width: 800, height: 400 }, red: "left", takenAt: null },
  {
    name: "JPEG XL in its container, EXIF time with the offset kept only in XMP",
    filename: "next.jxl",
    make: async () =>
      F.jxlContainer(await F.jxlCodestream(await F.halves(160, 120, "png")), {
        exif: { dateTimeOriginal: "2018:01:02 03:04:05" },
        xmp: { "exif:DateTimeOriginal": "2018-01-02T03:04:05+01:00" },
      }),
    format: "jxl",
    dimensions: { width: 160, height: 120 },
    red: "left",
    takenAt: "2018-01-02T02:04:05Z",
  },
  ...(
    [
      ["cr2", F.cr2],
      ["cr3", F.cr3],
      ["nef", F.nef],
      ["dng", F.dng],
      ["arw", F.arw],
      ["raf", F.raf],
      ["rw2", F.rw2],
      ["orf", F.orf],
    ] as const
  ).map(([format, build]): Case => ({
    name: `camera RAW ${format.toUpperCase()} (preview rendered, sensor size reported)`,
    filename: `IMG_0001.${format}`,
    make: async () => build({ preview: await preview(), sensor, exif: cameraExif }),
    format,
    dimensions: portrait,
    red: "top",
    takenAt: cameraTime,
  })),
  {
    name: "a DNG holding its sensor data and no preview is developed by LibRaw, turned by its orientation",
    filename: "camera.dng",
    make: async () => F.dngWithSensorData(await F.halves(600, 400), cameraExif),
    format: "dng",
    dimensions: { width: 400, height: 600 },
    red: "top",
    takenAt: cameraTime,
  },
  {
    name: "a DNG holding no JPEG preview renders from its RGB thumbnail, with the sensor size",
    filename: "converted.dng",
    make: async () => F.dngWithoutPreview({ thumbnail: await F.halves(256, 170), sensor, exif: cameraExif }),
    format: "dng",
    dimensions: portrait,
    red: "top",
    takenAt: cameraTime,
  },
];

const jpegWith = (...segments: Uint8Array[]) => async () => F.withSegments(await F.halves(300, 200), ...segments);

const DATES: Case[] = (
  [
    ["EXIF DateTimeOriginal without an offset is UTC", jpegWith(F.exifSegment({ dateTimeOriginal: "2010:10:10 10:10:10" })), "2010-10-10T10:10:10Z"],
    ["EXIF CreateDate with no DateTimeOriginal", jpegWith(F.exifSegment({ createDate: "2011:11:11 11:11:11" })), "2011-11-11T11:11:11Z"],
    [
      "EXIF DateTimeOriginal takes the offset an XMP date at the same local time carries",
      jpegWith(F.exifSegment({ dateTimeOriginal: "2015:06:07 08:09:10" }), F.xmpSegment({ "photoshop:DateCreated": "2015-06-07T08:09:10+02:00" })),
      "2015-06-07T06:09:10Z",
    ],
    ["XMP photoshop:DateCreated only", jpegWith(F.xmpSegment({ "photoshop:DateCreated": "2013-04-05T06:07:08-07:00" })), "2013-04-05T13:07:08Z"],
    ["XMP xmp:CreateDate only", jpegWith(F.xmpSegment({ "xmp:CreateDate": "2014-05-06T07:08:09Z" })), "2014-05-06T07:08:09Z"],
    ["IPTC DateCreated and TimeCreated with an offset", jpegWith(F.iptcSegment({ 55: "20170809", 60: "101112+0530" })), "2017-08-09T04:41:12Z"],
    ["GPS date and time (UTC) only", jpegWith(F.exifSegment({ gps: { date: "2016:02:03", time: [4, 5, 6] } })), "2016-02-03T04:05:06Z"],
    ["ModifyDate with OffsetTime, the last resort", jpegWith(F.exifSegment({ modifyDate: "2014:01:01 00:00:00", offsetTime: "+01:00" })), "2013-12-31T23:00:00Z"],
    [
      "DateTimeOriginal wins over every other source",
      jpegWith(
        F.exifSegment({ dateTimeOriginal: "2019:01:01 12:00:00", offsetTimeOriginal: "+00:00", createDate: "2018:01:01 00:00:00", modifyDate: "2020:01:01 00:00:00", gps: { date: "2017:01:01", time: [0, 0, 0] } }),
        F.xmpSegment({ "xmp:CreateDate": "2016-01-01T00:00:00Z" }),
        F.iptcSegment({ 55: "20150101" }),
      ),
      "2019-01-01T12:00:00Z",
    ],
    ["no date anywhere", jpegWith(F.exifSegment({ make: "Nothing" })), null],
  ] as const
).map(([name, make, takenAt]) => ({ name, filename: "dated.jpg", make, format: "jpeg", dimensions: { width: 300, height: 200 }, red: "left", takenAt }));

describe("every format and date source is accepted with the right dimensions, orientation and date", () => {
  const uploaded = new Map<string, { id: string; bytes: Uint8Array }>();

  beforeAll(async () => {
    // Upload everything first, so the server processes while the test checks the first ones.
    for (const c of [...FORMATS, ...DATES]) {
      const bytes = await c.make();
      uploaded.set(c.name, { id: await upload(bytes, c.filename), bytes });
    }
  });

  for (const c of [...FORMATS, ...DATES]) {
    test(c.name, async () => {
      const { id } = uploaded.get(c.name)!;
      const file = await processed(owner, id, 120_000);
      expect(file.media_type).toBe("image");
      expect(file.variant_status, JSON.stringify(file)).toBe("completed");
      expect(file.format).toBe(c.format);
      expect(file.dimensions).toEqual(c.dimensions);
      if (c.takenAt === null) expect(file.content_created_at).toBeNull();
      else expect(Date.parse(file.content_created_at)).toBe(Date.parse(c.takenAt));
      expect(await F.redSide(await fetchSigned(`/files/${id}/variant/large_1024`))).toBe(c.red);
    });
  }

  test("a RAW's original is kept as uploaded for download", async () => {
    const { id, bytes } = uploaded.get(FORMATS.find((c) => c.format === "nef")!.name)!;
    await processed(owner, id, 120_000);
    const file = await owner.api.get(`/files/${id}`);
    const original = Buffer.from(await (await fetch(file.body.original_url)).arrayBuffer());
    expect(original.equals(Buffer.from(bytes))).toBe(true);
  });
});

describe("type detection from the head alone", () => {
  test("a TIFF whose directory lies past the head is a TIFF even without the whole file (large S3 intents)", async () => {
    const tiff = await sharp(await F.halves(400, 300, "png")).tiff({ compression: "none" }).toBuffer();
    const detection = await detectType([IMAGE_CONTENT], tiff.subarray(0, 65536), "scan.tif");
    expect(detection).toMatchObject({ ok: true, type: { mediaType: "image", format: "tiff" } });
  });

  test("RAWs are told apart by their headers and camera maker", async () => {
    const spec = { preview: await preview(), sensor };
    const expected = { cr2: F.cr2, cr3: F.cr3, nef: F.nef, dng: F.dng, arw: F.arw, raf: F.raf, rw2: F.rw2, orf: F.orf };
    for (const [format, build] of Object.entries(expected)) {
      const detection = await detectType([IMAGE_CONTENT], (await build(spec)).subarray(0, 65536), "IMG_0001.bin");
      expect(detection, format).toMatchObject({ ok: true, type: { mediaType: "image", format } });
    }
  });
});

describe("OCR on photos", () => {
  const engine = new OcrEngine();
  afterAll(() => engine.close());

  /** A dark sign with light lettering on a photo, turned by `angle` degrees. */
  async function sign(seed: number, lines: string[], angle: number): Promise<Buffer> {
    const board = await sharp(
      Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="900" height="${120 + lines.length * 110}">
        <rect width="100%" height="100%" rx="20" fill="rgb(25,60,40)"/>
        ${lines.map((w, i) => `<text x="50" y="${110 + i * 110}" font-family="DejaVu Sans" font-weight="bold" font-size="80" fill="rgb(240,230,200)">${w}</text>`).join("")}</svg>`),
    )
      .rotate(angle, { background: { r: 0, g: 0, b: 0, alpha: 0 } })
      .png()
      .toBuffer();
    return sharp(await photo(seed, 1600, 1200)).composite([{ input: board, left: 300, top: 250 }]).jpeg({ quality: 85 }).toBuffer();
  }

  test("ordinary photos without text yield no text at all (no noise words)", async () => {
    for (let seed = 1; seed <= 6; seed++) {
      const result = await engine.recognize(await photo(seed, 1600, 1200));
      expect(result.text, `photo ${seed}`).toBe("");
      expect(result.regions).toEqual([]);
    }
  });

  test("a sign in a photo is read, level or slightly turned", async () => {
    expect((await engine.recognize(await sign(1, ["WEEKEND", "WARRIOR"], 0))).text).toBe("WEEKEND\nWARRIOR");
    expect((await engine.recognize(await sign(2, ["WEEKEND", "WARRIOR"], 4))).text).toContain("WEEKEND\nWARRIOR");
    expect((await engine.recognize(await sign(5, ["HOP DELUSION", "OPEN 7 DAYS"], 3))).text).toBe("HOP DELUSION\nOPEN 7 DAYS");
  });
});

describe("damaged and huge images", () => {
  test("a JPEG cut short renders what is there instead of failing", async () => {
    const whole = await F.halves(800, 600);
    const id = await upload(whole.subarray(0, Math.floor(whole.length * 0.6)), "cut.jpg");
    const file = await processed(owner, id, 120_000);
    expect(file.variant_status, JSON.stringify(file)).toBe("completed");
    expect(file.dimensions).toEqual({ width: 800, height: 600 });
    // The top of the picture decoded: red on the left, blue on the right.
    const variant = await fetchSigned(`/files/${id}/variant/large_1024`);
    const { data } = await sharp(variant).extract({ left: 0, top: 0, width: 800, height: 100 }).resize(2, 1, { fit: "fill" }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    expect(data[0]!).toBeGreaterThan(150);
    expect(data[5]!).toBeGreaterThan(150);
  });

  test("a DNG whose sensor data ends early fails saying LibRaw stopped, in words (it said [object Object])", async () => {
    const failed = await processed(owner, await upload(F.truncatedSensorDng(2000, 2000, 250_000 + 4096), "truncated.dng"), 120_000);
    expect(failed.variant_status).toBe("failed");
    const status = (await owner.api.get(`/files/uploads-status/${failed.id}`)).body;
    expect(status.error_message).toContain("LibRaw stopped inside its decoder (the sensor data is truncated, damaged or larger than it can hold)");
    expect(status.error_message).not.toContain("[object");
  });

  test("through the pipeline: a cut JPEG completes saying it is damaged; an undecodable one fails but keeps its capture date", async () => {
    const whole = await F.halves(640, 480);
    const cut = await processed(owner, await upload(whole.subarray(0, Math.floor(whole.length * 0.6)), "cut-short.jpg"), 120_000);
    expect(cut.variant_status).toBe("completed");
    const status = (await owner.api.get(`/files/uploads-status/${cut.id}`)).body;
    expect(status.error_message).toContain("damaged");

    const exif = F.exifSegment({ dateTimeOriginal: "2019:05:04 10:11:12", offsetTimeOriginal: "-03:00" });
    const wrecked = Buffer.concat([Buffer.from([0xff, 0xd8]), exif, Buffer.from([0xff, 0xc0, 0x00, 0x03, 0x00]), Buffer.alloc(200, 0x55)]);
    const failed = await processed(owner, await upload(new Uint8Array(wrecked), "wrecked.jpg"), 120_000);
    expect(failed.variant_status).toBe("failed");
    expect(failed.content_created_at).toBe("2019-05-04T13:11:12.000Z");
  });

  test("renderImage says a file is damaged and what libvips reported", async () => {
    const whole = await F.halves(800, 600);
    const rendered = await renderImage(whole.subarray(0, Math.floor(whole.length * 0.6)));
    expect(rendered.damaged).toContain("damaged");
    expect((await renderImage(whole)).damaged).toBeNull();
  });

  test("the capture date is read without decoding, even from a JPEG too damaged to render", async () => {
    const exif = F.exifSegment({ dateTimeOriginal: "2019:05:04 10:11:12", offsetTimeOriginal: "-03:00" });
    // SOI, the EXIF segment, then garbage where the frame header should be.
    const wrecked = Buffer.concat([Buffer.from([0xff, 0xd8]), exif, Buffer.from([0xff, 0xc0, 0x00, 0x03, 0x00]), Buffer.alloc(200, 0x55)]);
    const failure = await renderFailure(wrecked);
    expect(failure.message).toContain("could not be decoded");
    expect(failure.takenAt).toBe("2019-05-04T13:11:12.000Z");
    expect(await readCaptureDate(wrecked)).toEqual({ at: "2019-05-04T13:11:12.000Z", offset: "-03:00", source: "EXIF DateTimeOriginal" });
    const heicDate = await readCaptureDate(heicHalves());
    expect(heicDate).toBeNull();
  });

  test("a RAW that cannot be rendered (no preview, no sensor data) keeps its capture date", async () => {
    // A CR2 as metadata samples strip it: IFD0 and its EXIF only.
    const tiff = new F.TiffBuilder([0x49, 0x49, 0x2a, 0x00, 0, 0, 0, 0, 0x43, 0x52, 0x02, 0x00, 0, 0, 0, 0]);
    const stripped = Buffer.from(tiff.setFirstIfd(tiff.ifd(F.exifEntries(tiff, { make: "Canon", ...cameraExif }))).bytes());
    const failure = await renderFailure(stripped);
    expect(failure.message).toContain("no embedded preview");
    expect(failure.takenAt).toBe("2019-05-04T13:11:12.000Z");
    expect(failure.camera?.make).toBe("Canon");
  });

  test("MEDIABOX_IMAGE_MAX_PIXELS reaches the pipeline: a larger image fails with the limit named", async () => {
    const small = await startTestServer({ env: { MEDIABOX_IMAGE_MAX_PIXELS: "1000000" } });
    try {
      const tenant = await small.tenant({ tier: "CUSTOM" });
      const form = new FormData();
      form.append("file", new File([(await F.halves(2000, 1500)) as Uint8Array<ArrayBuffer>], "big.jpg"));
      form.append("auto_describe", "false");
      const file = await processed(tenant, (await tenant.api.form("/files/upload", form)).body.image_id, 120_000);
      expect(file.variant_status).toBe("failed");
      expect((await tenant.api.get(`/files/uploads-status/${file.id}`)).body.error_message).toContain("MEDIABOX_IMAGE_MAX_PIXELS");
    } finally {
      await small.close();
    }
  });

  test("an image over the pixel limit is refused with the sizes and the setting named", async () => {
    const image = await F.halves(2000, 1500);
    await expect(renderImage(image, { maxPixels: 1_000_000 })).rejects.toThrow(/2000×1500 \(3\.0 megapixels\), over the 1\.0 megapixels limit \(MEDIABOX_IMAGE_MAX_PIXELS\)/);
  });

  test("a RAW whose sensor is over the pixel limit still renders from its small preview", async () => {
    const raw = Buffer.from(await F.cr2({ preview: await F.halves(600, 400), sensor: { width: 6000, height: 4000 } }));
    const rendered = await renderImage(raw, { maxPixels: 1_000_000 });
    expect([rendered.format, rendered.pixels.width, rendered.pixels.height]).toEqual(["cr2", 600, 400]);
  });

  test("a 288 MP JPEG renders by shrink-on-load with bounded memory", async () => {
    const huge = await sharp({ create: { width: 24000, height: 12000, channels: 3, background: "#4080c0" }, limitInputPixels: false }).jpeg({ quality: 70 }).toBuffer();
    let peak = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    const before = process.memoryUsage().rss;
    try {
      const rendered = await renderImage(huge);
      expect(rendered.width).toBe(24000);
      expect(rendered.height).toBe(12000);
      expect(rendered.variants.find((v) => v.type === "large_1024")).toMatchObject({ width: 1024, height: 512 });
      // OCR gets a bounded copy, never the 288 MP original.
      const readable = await sharp(rendered.readable).metadata();
      expect(Math.max(readable.width, readable.height)).toBeLessThanOrEqual(2500);
    } finally {
      clearInterval(sampler);
    }
    // Decoded whole it would take 864 MB; shrink-on-load keeps the growth to a fraction of that.
    expect(peak - before).toBeLessThan(300 * 1024 * 1024);
  }, 180_000);
});
