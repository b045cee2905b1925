/**
 * Which camera RAW format a file is (CR2, CR3, NEF, DNG, ARW, RAF, RW2, ORF, PEF, SRW), from its
 * first bytes and TIFF structure: what type detection at upload needs, apart from reading the
 * RAW's preview (images/raw.ts).
 */
import { TAG, TiffBlock } from "./tiff-ifd.ts";

export const RAW_FORMATS = ["cr2", "cr3", "nef", "dng", "arw", "raf", "rw2", "orf", "pef", "srw"] as const;
export type RawFormat = (typeof RAW_FORMATS)[number];

/** The MIME types file-type and the camera makers' documentation use. */
export const RAW_MIME: Record<RawFormat, string> = {
  cr2: "image/x-canon-cr2",
  cr3: "image/x-canon-cr3",
  nef: "image/x-nikon-nef",
  dng: "image/x-adobe-dng",
  arw: "image/x-sony-arw",
  raf: "image/x-fujifilm-raf",
  rw2: "image/x-panasonic-rw2",
  orf: "image/x-olympus-orf",
  pef: "image/x-pentax-pef",
  srw: "image/x-samsung-srw",
};

export const isRawFormat = (format: string): format is RawFormat => (RAW_FORMATS as readonly string[]).includes(format);

const ascii = (bytes: Uint8Array, start: number, length: number) => String.fromCharCode(...bytes.subarray(start, start + length));

/**
 * TIFF-structured RAWs look like TIFF by their header: the camera maker in IFD0 (or the DNG
 * version tag) says which RAW it is. `bytes` must reach IFD0 (the start of the file usually does).
 */
export function rawFormatOfTiff(bytes: Uint8Array): RawFormat | null {
  const tiff = TiffBlock.open(bytes);
  if (!tiff) return null;
  const version = tiff.u16(2);
  if (version === 0x55) return "rw2"; // Panasonic "IIU\0"
  if (version === 0x4f52 || version === 0x5352) return "orf"; // Olympus "IIRO" / "IIRS"
  if (version !== 42) return null;
  if (ascii(bytes, 8, 2) === "CR") return "cr2";
  const ifd0 = tiff.readIfd(tiff.firstIfdOffset).entries;
  if (ifd0.has(TAG.DngVersion)) return "dng";
  // The same makers build scanners and write plain TIFFs: a RAW also has what no scanner TIFF
  // has (sub-images, a thumbnail as IFD0, an embedded JPEG, raw-only compressions, EXIF maker notes).
  const compression = tiff.number(ifd0.get(TAG.Compression)) ?? 1;
  const exifAt = tiff.number(ifd0.get(TAG.ExifIfd));
  const rawLike =
    ifd0.has(TAG.SubIFDs) ||
    ifd0.has(TAG.JpegOffset) ||
    tiff.number(ifd0.get(TAG.NewSubfileType)) === 1 ||
    compression === 6 ||
    compression >= 32767 ||
    (exifAt !== null && tiff.readIfd(exifAt).entries.has(TAG.MakerNote));
  if (!rawLike) return null;
  const make = (tiff.text(ifd0.get(TAG.Make)) ?? "").toUpperCase();
  if (make.startsWith("NIKON")) return "nef";
  if (make.startsWith("SONY")) return "arw";
  if (make.startsWith("PENTAX") || make.startsWith("RICOH")) return "pef";
  if (make.startsWith("OLYMPUS") || make.startsWith("OM DIGITAL")) return "orf";
  if (make.startsWith("SAMSUNG")) return "srw";
  return null;
}

/** Any RAW this module reads, from the whole file's bytes (header checks only; nothing is decoded). */
export function rawFormatOf(bytes: Uint8Array): RawFormat | null {
  if (ascii(bytes, 0, 16) === "FUJIFILMCCD-RAW ") return "raf";
  if (ascii(bytes, 4, 8) === "ftypcrx ") return "cr3";
  return rawFormatOfTiff(bytes);
}
