/**
 * Photo fixtures the tests build themselves, byte by byte where no npm writer exists: EXIF
 * (TIFF directories), XMP and IPTC blocks put into JPEGs, camera RAW containers (CR2, CR3, NEF,
 * DNG, ARW, RAF, RW2, ORF) laid out as the cameras write them around an embedded preview JPEG,
 * and JPEG XL (the @jsquash/jxl encoder, wrapped in a container with EXIF when asked). Pixels
 * come from sharp, so every test knows what the image shows.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import sharp from "sharp";

type Value = { ascii: string } | { short: number[] } | { long: number[] } | { rational: [number, number][] } | { srational: [number, number][] } | { undefined: Uint8Array };
export type Entries = Record<number, Value>;

const u16 = (n: number) => [n & 0xff, (n >> 8) & 0xff];
const u32 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];

/** A little-endian TIFF laid out front to back: blobs and directories are written as they are added, children before parents. */
export class TiffBuilder {
  private readonly out: number[];

  /** `header`: the file's first bytes; bytes 4-7 receive IFD0's offset (a standard "II*\0" header by default). */
  constructor(header: number[] = [0x49, 0x49, 0x2a, 0x00, 0, 0, 0, 0]) {
    this.out = [...header];
  }

  get length(): number {
    return this.out.length;
  }

  /** Appends bytes (word-aligned, as TIFF wants) and returns their offset. */
  blob(bytes: Uint8Array | number[]): number {
    if (this.out.length % 2) this.out.push(0);
    const offset = this.out.length;
    for (const b of bytes) this.out.push(b);
    return offset;
  }

  /** Writes a directory (values over 4 bytes go just before it) and returns its offset. */
  ifd(entries: Entries, next = 0): number {
    const encoded = Object.entries(entries)
      .map(([tag, value]) => ({ tag: Number(tag), ...encode(value) }))
      .sort((a, b) => a.tag - b.tag);
    const far = new Map<number, number>();
    for (const e of encoded) if (e.bytes.length > 4) far.set(e.tag, this.blob(e.bytes));
    if (this.out.length % 2) this.out.push(0);
    const offset = this.out.length;
    this.out.push(...u16(encoded.length));
    for (const e of encoded) {
      this.out.push(...u16(e.tag), ...u16(e.type), ...u32(e.count));
      if (e.bytes.length > 4) this.out.push(...u32(far.get(e.tag)!));
      else this.out.push(...e.bytes, ...new Array(4 - e.bytes.length).fill(0));
    }
    this.out.push(...u32(next));
    return offset;
  }

  setFirstIfd(offset: number): this {
    this.out.splice(4, 4, ...u32(offset));
    return this;
  }

  bytes(): Uint8Array {
    return Uint8Array.from(this.out);
  }
}

function encode(value: Value): { type: number; count: number; bytes: number[] } {
  if ("ascii" in value) {
    const bytes = [...Buffer.from(value.ascii, "latin1"), 0];
    return { type: 2, count: bytes.length, bytes };
  }
  if ("short" in value) return { type: 3, count: value.short.length, bytes: value.short.flatMap(u16) };
  if ("long" in value) return { type: 4, count: value.long.length, bytes: value.long.flatMap(u32) };
  if ("rational" in value) return { type: 5, count: value.rational.length, bytes: value.rational.flatMap(([n, d]) => [...u32(n), ...u32(d)]) };
  if ("srational" in value) return { type: 10, count: value.srational.length, bytes: value.srational.flatMap(([n, d]) => [...u32(n >>> 0), ...u32(d)]) };
  return { type: 7, count: value.undefined.length, bytes: [...value.undefined] };
}

export interface ExifSpec {
  orientation?: number;
  make?: string;
  modifyDate?: string;
  offsetTime?: string;
  dateTimeOriginal?: string;
  offsetTimeOriginal?: string;
  createDate?: string;
  /** "YYYY:MM:DD" and [h, m, s], UTC. */
  gps?: { date: string; time: [number, number, number] };
  pixelX?: number;
  pixelY?: number;
}

