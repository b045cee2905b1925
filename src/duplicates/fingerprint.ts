/**
 * What near-duplicate detection compares of an image: its perceptual hash (sharp-phash: the
 * signs of the 8 × 8 lowest DCT frequencies of a 32 × 32 grey copy, 64 bits, robust to resizing,
 * re-encoding and exposure) and, to choose the best of a group, its sharpness (variance of the
 * Laplacian on a 256-px grey copy). Both are read from the stored large_1024 variant, so every
 * format is measured the same way.
 */
import phash from "sharp-phash";
import sharp from "sharp";
import { greyStats } from "../video/frames.ts";

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
  return { phash: hash, sharpness: Math.round(greyStats(grey.data, grey.info.width, grey.info.height).sharpness * 10) / 10 };
}

/** Bits that differ between two hashes (0-64). */
export function hammingDistance(a: string, b: string): number {
  let count = 0;
  for (let i = 0; i < a.length; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) count++;
  return count + Math.abs(a.length - b.length);
}
