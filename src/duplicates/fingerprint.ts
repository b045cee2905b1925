/**
 * What near-duplicate detection compares of an image: its perceptual hash (sharp-phash: the
 * signs of the 8 × 8 lowest DCT frequencies of a 32 × 32 grey copy, 64 bits, robust to resizing,
 * re-encoding and exposure), the same hash of its central 90 % (so a copy cropped by 5 % a side
 * still matches), a 32 × 32 grey thumbnail (to confirm a looser hash match by correlation), and,
 * to choose the best of a group, its sharpness (variance of the Laplacian on a 256-px grey copy).
 * All are read from the stored large_1024 variant, so every format is measured the same way.
 */
import phash from "sharp-phash";
import sharp from "sharp";

export interface Fingerprint {
  /** 64-bit perceptual hash as 64 "0"/"1" characters. */
  phash: string;
  /** The hash of the central 90 % (5 % cut from each side). */
  phashCenter: string;
  /** 32 × 32 grey pixels, row by row. */
  thumb: Uint8Array;
  /** Variance of the Laplacian of a 256-px grey copy: higher is crisper. */
  sharpness: number;
}

const SHARPNESS_SIDE = 256;
export const THUMB_SIDE = 32;
/** Share cut from each side for the central hash: the largest crop still matched by hash alone. */
const CENTER_CUT = 0.05;

export async function fingerprint(image: Buffer): Promise<Fingerprint> {
  const { width = 0, height = 0 } = await sharp(image).metadata();
  const dx = Math.round(width * CENTER_CUT);
  const dy = Math.round(height * CENTER_CUT);
  const center = await sharp(image).extract({ left: dx, top: dy, width: Math.max(1, width - 2 * dx), height: Math.max(1, height - 2 * dy) }).toBuffer();
  const [hash, centerHash, grey, thumb] = await Promise.all([
    phash(image),
    phash(center),
    sharp(image).resize(SHARPNESS_SIDE, SHARPNESS_SIDE, { fit: "inside" }).greyscale().raw().toBuffer({ resolveWithObject: true }),
    sharp(image).resize(THUMB_SIDE, THUMB_SIDE, { fit: "fill" }).greyscale().raw().toBuffer(),
  ]);
  return {
    phash: hash,
    phashCenter: centerHash,
    thumb: new Uint8Array(thumb.buffer, thumb.byteOffset, THUMB_SIDE * THUMB_SIDE),
    sharpness: Math.round(laplacianVariance(grey.data, grey.info.width, grey.info.height) * 10) / 10,
  };
}

/** Bits that differ between two hashes (0-64). */
export function hammingDistance(a: string, b: string): number {
  let count = 0;
  for (let i = 0; i < a.length; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) count++;
  return count + Math.abs(a.length - b.length);
}

/** The closest of the whole-to-whole and whole-to-centre hash distances: a 5 %-cropped copy is close to the other's centre. */
export function cropTolerantDistance(a: Pick<Fingerprint, "phash" | "phashCenter">, b: Pick<Fingerprint, "phash" | "phashCenter">): number {
  return Math.min(hammingDistance(a.phash, b.phash), hammingDistance(a.phashCenter, b.phash), hammingDistance(a.phash, b.phashCenter));
}

/** Normalized cross-correlation of two thumbnails (-1..1): brightness and contrast changes leave it near 1. */
export function thumbCorrelation(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  let meanA = 0;
  let meanB = 0;
  for (let i = 0; i < n; i++) {
    meanA += a[i]!;
    meanB += b[i]!;
  }
  meanA /= n;
  meanB /= n;
  let dot = 0;
  let sa = 0;
  let sb = 0;
  for (let i = 0; i < n; i++) {
    const x = a[i]! - meanA;
    const y = b[i]! - meanB;
    dot += x * y;
    sa += x * x;
    sb += y * y;
  }
  return sa && sb ? dot / Math.sqrt(sa * sb) : 0;
}

/** Variance of the 4-neighbour Laplacian over the inner pixels of a grey image. */
function laplacianVariance(grey: Uint8Array, width: number, height: number): number {
  let sum = 0;
  let squares = 0;
  let n = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      const lap = grey[i - width]! + grey[i + width]! + grey[i - 1]! + grey[i + 1]! - 4 * grey[i]!;
      sum += lap;
      squares += lap * lap;
      n++;
    }
  }
  return n ? squares / n - (sum / n) ** 2 : 0;
}