/** IFD0 entries (with EXIF and GPS directories written into `tiff`) for `spec`. */
export function exifEntries(tiff: TiffBuilder, spec: ExifSpec, ifd0: Entries = {}): Entries {
  const exif: Entries = {};
  if (spec.dateTimeOriginal) exif[0x9003] = { ascii: spec.dateTimeOriginal };
  if (spec.createDate) exif[0x9004] = { ascii: spec.createDate };
  if (spec.offsetTime) exif[0x9010] = { ascii: spec.offsetTime };
  if (spec.offsetTimeOriginal) exif[0x9011] = { ascii: spec.offsetTimeOriginal };
  if (spec.pixelX) exif[0xa002] = { long: [spec.pixelX] };
  if (spec.pixelY) exif[0xa003] = { long: [spec.pixelY] };
  const entries: Entries = { ...ifd0 };
  if (spec.make) entries[0x010f] = { ascii: spec.make };
  if (spec.orientation) entries[0x0112] = { short: [spec.orientation] };
  if (spec.modifyDate) entries[0x0132] = { ascii: spec.modifyDate };
  if (Object.keys(exif).length) entries[0x8769] = { long: [tiff.ifd(exif)] };
  if (spec.gps) {
    entries[0x8825] = {
      long: [tiff.ifd({ 0x0000: { undefined: Uint8Array.from([2, 3, 0, 0]) }, 0x0007: { rational: spec.gps.time.map((v) => [v, 1] as [number, number]) }, 0x001d: { ascii: spec.gps.date } })],
    };
  }
  return entries;
}

/** An EXIF block as JPEG's APP1 carries it (a TIFF starting at its header). */
export function exifTiff(spec: ExifSpec): Uint8Array {
  const tiff = new TiffBuilder();
  const ifd0 = tiff.ifd(exifEntries(tiff, spec));
  return tiff.setFirstIfd(ifd0).bytes();
}

function segment(marker: number, payload: Uint8Array): Uint8Array {
  const length = payload.byteLength + 2;
  return Uint8Array.from([0xff, marker, length >> 8, length & 0xff, ...payload]);
}

/** The JPEG with `segments` (APPn) right after its SOI. */
export function withSegments(jpeg: Uint8Array, ...segments: Uint8Array[]): Buffer {
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
}

export const exifSegment = (spec: ExifSpec) => segment(0xe1, Buffer.concat([Buffer.from("Exif\0\0", "latin1"), exifTiff(spec)]));

/** An XMP packet with the given properties of rdf:Description as attributes (e.g. {"photoshop:DateCreated": "2020-01-02T03:04:05+05:00"}). */
export function xmpPacket(properties: Record<string, string>): string {
  const attrs = Object.entries(properties).map(([k, v]) => ` ${k}="${v}"`).join("");
  return `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/" xmlns:exif="http://ns.adobe.com/exif/1.0/"${attrs}/></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`;
}

export const xmpSegment = (properties: Record<string, string>) => segment(0xe1, Buffer.concat([Buffer.from("http://ns.adobe.com/xap/1.0/\0", "latin1"), Buffer.from(xmpPacket(properties))]));

/** APP13 (Photoshop IRB, resource 0x0404) holding IPTC-IIM record 2 datasets. */
export function iptcSegment(datasets: Record<number, string>): Uint8Array {
  const iim: number[] = [0x1c, 0x02, 0x00, 0x00, 0x02, 0x00, 0x04];
  for (const [dataset, value] of Object.entries(datasets)) {
    const bytes = [...Buffer.from(value, "latin1")];
    iim.push(0x1c, 0x02, Number(dataset), bytes.length >> 8, bytes.length & 0xff, ...bytes);
  }
  if (iim.length % 2) iim.push(0);
  const size = iim.length;
  const irb = [...Buffer.from("8BIM", "latin1"), 0x04, 0x04, 0, 0, (size >>> 24) & 0xff, (size >>> 16) & 0xff, (size >>> 8) & 0xff, size & 0xff, ...iim];
  return segment(0xed, Uint8Array.from([...Buffer.from("Photoshop 3.0\0", "latin1"), ...irb]));
}

