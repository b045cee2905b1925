/**
 * Small real files built in the test suite: a PNG, a JPEG header, a PDF, a DOCX and other zips
 * (stored entries, built by hand), an MP4 header, and executables for the rejection tests.
 */
import { deflateSync } from "node:zlib";

function crc32(bytes: Uint8Array): number {
  return Bun.hash.crc32(bytes) >>> 0;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** A real RGB PNG of the given size filled with one colour (plus `seed` to vary the bytes). */
export function png(width = 4, height = 4, seed = 0): Uint8Array {
  const header = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, width);
  v.setUint32(4, height);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const raw = new Uint8Array(height * (1 + width * 3));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) raw.set([(seed * 37) & 255, (x * 40) & 255, (y * 40) & 255], y * (1 + width * 3) + 1 + x * 3);
  }
  return concat(header, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw)), chunk("IEND", new Uint8Array()));
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function pdf(text = "Hello Mediabox"): Uint8Array {
  const body = `%PDF-1.4
1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj
3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >> endobj
4 0 obj << /Length ${text.length + 30} >> stream
BT /F1 24 Tf 72 700 Td (${text}) Tj ET
endstream endobj
trailer << /Root 1 0 R >>
%%EOF
`;
  return new TextEncoder().encode(body);
}

/** One entry of a zip archive as it is written: its bytes after compression (method 0 stored, 8 deflated). */
export interface ZipEntryBytes {
  name: string;
  body: Uint8Array;
  crc: number;
  /** The uncompressed size the headers declare (a bomb may lie). */
  size: number;
  method: 0 | 8;
}

/** Lays entries out as a zip archive: local headers and bodies, the central directory, its end record. */
export function zipArchive(entries: ZipEntryBytes[]): Uint8Array {
  const enc = new TextEncoder();
  const locals: Uint8Array[] = [];
  const centrals: Uint8Array[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = enc.encode(entry.name);
    const size = Math.min(entry.size, 0xffffffff);
    const local = new Uint8Array(30 + name.length);
    const lv = new DataView(local.buffer);
    lv.setUint32(0, 0x04034b50, true);
    lv.setUint16(4, 20, true);
    lv.setUint16(8, entry.method, true);
    lv.setUint32(14, entry.crc, true);
    lv.setUint32(18, entry.body.length, true);
    lv.setUint32(22, size, true);
    lv.setUint16(26, name.length, true);
    local.set(name, 30);
    const central = new Uint8Array(46 + name.length);
    const cv = new DataView(central.buffer);
    cv.setUint32(0, 0x02014b50, true);
    cv.setUint16(4, 20, true);
    cv.setUint16(6, 20, true);
    cv.setUint16(10, entry.method, true);
    cv.setUint32(16, entry.crc, true);
    cv.setUint32(20, entry.body.length, true);
    cv.setUint32(24, size, true);
    cv.setUint16(28, name.length, true);
    cv.setUint32(42, offset, true);
    central.set(name, 46);
    locals.push(local, entry.body);
    centrals.push(central);
    offset += local.length + entry.body.length;
  }
  const centralSize = centrals.reduce((n, c) => n + c.length, 0);
  const end = new Uint8Array(22);
  const ev = new DataView(end.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(8, centrals.length, true);
  ev.setUint16(10, centrals.length, true);
  ev.setUint32(12, centralSize, true);
  ev.setUint32(16, offset, true);
  return concat(...locals, ...centrals, end);
}

/** A zip with stored (uncompressed) entries. */
export function zip(entries: Record<string, string | Uint8Array>): Uint8Array {
  const enc = new TextEncoder();
  return zipArchive(
    Object.entries(entries).map(([name, content]) => {
      const body = typeof content === "string" ? enc.encode(content) : content;
      return { name, body, crc: crc32(body), size: body.length, method: 0 };
    }),
  );
}

export function docx(text = "Quarterly report"): Uint8Array {
  return zip({
    "[Content_Types].xml":
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    "word/document.xml": `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:body></w:document>`,
  });
}

export function mp4(): Uint8Array {
  const ftyp = new Uint8Array([0, 0, 0, 0x18, ...new TextEncoder().encode("ftypmp42"), 0, 0, 0, 0, ...new TextEncoder().encode("mp42isom")]);
  const mdat = new Uint8Array([0, 0, 0, 16, ...new TextEncoder().encode("mdat"), 1, 2, 3, 4, 5, 6, 7, 8]);
  return concat(ftyp, mdat);
}

export function elf(): Uint8Array {
  const out = new Uint8Array(128);
  out.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]);
  return out;
}

export function peExe(): Uint8Array {
  const out = new Uint8Array(256);
  out.set([0x4d, 0x5a]);
  new DataView(out.buffer).setUint32(0x3c, 0x80, true);
  out.set([0x50, 0x45, 0, 0], 0x80);
  return out;
}

export function jar(): Uint8Array {
  return zip({ "META-INF/MANIFEST.MF": "Manifest-Version: 1.0\nMain-Class: Evil\n", "Evil.class": new Uint8Array([0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 52]) });
}

export const text = (s: string) => new TextEncoder().encode(s);
