/**
 * Reads one small entry out of a ZIP archive (a DOCX's docProps/core.xml): the central directory
 * names it, the local header locates its data, which is stored or deflated. No ZIP64, no
 * encryption; callers treat a null or a throw as "not available".
 */
import { inflateRawSync } from "node:zlib";

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** Entries larger than this are not read (core properties are a few hundred bytes). */
const MAX_ENTRY = 1 << 20;

export function readZipEntry(bytes: Uint8Array, name: string): Uint8Array | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The end-of-central-directory record sits in the last 22 bytes plus a comment of up to 64 KiB.
  let eocd = -1;
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - 0xffff); at--) {
    if (view.getUint32(at, true) === EOCD) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) return null;
  const entries = view.getUint16(eocd + 10, true);
  let at = view.getUint32(eocd + 16, true);
  const wanted = new TextEncoder().encode(name);
  for (let i = 0; i < entries && at + 46 <= bytes.length; i++) {
    if (view.getUint32(at, true) !== CENTRAL) return null;
    const method = view.getUint16(at + 10, true);
    const compressed = view.getUint32(at + 20, true);
    const size = view.getUint32(at + 24, true);
    const nameLength = view.getUint16(at + 28, true);
    const extra = view.getUint16(at + 30, true);
    const comment = view.getUint16(at + 32, true);
    const local = view.getUint32(at + 42, true);
    const entryName = bytes.subarray(at + 46, at + 46 + nameLength);
    if (entryName.length === wanted.length && entryName.every((b, k) => b === wanted[k])) {
      if (size > MAX_ENTRY || view.getUint32(local, true) !== LOCAL) return null;
      const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
      const data = bytes.subarray(start, start + compressed);
      if (method === 0) return data;
      if (method === 8) return new Uint8Array(inflateRawSync(data, { maxOutputLength: MAX_ENTRY }));
      return null;
    }
    at += 46 + nameLength + extra + comment;
  }
  return null;
}
