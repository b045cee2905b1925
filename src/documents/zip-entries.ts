/**
 * Reads a ZIP archive's central directory (what every entry claims: name, method, compressed and
 * uncompressed size, flags) and inflates single entries with a hard cap on their output, so the
 * DOCX limits (docx-limits.ts) can judge an archive before mammoth opens it, and small parts such
 * as docProps/core.xml can be read directly. No ZIP64 and no encryption: such entries are reported
 * as they are (sizes 0xFFFFFFFF, the encrypted flag) for the caller to refuse.
 */
import { inflateRawSync } from "node:zlib";

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** Entries larger than this are not read by readZipEntry (core properties are a few hundred bytes). */
const MAX_SMALL_ENTRY = 1 << 20;

export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated; anything else is a method neither we nor mammoth read. */
  method: number;
  encrypted: boolean;
  compressedSize: number;
  /** What the entry claims it inflates to; only inflating it proves it. */
  size: number;
  localOffset: number;
}

export interface ZipDirectory {
  /** Entries the end record announces (may exceed those actually listed in a damaged archive). */
  declaredEntries: number;
  entries: ZipEntry[];
}

/** The central directory, or null when the bytes hold no readable one. */
export function readZipDirectory(bytes: Uint8Array): ZipDirectory | null {
  if (bytes.length < 22) return null;
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
  const declaredEntries = view.getUint16(eocd + 10, true);
  const entries: ZipEntry[] = [];
  const decoder = new TextDecoder();
  let at = view.getUint32(eocd + 16, true);
  for (let i = 0; i < declaredEntries && at + 46 <= bytes.length; i++) {
    if (view.getUint32(at, true) !== CENTRAL) break;
    const nameLength = view.getUint16(at + 28, true);
    entries.push({
      name: decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength)),
      method: view.getUint16(at + 10, true),
      encrypted: (view.getUint16(at + 8, true) & 1) === 1,
      compressedSize: view.getUint32(at + 20, true),
      size: view.getUint32(at + 24, true),
      localOffset: view.getUint32(at + 42, true),
    });
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  return { declaredEntries, entries };
}

/** Thrown by inflateZipEntry when an entry inflates to more than the cap it was given. */
export class ZipEntryTooLarge extends Error {
  override name = "ZipEntryTooLarge";
}

/**
 * An entry's bytes, never more than `maxBytes` of output (zlib stops there: a bomb costs at most
 * the cap). Null when its data cannot be located or its method is not stored/deflate.
 */
export function inflateZipEntry(bytes: Uint8Array, entry: ZipEntry, maxBytes: number): Uint8Array | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const local = entry.localOffset;
  if (local + 30 > bytes.length || view.getUint32(local, true) !== LOCAL) return null;
  const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
  const data = bytes.subarray(start, start + entry.compressedSize);
  if (entry.method === 0) {
    if (data.length > maxBytes) throw new ZipEntryTooLarge(`${entry.name} holds more than ${maxBytes} bytes`);
    return data;
  }
  if (entry.method !== 8) return null;
  try {
    return new Uint8Array(inflateRawSync(data, { maxOutputLength: Math.max(1, maxBytes) }));
  } catch (err) {
    // zlib refuses to produce more than maxOutputLength with ERR_BUFFER_TOO_LARGE (a RangeError).
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || err instanceof RangeError) {
      throw new ZipEntryTooLarge(`${entry.name} inflates to more than ${maxBytes} bytes`);
    }
    throw err;
  }
}

/** One small entry by name (a DOCX's docProps/core.xml); null when absent, large or unreadable. */
export function readZipEntry(bytes: Uint8Array, name: string): Uint8Array | null {
  const entry = readZipDirectory(bytes)?.entries.find((e) => e.name === name);
  if (!entry || entry.size > MAX_SMALL_ENTRY) return null;
  try {
    return inflateZipEntry(bytes, entry, MAX_SMALL_ENTRY);
  } catch {
    return null;
  }
}
