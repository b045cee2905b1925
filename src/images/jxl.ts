/**
 * JPEG XL for the bundled libvips, which has no JPEG XL loader: libjxl compiled to wasm
 * (@jsquash/jxl) decodes the image on a thread of its own (jxl-worker.ts), with its orientation
 * applied, and the pixels go on like a HEIC's. Also reads what the file says before decoding:
 * its size from the codestream header (so the pixel limit is checked before any decoding) and
 * the EXIF and XMP boxes of the container (for the capture date).
 */
import { brotliDecompressSync } from "node:zlib";
import { WorkerThread } from "../native/worker-thread.ts";
import { emptyBlocks, type MetadataBlocks } from "./capture-date.ts";
import type { JxlReply, JxlRequest } from "./jxl-worker.ts";
import { exifPayloadToTiff } from "../camera/tiff-ifd.ts";

const CONTAINER = [0, 0, 0, 0x0c, 0x4a, 0x58, 0x4c, 0x20, 0x0d, 0x0a, 0x87, 0x0a];

/** A bare JPEG XL codestream (FF 0A) or the ISO-BMFF-style container. */
export function isJxl(bytes: Uint8Array): boolean {
  if (bytes[0] === 0xff && bytes[1] === 0x0a) return true;
  return CONTAINER.every((b, i) => bytes[i] === b);
}

interface Box {
  type: string;
  payload: Uint8Array;
}

function containerBoxes(bytes: Uint8Array): Box[] {
  const out: Box[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  while (at + 8 <= bytes.byteLength && out.length < 10_000) {
    let size = view.getUint32(at);
    let header = 8;
    if (size === 1) {
      if (at + 16 > bytes.byteLength) break;
      size = Number(view.getBigUint64(at + 8));
      header = 16;
    } else if (size === 0) size = bytes.byteLength - at;
    if (size < header || at + size > bytes.byteLength) break;
    let type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    let payload = bytes.subarray(at + header, at + size);
    if (type === "brob" && payload.byteLength > 4) {
      // A Brotli-compressed box: the real type, then the compressed payload.
      const inner = String.fromCharCode(...payload.subarray(0, 4));
      if (inner === "Exif" || inner === "xml ") {
        try {
          payload = brotliDecompressSync(payload.subarray(4), { maxOutputLength: 16 * 1024 * 1024 });
          type = inner;
        } catch {
          // unreadable metadata never fails the image
        }
      }
    }
    out.push({ type, payload });
    at += size;
  }
  return out;
}

/** The codestream: the file itself, or the container's jxlc box / jxlp parts (each after a 4-byte index). */
function codestreamHead(bytes: Uint8Array): Uint8Array | null {
  if (bytes[0] === 0xff && bytes[1] === 0x0a) return bytes;
  for (const box of containerBoxes(bytes)) {
    if (box.type === "jxlc") return box.payload;
    if (box.type === "jxlp") return box.payload.subarray(4);
  }
  return null;
}

/** Bits read least-significant first, as the JPEG XL codestream stores them. */
class BitReader {
  private bit = 0;
  constructor(private readonly bytes: Uint8Array) {}
  read(n: number): number {
    let value = 0;
    for (let i = 0; i < n; i++) {
      const byte = this.bytes[this.bit >> 3];
      if (byte === undefined) throw new RangeError("JPEG XL header is truncated");
      value += ((byte >> (this.bit & 7)) & 1) * 2 ** i;
      this.bit++;
    }
    return value;
  }
  u32(bits: number[]): number {
    return this.read(bits[this.read(2)]!);
  }
}

const RATIOS: [number, number][] = [[1, 1], [12, 10], [4, 3], [3, 2], [16, 9], [5, 4], [2, 1]];

/** Width and height from the codestream's SizeHeader (before orientation), or null when unreadable. */
export function jxlSize(bytes: Uint8Array): { width: number; height: number } | null {
  const stream = codestreamHead(bytes);
  if (!stream || stream[0] !== 0xff || stream[1] !== 0x0a) return null;
  try {
    const bits = new BitReader(stream.subarray(2));
    const small = bits.read(1) === 1;
    const height = small ? (bits.read(5) + 1) * 8 : bits.u32([9, 13, 18, 30]) + 1;
    const ratio = bits.read(3);
    const width = ratio ? Math.floor((height * RATIOS[ratio - 1]![0]) / RATIOS[ratio - 1]![1]) : small ? (bits.read(5) + 1) * 8 : bits.u32([9, 13, 18, 30]) + 1;
    return { width, height };
  } catch {
    return null;
  }
}

/** The container's EXIF and XMP boxes (a bare codestream has none). */
export function jxlMetadata(bytes: Uint8Array): MetadataBlocks {
  const blocks = emptyBlocks();
  if (bytes[0] === 0xff) return blocks;
  for (const box of containerBoxes(bytes)) {
    if (box.type === "Exif") {
      const tiff = exifPayloadToTiff(box.payload);
      if (tiff) blocks.exif.push(tiff);
    }
    if (box.type === "xml ") blocks.xmp.push(new TextDecoder().decode(box.payload));
  }
  return blocks;
}

/** RGBA pixels of the image, upright; throws with the reason when libjxl cannot decode it. */
export async function decodeJxl(bytes: Uint8Array): Promise<{ width: number; height: number; data: Uint8ClampedArray }> {
  const reply = await decoder().ask({ bytes });
  if (reply instanceof Error || "error" in reply) throw new Error(`libjxl could not decode the JPEG XL: ${reply instanceof Error ? reply.message : reply.error}`);
  return reply;
}

let thread: WorkerThread<JxlRequest, JxlReply> | null = null;
/** The decoding thread, started on first use and replaced if it died. */
const decoder = () => (thread && !thread.broken ? thread : (thread = new WorkerThread<JxlRequest, JxlReply>("images/jxl-worker.ts", "the JPEG XL decoding thread")));