/** Left half red, right half blue, as stored (before any orientation). */
export function halves(width: number, height: number, format: "jpeg" | "png" | "webp" | "avif" | "tiff" | "gif" = "jpeg"): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect width="50%" height="100%" fill="rgb(220,30,30)"/><rect x="50%" width="50%" height="100%" fill="rgb(30,30,220)"/></svg>`;
  return sharp(Buffer.from(svg)).toFormat(format, format === "jpeg" ? { quality: 90 } : {}).toBuffer();
}

/** Where the red half of a `halves` image ended up once displayed: "left" as drawn, "top" after a 90° clockwise turn, ... */
export async function redSide(bytes: Uint8Array): Promise<"left" | "right" | "top" | "bottom"> {
  const { data } = await sharp(bytes).removeAlpha().resize(30, 30, { fit: "fill" }).raw().toBuffer({ resolveWithObject: true });
  const redness = (x0: number, x1: number, y0: number, y1: number) => {
    let sum = 0;
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) sum += data[(y * 30 + x) * 3]! - data[(y * 30 + x) * 3 + 2]!;
    return sum;
  };
  const sides = { left: redness(0, 10, 0, 30), right: redness(20, 30, 0, 30), top: redness(0, 30, 0, 10), bottom: redness(0, 30, 20, 30) };
  return (Object.entries(sides) as [keyof typeof sides, number][]).sort((a, b) => b[1] - a[1])[0]![0];
}

// ---------------------------------------------------------------------------------------------
// Camera RAW containers around a preview JPEG

export interface RawSpec {
  /** The embedded preview (a baseline JPEG). */
  preview: Uint8Array;
  /** Sensor size as the camera records it. */
  sensor: { width: number; height: number };
  exif?: ExifSpec;
}

/** A small thumbnail JPEG, as cameras also embed (the reader must pick the larger preview). */
const thumbnail = () => halves(160, 120);

/** Canon CR2: TIFF with "CR\x02\0" at byte 8; IFD0's strip is the full-size JPEG, EXIF has the developed size. */
export async function cr2(spec: RawSpec): Promise<Uint8Array> {
  const tiff = new TiffBuilder([0x49, 0x49, 0x2a, 0x00, 0, 0, 0, 0, 0x43, 0x52, 0x02, 0x00, 0, 0, 0, 0]);
  const thumb = await thumbnail();
  const thumbAt = tiff.blob(thumb);
  const ifd1 = tiff.ifd({ 0x0201: { long: [thumbAt] }, 0x0202: { long: [thumb.length] } });
  const previewAt = tiff.blob(spec.preview);
  const ifd0 = tiff.ifd(
    exifEntries(tiff, { make: "Canon", pixelX: spec.sensor.width, pixelY: spec.sensor.height, ...spec.exif }, {
      0x0103: { short: [6] },
      0x0111: { long: [previewAt] },
      0x0117: { long: [spec.preview.byteLength] },
    }),
    ifd1,
  );
  return tiff.setFirstIfd(ifd0).bytes();
}

/** Nikon NEF: IFD0 is a small uncompressed thumbnail; SubIFDs hold the preview JPEG and the raw data's directory (the sensor size). */
export async function nef(spec: RawSpec): Promise<Uint8Array> {
  const tiff = new TiffBuilder();
  const previewAt = tiff.blob(spec.preview);
  const previewIfd = tiff.ifd({ 0x00fe: { long: [1] }, 0x0103: { short: [6] }, 0x0201: { long: [previewAt] }, 0x0202: { long: [spec.preview.byteLength] } });
  const rawIfd = tiff.ifd({ 0x00fe: { long: [0] }, 0x0100: { long: [spec.sensor.width] }, 0x0101: { long: [spec.sensor.height] }, 0x0103: { short: [34713] } });
  const rgb = tiff.blob(new Uint8Array(160 * 120 * 3).fill(128));
  const ifd0 = tiff.ifd(
    exifEntries(tiff, { make: "NIKON CORPORATION", ...spec.exif }, {
      0x00fe: { long: [1] },
      0x0100: { long: [160] },
      0x0101: { long: [120] },
      0x0103: { short: [1] },
      0x0111: { long: [rgb] },
      0x0117: { long: [160 * 120 * 3] },
      0x014a: { long: [previewIfd, rawIfd] },
    }),
  );
  return tiff.setFirstIfd(ifd0).bytes();
}

/** IFD0 of a DNG whose image is the sensor itself: a 16-bit RGGB Bayer mosaic, uncompressed, in one strip. */
function bayerSensorEntries(width: number, height: number, stripAt: number, stripBytes: number, model: string): Entries {
  return {
    0x00fe: { long: [0] },
    0x0100: { long: [width] },
    0x0101: { long: [height] },
    0x0102: { short: [16] },
    0x0103: { short: [1] },
    0x0106: { short: [32803] },
    0x0111: { long: [stripAt] },
    0x0115: { short: [1] },
    0x0116: { long: [height] },
    0x0117: { long: [stripBytes] },
    0x828d: { short: [2, 2] },
    0x828e: { undefined: Uint8Array.from([0, 1, 1, 2]) },
    0xc612: { undefined: Uint8Array.from([1, 4, 0, 0]) },
    0xc614: { ascii: model },
    0xc61d: { long: [65535] },
  };
}

/** Pseudo-random bytes, fast and repeatable (crypto.getRandomValues fills 64 KB a call). */
export function noise(length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length);
  const words = new Uint32Array(out.buffer, 0, Math.floor(length / 4));
  let x = seed >>> 0 || 1;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x >>> 0;
  }
  return out;
}

/**
 * A DNG holding only sensor data (so LibRaw has to develop it) that claims a `width` × `height`
 * 16-bit Bayer sensor, with a strip of `stripBytes` of noise: enough bytes for the reader's
 * plausibility check (a byte per 16 pixels), far fewer than the sensor needs (bench:bombs
 * claims 20000 × 20000).
 */
export function truncatedSensorDng(width: number, height: number, stripBytes: number): Uint8Array {
  const build = (stripAt: number) => {
    const tiff = new TiffBuilder();
    const ifd0 = tiff.ifd(exifEntries(tiff, { make: "Adobe Test" }, bayerSensorEntries(width, height, stripAt, width * height * 2, "Adobe Test bomb sensor")));
    return tiff.setFirstIfd(ifd0).bytes();
  };
  // The directory's size does not depend on the strip's offset: measure, then place the strip after it.
  const head = build(0);
  const stripAt = head.length + (head.length % 2);
  const out = new Uint8Array(stripAt + stripBytes);
  out.set(build(stripAt));
  out.set(noise(stripBytes), stripAt);
  return out;
}

/** Adobe DNG: DNGVersion in IFD0; a JPEG preview SubIFD and the raw SubIFD with DefaultCropSize. */
export async function dng(spec: RawSpec): Promise<Uint8Array> {
  const tiff = new TiffBuilder();
  const previewAt = tiff.blob(spec.preview);
  const previewIfd = tiff.ifd({ 0x00fe: { long: [1] }, 0x0103: { short: [7] }, 0x0111: { long: [previewAt] }, 0x0117: { long: [spec.preview.byteLength] } });
  const rawIfd = tiff.ifd({
    0x00fe: { long: [0] },
    0x0100: { long: [spec.sensor.width + 16] },
    0x0101: { long: [spec.sensor.height + 16] },
    0xc620: { long: [spec.sensor.width, spec.sensor.height] },
  });
  const ifd0 = tiff.ifd(exifEntries(tiff, { make: "Adobe Test", ...spec.exif }, { 0xc612: { undefined: Uint8Array.from([1, 4, 0, 0]) }, 0x014a: { long: [previewIfd, rawIfd] } }));
  return tiff.setFirstIfd(ifd0).bytes();
}

/**
 * A DNG as a camera that records DNG writes it, holding the sensor data itself and no preview:
 * IFD0 is the raw image, a Bayer mosaic (RGGB, 16 bits, uncompressed) of `image`'s pixels, with
 * a colour matrix that makes the camera's space linear sRGB. Only a RAW developer can show it.
 */
export async function dngWithSensorData(image: Buffer, exif?: ExifSpec): Promise<Uint8Array> {
  const { data, info } = await sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const mosaic = new Uint8Array(width * height * 2);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      // R G / G B: the channel each photosite sees, linearized (sRGB's gamma undone) to 16 bits.
      const channel = (y % 2) + (x % 2);
      const value = Math.round(((data[(y * width + x) * 3 + channel]! / 255) ** 2.2) * 65535);
      mosaic[(y * width + x) * 2] = value & 0xff;
      mosaic[(y * width + x) * 2 + 1] = value >> 8;
    }
  }
  const tiff = new TiffBuilder();
  const strip = tiff.blob(mosaic);
  const xyzToSrgb = [3.2406, -1.5372, -0.4986, -0.9689, 1.8758, 0.0415, 0.0557, -0.204, 1.057];
  const ifd0 = tiff.ifd(
    exifEntries(tiff, { make: "Adobe Test", ...exif }, {
      ...bayerSensorEntries(width, height, strip, mosaic.length, "Adobe Test sRGB sensor"),
      0x011c: { short: [1] },
      0xc621: { srational: xyzToSrgb.map((v) => [Math.round(v * 10000), 10000] as [number, number]) },
      0xc628: { rational: [[1, 1], [1, 1], [1, 1]] },
      0xc65a: { short: [21] },
    }),
  );
  return tiff.setFirstIfd(ifd0).bytes();
}

/** A DNG with no JPEG at all: IFD0 is an uncompressed RGB thumbnail (`thumbnail` as raw pixels), as some converters write. */
export async function dngWithoutPreview(spec: Omit<RawSpec, "preview"> & { thumbnail: Buffer }): Promise<Uint8Array> {
  const { data, info } = await sharp(spec.thumbnail).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const tiff = new TiffBuilder();
  const rawIfd = tiff.ifd({ 0x00fe: { long: [0] }, 0x0100: { long: [spec.sensor.width + 16] }, 0x0101: { long: [spec.sensor.height + 16] }, 0xc620: { long: [spec.sensor.width, spec.sensor.height] } });
  const pixels = tiff.blob(data);
  const ifd0 = tiff.ifd(
    exifEntries(tiff, { make: "Adobe Test", ...spec.exif }, {
      0x00fe: { long: [1] },
      0x0100: { long: [info.width] },
      0x0101: { long: [info.height] },
      0x0102: { short: [8, 8, 8] },
      0x0103: { short: [1] },
      0x0106: { short: [2] },
      0x0111: { long: [pixels] },
      0x0115: { short: [3] },
      0x0116: { long: [info.height] },
      0x0117: { long: [data.length] },
      0xc612: { undefined: Uint8Array.from([1, 4, 0, 0]) },
      0x014a: { long: [rawIfd] },
    }),
  );
  return tiff.setFirstIfd(ifd0).bytes();
}

/** Sony ARW: IFD0's JPEGInterchangeFormat is the preview; the raw directory (next IFD) has the sensor size. */
export async function arw(spec: RawSpec): Promise<Uint8Array> {
  const tiff = new TiffBuilder();
  const previewAt = tiff.blob(spec.preview);
  const rawIfd = tiff.ifd({ 0x00fe: { long: [0] }, 0x0100: { long: [spec.sensor.width] }, 0x0101: { long: [spec.sensor.height] }, 0x0103: { short: [32767] } });
  const ifd0 = tiff.ifd(exifEntries(tiff, { make: "SONY", ...spec.exif }, { 0x0201: { long: [previewAt] }, 0x0202: { long: [spec.preview.byteLength] } }), rawIfd);
  return tiff.setFirstIfd(ifd0).bytes();
}

/** Olympus ORF: "IIRO" header, otherwise TIFF; the preview is IFD0's JPEG. */
export async function orf(spec: RawSpec): Promise<Uint8Array> {
  const tiff = new TiffBuilder([0x49, 0x49, 0x52, 0x4f, 0, 0, 0, 0]);
  const previewAt = tiff.blob(spec.preview);
  const ifd0 = tiff.ifd(
    exifEntries(tiff, { make: "OLYMPUS IMAGING CORP.", pixelX: spec.sensor.width, pixelY: spec.sensor.height, ...spec.exif }, {
      0x0201: { long: [previewAt] },
      0x0202: { long: [spec.preview.byteLength] },
    }),
  );
  return tiff.setFirstIfd(ifd0).bytes();
}

/** Panasonic RW2: "IIU\0" header with IFD0 at 24; sensor borders in tags 4-7; JpgFromRaw (tag 0x2E) is a JPEG with its own EXIF. */
export async function rw2(spec: RawSpec): Promise<Uint8Array> {
  const header = [0x49, 0x49, 0x55, 0x00, 0x18, 0, 0, 0, 0x88, 0xe7, 0x74, 0xd8, ...new Array(12).fill(0)];
  const tiff = new TiffBuilder(header);
  const jpeg = spec.exif ? withSegments(spec.preview, exifSegment(spec.exif)) : spec.preview;
  const ifd0Entries: Entries = {
    0x0001: { undefined: Uint8Array.from([0x30, 0x34, 0x33, 0x35]) },
    0x0002: { short: [spec.sensor.width + 48] },
    0x0003: { short: [spec.sensor.height + 24] },
    0x0004: { short: [12] },
    0x0005: { short: [24] },
    0x0006: { short: [12 + spec.sensor.height] },
    0x0007: { short: [24 + spec.sensor.width] },
    0x010f: { ascii: "Panasonic" },
    0x002e: { undefined: jpeg },
  };
  // IFD0 must sit at offset 24 (file-type and readers expect it there): write it first, values after it.
  const ifd0 = placeFirst(tiff, ifd0Entries);
  return tiff.setFirstIfd(ifd0).bytes();
}

/** Writes a directory whose large values follow it (RW2 wants IFD0 right after the header). */
function placeFirst(tiff: TiffBuilder, entries: Entries): number {
  const encoded = Object.entries(entries)
    .map(([tag, value]) => ({ tag: Number(tag), ...encode(value) }))
    .sort((a, b) => a.tag - b.tag);
  const start = tiff.length;
  const dirSize = 2 + encoded.length * 12 + 4;
  let valueAt = start + dirSize;
  const dir: number[] = [...u16(encoded.length)];
  const values: number[] = [];
  for (const e of encoded) {
    dir.push(...u16(e.tag), ...u16(e.type), ...u32(e.count));
    if (e.bytes.length > 4) {
      dir.push(...u32(valueAt));
      values.push(...e.bytes);
      if (e.bytes.length % 2) values.push(0);
      valueAt += e.bytes.length + (e.bytes.length % 2);
    } else dir.push(...e.bytes, ...new Array(4 - e.bytes.length).fill(0));
  }
  dir.push(...u32(0));
  tiff.blob([...dir, ...values]);
  return start;
}

/** Fujifilm RAF: a 16-byte magic, big-endian offsets of the JPEG (with its EXIF) at 84 and of the CFA records at 92. */
export async function raf(spec: RawSpec): Promise<Uint8Array> {
  const jpeg = spec.exif ? withSegments(spec.preview, exifSegment(spec.exif)) : spec.preview;
  const headerSize = 160;
  const records = Buffer.alloc(4 + 4 + 4 + 4 + 4);
  records.writeUInt32BE(2, 0);
  records.writeUInt16BE(0x100, 4);
  records.writeUInt16BE(4, 6);
  records.writeUInt16BE(spec.sensor.height + 8, 8);
  records.writeUInt16BE(spec.sensor.width + 8, 10);
  records.writeUInt16BE(0x111, 12);
  records.writeUInt16BE(4, 14);
  records.writeUInt16BE(spec.sensor.height, 16);
  records.writeUInt16BE(spec.sensor.width, 18);
  const header = Buffer.alloc(headerSize);
  header.write("FUJIFILMCCD-RAW 0201FF383501", 0, "latin1");
  header.writeUInt32BE(headerSize, 84);
  header.writeUInt32BE(jpeg.length, 88);
  header.writeUInt32BE(headerSize + jpeg.length, 92);
  header.writeUInt32BE(records.length, 96);
  return Buffer.concat([header, jpeg, records]);
}

function box(type: string, ...payload: Uint8Array[]): Buffer {
  const body = Buffer.concat(payload);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(body.length + 8, 0);
  head.write(type, 4, "latin1");
  return Buffer.concat([head, body]);
}

/** Canon CR3: ISO boxes; moov's Canon uuid box holds CMT1 (IFD0) and CMT2 (EXIF); the preview sits in mdat. */
export async function cr3(spec: RawSpec): Promise<Uint8Array> {
  const cmt1 = new TiffBuilder();
  const ifd0: Entries = { 0x010f: { ascii: "Canon" } };
  if (spec.exif?.orientation) ifd0[0x0112] = { short: [spec.exif.orientation] };
  cmt1.setFirstIfd(cmt1.ifd(ifd0));
  const cmt2 = new TiffBuilder();
  const exif: Entries = { 0xa002: { long: [spec.sensor.width] }, 0xa003: { long: [spec.sensor.height] } };
  if (spec.exif?.dateTimeOriginal) exif[0x9003] = { ascii: spec.exif.dateTimeOriginal };
  if (spec.exif?.offsetTimeOriginal) exif[0x9011] = { ascii: spec.exif.offsetTimeOriginal };
  cmt2.setFirstIfd(cmt2.ifd(exif));
  const ftyp = box("ftyp", Buffer.from("crx \0\0\0\x01crx isom", "latin1"));
  const uuid = box("uuid", Buffer.from("85c0b687820f11e08111f4ce462b6a48", "hex"), box("CMT1", cmt1.bytes()), box("CMT2", cmt2.bytes()));
  const moov = box("moov", uuid);
  return Buffer.concat([ftyp, moov, box("mdat", await thumbnail(), spec.preview)]);
}

// ---------------------------------------------------------------------------------------------
// JPEG XL

const jxlDir = () => join(dirname(createRequire(import.meta.url).resolve("@jsquash/jxl/package.json")), "codec");
let encoder: Promise<(data: ImageData, options: object) => Promise<ArrayBuffer>> | null = null;

/** A bare JPEG XL codestream of `png`'s pixels (the wasm encoder; small images only, it is slow). */
export async function jxlCodestream(image: Buffer): Promise<Uint8Array> {
  encoder ??= (async () => {
    const mod = await import("@jsquash/jxl/encode.js");
    await (mod.init as unknown as (module: WebAssembly.Module) => Promise<unknown>)(new WebAssembly.Module(readFileSync(join(jxlDir(), "enc", "jxl_enc.wasm"))));
    return mod.default as unknown as (data: ImageData, options: object) => Promise<ArrayBuffer>;
  })();
  const encode = await encoder;
  const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const pixels = { data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height, colorSpace: "srgb" } as ImageData;
  return new Uint8Array(await encode(pixels, { quality: 90, effort: 1 }));
}

/** The codestream in the ISO-BMFF container, with an EXIF box (4-byte offset, then the TIFF) and an XMP box when asked. */
export function jxlContainer(codestream: Uint8Array, metadata: { exif?: ExifSpec; xmp?: Record<string, string> } = {}): Buffer {
  const signature = Buffer.from([0, 0, 0, 0x0c, 0x4a, 0x58, 0x4c, 0x20, 0x0d, 0x0a, 0x87, 0x0a]);
  const parts = [signature, box("ftyp", Buffer.from("jxl \0\0\0\0jxl ", "latin1"))];
  if (metadata.exif) parts.push(box("Exif", Buffer.from([0, 0, 0, 0]), exifTiff(metadata.exif)));
  if (metadata.xmp) parts.push(box("xml ", Buffer.from(xmpPacket(metadata.xmp))));
  parts.push(box("jxlc", codestream));
  return Buffer.concat(parts);
}
