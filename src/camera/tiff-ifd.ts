/**
 * A minimal, bounds-checked reader of TIFF image file directories (IFDs): the structure of TIFF
 * files, of the EXIF block inside JPEG/WebP/PNG/HEIF/JPEG XL, and of most camera RAW formats.
 * It only reads tags by number (the callers know which ones they need); it never follows more
 * than a fixed number of directories, so a hostile file cannot make it loop or read out of bounds.
 */

export interface IfdEntry {
  tag: number;
  type: number;
  count: number;
  /** Offset (within the TIFF block) of the value bytes. */
  valueOffset: number;
}

/** Byte sizes of the TIFF field types 1-13 (BYTE, ASCII, SHORT, LONG, RATIONAL, ..., IFD). */
const TYPE_SIZES = [0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4];
/** Directories are small; anything claiming more entries is not a real IFD. */
const MAX_ENTRIES = 1000;

export class TiffBlock {
  readonly little: boolean;
  private readonly view: DataView;

  /** `bytes` starts at the TIFF header ("II*\0" / "MM\0*", or Panasonic's "IIU\0" and Olympus' "IIRO"/"IIRS"). */
  private constructor(readonly bytes: Uint8Array) {
    this.little = bytes[0] === 0x49;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** The block when `bytes` starts with a TIFF byte-order mark, else null. */
  static open(bytes: Uint8Array): TiffBlock | null {
    if (bytes.byteLength < 8) return null;
    const ii = bytes[0] === 0x49 && bytes[1] === 0x49;
    const mm = bytes[0] === 0x4d && bytes[1] === 0x4d;
    return ii || mm ? new TiffBlock(bytes) : null;
  }

  get firstIfdOffset(): number {
    return this.u32(4) ?? 0;
  }

  u16(offset: number): number | null {
    return offset >= 0 && offset + 2 <= this.bytes.byteLength ? this.view.getUint16(offset, this.little) : null;
  }

  u32(offset: number): number | null {
    return offset >= 0 && offset + 4 <= this.bytes.byteLength ? this.view.getUint32(offset, this.little) : null;
  }

  /** The entries of the directory at `offset` (empty when it is out of bounds) and the next directory's offset (0 = none). */
  readIfd(offset: number): { entries: Map<number, IfdEntry>; next: number } {
    const entries = new Map<number, IfdEntry>();
    const count = this.u16(offset);
    if (count === null || count > MAX_ENTRIES || offset + 2 + count * 12 + 4 > this.bytes.byteLength) return { entries, next: 0 };
    for (let i = 0; i < count; i++) {
      const at = offset + 2 + i * 12;
      const tag = this.u16(at)!;
      const type = this.u16(at + 2)!;
      const n = this.u32(at + 4)!;
      const size = (TYPE_SIZES[type] ?? 0) * n;
      if (!size) continue;
      const valueOffset = size <= 4 ? at + 8 : this.u32(at + 8)!;
      if (valueOffset + size > this.bytes.byteLength) continue;
      if (!entries.has(tag)) entries.set(tag, { tag, type, count: n, valueOffset });
    }
    return { entries, next: this.u32(offset + 2 + count * 12) ?? 0 };
  }

  /** Unsigned integer values (BYTE, SHORT, LONG, IFD) of an entry. */
  numbers(entry: IfdEntry | undefined, max = 64): number[] {
    if (!entry) return [];
    const out: number[] = [];
    for (let i = 0; i < Math.min(entry.count, max); i++) {
      if (entry.type === 3 || entry.type === 8) out.push(this.u16(entry.valueOffset + i * 2)!);
      else if (entry.type === 4 || entry.type === 9 || entry.type === 13) out.push(this.u32(entry.valueOffset + i * 4)!);
      else if (entry.type === 1 || entry.type === 6 || entry.type === 7) out.push(this.bytes[entry.valueOffset + i]!);
      else if (entry.type === 5 || entry.type === 10) {
        const num = this.u32(entry.valueOffset + i * 8)!;
        const den = this.u32(entry.valueOffset + i * 8 + 4)!;
        out.push(den ? num / den : 0);
      }
    }
    return out;
  }

  number(entry: IfdEntry | undefined): number | null {
    return this.numbers(entry, 1)[0] ?? null;
  }

  /** An ASCII entry without its trailing NULs, or null. */
  text(entry: IfdEntry | undefined): string | null {
    if (!entry || (entry.type !== 2 && entry.type !== 7 && entry.type !== 1)) return null;
    const raw = this.bytes.subarray(entry.valueOffset, entry.valueOffset + Math.min(entry.count, 4096));
    const value = new TextDecoder("latin1").decode(raw).replace(/\0[\s\S]*$/, "").trim();
    return value || null;
  }
}

/** Tags the image modules read. */
export const TAG = {
  NewSubfileType: 0x00fe,
  ImageWidth: 0x0100,
  ImageLength: 0x0101,
  Compression: 0x0103,
  Make: 0x010f,
  Model: 0x0110,
  StripOffsets: 0x0111,
  Orientation: 0x0112,
  StripByteCounts: 0x0117,
  ModifyDate: 0x0132,
  SubIFDs: 0x014a,
  JpegOffset: 0x0201,
  JpegLength: 0x0202,
  XmlPacket: 0x02bc,
  Iptc: 0x83bb,
  ExifIfd: 0x8769,
  GpsIfd: 0x8825,
  DateTimeOriginal: 0x9003,
  CreateDate: 0x9004,
  OffsetTime: 0x9010,
  OffsetTimeOriginal: 0x9011,
  OffsetTimeDigitized: 0x9012,
  MakerNote: 0x927c,
  PixelXDimension: 0xa002,
  PixelYDimension: 0xa003,
  DngVersion: 0xc612,
  DefaultCropSize: 0xc620,
  GpsTimeStamp: 0x0007,
  GpsDateStamp: 0x001d,
} as const;

/** The EXIF-style directories of a TIFF block: IFD0, its EXIF and GPS directories (empty maps when absent). */
export function exifDirectories(tiff: TiffBlock): { ifd0: Map<number, IfdEntry>; exif: Map<number, IfdEntry>; gps: Map<number, IfdEntry> } {
  const ifd0 = tiff.readIfd(tiff.firstIfdOffset).entries;
  const sub = (tag: number) => {
    const offset = tiff.number(ifd0.get(tag));
    return offset ? tiff.readIfd(offset).entries : new Map<number, IfdEntry>();
  };
  return { ifd0, exif: sub(TAG.ExifIfd), gps: sub(TAG.GpsIfd) };
}

/** A TIFF block from an EXIF payload as sharp and containers hand it over ("Exif\0\0" + TIFF, or TIFF alone). */
export function exifPayloadToTiff(payload: Uint8Array | undefined | null): TiffBlock | null {
  if (!payload || payload.byteLength < 8) return null;
  // "Exif\0\0" (JPEG APP1, WebP, sharp) or a 4-byte offset before the TIFF header (HEIF, JPEG XL Exif boxes).
  for (const skip of [0, 6, 4, 10]) {
    const block = TiffBlock.open(payload.subarray(skip));
    if (block && (block.u16(2) === 42 || block.u16(2) === 0x55 || block.u16(2) === 0x4f52)) return block;
  }
  return null;
}
