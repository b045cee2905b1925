/**
 * What near-duplicate detection compares of an image: its perceptual hash (sharp-phash: the
 * signs of the 8 × 8 lowest DCT frequencies of a 32 × 32 grey copy, 64 bits, robust to resizing,
 * re-encoding and exposure) and, to choose the best of a group, its sharpness (variance of the
 * Laplacian on a 256-px grey copy). Both are read from the stored large_1024 variant, so every
 * format is measured the same way.
 */
import phash from "sharp-phash";
import sharp from "sharp";

export interface Fingerprint {
  /** 64-bit perceptual hash as 64 "0"/"1" characters. */
  phash: string;
  /** Variance of the Laplacian of a 256-px grey copy: higher is crisper. */
  sharpness: number;
}

const SHARPNESS_SIDE = 256;

export async function fingerprint(image: Buffer): Promise<Fingerprint> {
  const [hash, grey] = await Promise.all([
    phash(image),
    sharp(image).resize(SHARPNESS_SIDE, SHARPNESS_SIDE, { fit: "inside" }).greyscale().raw().toBuffer({ resolveWithObject: true }),
  ]);
  return { phash: hash, sharpness: Math.round(laplacianVariance(grey.data, grey.info.width, grey.info.height) * 10) / 10 };
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

/** Bits that differ between two hashes (0-64). */
export function hammingDistance(a: string, b: string): number {
  let count = 0;
  for (let i = 0; i < a.length; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) count++;
  return count + Math.abs(a.length - b.length);
}
