/**
 * Hostile documents made on the fly, for test/document-limits.test.ts and scripts/bench/bombs.ts:
 * DOCX files that inflate far beyond their size or hold millions of paragraphs, a DOCX whose zip
 * entries lie about their size, a PDF page painting one enormous image, and a text file of
 * countless tiny blocks. Large entries are deflated as a stream, so making a 1 GB bomb never holds
 * 1 GB in memory.
 */
import { crc32, createDeflate, createDeflateRaw } from "node:zlib";
import { zipArchive, type ZipEntryBytes } from "./fixtures.ts";

const enc = new TextEncoder();
const MiB = 1024 * 1024;

/** A zip entry: its bytes as one buffer or as a generator of pieces (for entries too big to hold). */
export interface BombEntry {
  name: string;
  data: Uint8Array | string | (() => Iterable<Uint8Array>);
  /** Store uncompressed instead of deflating. */
  stored?: boolean;
  /** What the headers claim the entry inflates to (a lie, when set). */
  declaredSize?: number;
}

/** Compresses pieces through one zlib stream (raw deflate for zips, zlib-wrapped for PDF FlateDecode). */
async function deflatePieces(pieces: Iterable<Uint8Array>, raw: boolean): Promise<{ data: Uint8Array; crc: number; size: number }> {
  const stream = raw ? createDeflateRaw({ level: 9 }) : createDeflate({ level: 9 });
  const out: Buffer[] = [];
  stream.on("data", (b: Buffer) => out.push(b));
  const ended = new Promise<void>((resolve, reject) => {
    stream.on("end", resolve);
    stream.on("error", reject);
  });
  let crc = 0;
  let size = 0;
  for (const piece of pieces) {
    crc = crc32(piece, crc);
    size += piece.length;
    if (!stream.write(piece)) await new Promise((r) => stream.once("drain", r));
  }
  stream.end();
  await ended;
  return { data: Buffer.concat(out), crc: crc >>> 0, size };
}

function piecesOf(data: BombEntry["data"]): Iterable<Uint8Array> {
  if (typeof data === "function") return data();
  return [typeof data === "string" ? enc.encode(data) : data];
}

/** A zip archive (deflated entries unless `stored`), its sizes as declared by each entry. */
export async function bombZip(entries: BombEntry[]): Promise<Uint8Array> {
  const written: ZipEntryBytes[] = [];
  for (const entry of entries) {
    let body: { data: Uint8Array; crc: number; size: number };
    if (entry.stored) {
      const data = Buffer.concat([...piecesOf(entry.data)]);
      body = { data, crc: crc32(data) >>> 0, size: data.length };
    } else body = await deflatePieces(piecesOf(entry.data), true);
    written.push({ name: entry.name, body: body.data, crc: body.crc, size: entry.declaredSize ?? body.size, method: entry.stored ? 0 : 8 });
  }
  return zipArchive(written);
}

const CONTENT_TYPES =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const RELS =
  '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';
const DOC_HEAD = '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>';
const DOC_TAIL = "</w:body></w:document>";

/** A DOCX whose word/document.xml is DOC_HEAD + the body pieces + DOC_TAIL. */
export function docxOf(body: () => Iterable<Uint8Array>, options: { declaredSize?: number; extra?: BombEntry[] } = {}): Promise<Uint8Array> {
  return bombZip([
    { name: "[Content_Types].xml", data: CONTENT_TYPES },
    { name: "_rels/.rels", data: RELS },
    {
      name: "word/document.xml",
      data: function* () {
        yield enc.encode(DOC_HEAD);
        yield* body();
        yield enc.encode(DOC_TAIL);
      },
      ...(options.declaredSize !== undefined ? { declaredSize: options.declaredSize } : {}),
    },
    ...(options.extra ?? []),
  ]);
}

/** `count` tiny numbered paragraphs, written 10,000 at a time. */
export function paragraphBombDocx(count: number): Promise<Uint8Array> {
  return docxOf(function* () {
    for (let i = 0; i < count; i += 10_000) {
      let s = "";
      for (let k = i; k < Math.min(count, i + 10_000); k++) s += `<w:p><w:r><w:t>${k}</w:t></w:r></w:p>`;
      yield enc.encode(s);
    }
  });
}

/** One paragraph whose text is `bytes` letters: a small file that inflates to `bytes`. */
export function inflationBombDocx(bytes: number, options: { declaredSize?: number } = {}): Promise<Uint8Array> {
  const piece = new Uint8Array(MiB).fill(0x61);
  return docxOf(function* () {
    yield enc.encode("<w:p><w:r><w:t>");
    for (let left = bytes; left > 0; left -= MiB) yield left >= MiB ? piece : piece.subarray(0, left);
    yield enc.encode("</w:t></w:r></w:p>");
  }, options);
}

/**
 * One page painting one `side` x `side` grey image (1 bit per pixel, all white, Flate-compressed):
 * a few hundred KB that a reader decoding it would turn into side² x 4 bytes of pixels.
 */
export async function hugeImagePdf(side: number): Promise<Uint8Array> {
  const row = Math.ceil(side / 8);
  const rowsPerPiece = Math.max(1, Math.floor((4 * MiB) / row));
  const image = await deflatePieces(
    (function* () {
      const piece = new Uint8Array(row * rowsPerPiece).fill(0xff);
      for (let y = 0; y < side; y += rowsPerPiece) yield piece.subarray(0, row * Math.min(rowsPerPiece, side - y));
    })(),
    false,
  );
  const content = enc.encode("q 595 0 0 842 0 0 cm /Im1 Do Q\n");
  const chunks: Uint8Array[] = [];
  const offsets: number[] = [];
  let length = 0;
  const add = (part: Uint8Array | string) => {
    const bytes = typeof part === "string" ? enc.encode(part) : part;
    chunks.push(bytes);
    length += bytes.length;
  };
  const object = (n: number, ...parts: (Uint8Array | string)[]) => {
    offsets[n] = length;
    add(`${n} 0 obj\n`);
    for (const p of parts) add(p);
    add("\nendobj\n");
  };
  add("%PDF-1.7\n");
  object(1, "<< /Type /Catalog /Pages 2 0 R >>");
  object(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>");
  object(3, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>");
  object(4, `<< /Length ${content.length} >>\nstream\n`, content, "\nendstream");
  object(5, `<< /Type /XObject /Subtype /Image /Width ${side} /Height ${side} /ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /FlateDecode /Length ${image.data.length} >>\nstream\n`, image.data, "\nendstream");
  const xref = length;
  add(`xref\n0 6\n0000000000 65535 f \n${offsets.slice(1).map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`);
  add(`trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(chunks);
}

/** Plain text of `count` one-word blocks separated by blank lines: one element each. */
export function manyBlocksText(count: number): Uint8Array {
  const words = ["valve", "pump", "gasket", "flange", "boiler"];
  let s = "";
  for (let i = 0; i < count; i++) s += `${words[i % words.length]}${i}\n\n`;
  return enc.encode(s);
}
