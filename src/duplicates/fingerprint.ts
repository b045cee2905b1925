/**
 * What near-duplicate detection compares of an image: its perceptual hash (sharp-phash: the
 * signs of the 8 × 8 lowest DCT frequencies of a 32 × 32 grey copy, 64 bits, robust to resizing,
 * re-encoding and exposure), the same hash of its central 90 % (so a copy cropped by 5 % a side
 * still matches), a 32 × 32 grey thumbnail (to confirm a looser hash match by correlation, shifted
 * by up to a pixel for bursts), and,
 * to choose the best of a group, its sharpness (variance of the Laplacian on a 256-px grey copy).
 * All are read from the pixels the large_1024 variant is made from (the pipeline's one decode),
 * so every format is measured the same way and nothing is decoded again.
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

/** The fingerprint of decoded upright sRGB pixels (transparent parts count as white). */
export async function fingerprint(image: { data: Buffer; width: number; height: number; channels: 3 | 4 }): Promise<Fingerprint> {
  const { width, height } = image;
  // One grey copy at full size; every measure below reads it (raw in, raw out: no decoding).
  const grey = await sharp(image.data, { raw: { width, height, channels: image.channels } }).flatten({ background: "#ffffff" }).greyscale().raw().toBuffer();
  const raw = (w: number, h: number) => ({ raw: { width: w, height: h, channels: 1 as const } });
  // libvips writes one-channel raw input back out as sRGB unless told to keep it grey.
  const greyCopy = (pixels: Buffer, w: number, h: number) => sharp(pixels, raw(w, h)).toColourspace("b-w");
  const dx = Math.round(width * CENTER_CUT);
  const dy = Math.round(height * CENTER_CUT);
  const centerWidth = Math.max(1, width - 2 * dx);
  const centerHeight = Math.max(1, height - 2 * dy);
  const center = await greyCopy(grey, width, height).extract({ left: dx, top: dy, width: centerWidth, height: centerHeight }).raw().toBuffer();
  const [hash, centerHash, sharpnessCopy, thumb] = await Promise.all([
    phash(grey, raw(width, height)),
    phash(center, raw(centerWidth, centerHeight)),
    greyCopy(grey, width, height).resize(SHARPNESS_SIDE, SHARPNESS_SIDE, { fit: "inside" }).raw().toBuffer({ resolveWithObject: true }),
    greyCopy(grey, width, height).resize(THUMB_SIDE, THUMB_SIDE, { fit: "fill" }).raw().toBuffer(),
  ]);
  return {
    phash: hash,
    phashCenter: centerHash,
    thumb: new Uint8Array(thumb.buffer, thumb.byteOffset, THUMB_SIDE * THUMB_SIDE),
    sharpness: Math.round(laplacianVariance(sharpnessCopy.data, sharpnessCopy.info.width, sharpnessCopy.info.height) * 10) / 10,
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

/**
 * The best normalized cross-correlation of two thumbnails shifted against each other by up to a
 * pixel (3 % of the frame) each way, over the inner 30 × 30: a burst neighbour, the camera moved
 * a little, lines up again where the plain correlation falls apart.
 */
export function shiftedThumbCorrelation(a: Uint8Array, b: Uint8Array): number {
  if (a.length < THUMB_SIDE * THUMB_SIDE || b.length < THUMB_SIDE * THUMB_SIDE) return thumbCorrelation(a, b);
  let best = -1;
  for (let dy = -1; dy <= 1; dy++) {
    for (let dx = -1; dx <= 1; dx++) best = Math.max(best, innerCorrelation(a, b, dx, dy));
  }
  return best;
}

/** Correlation of a's inner (THUMB_SIDE - 2)² pixels with b's, b shifted by (dx, dy). */
function innerCorrelation(a: Uint8Array, b: Uint8Array, dx: number, dy: number): number {
  let n = 0;
  let sumA = 0;
  let sumB = 0;
  let sumAA = 0;
  let sumBB = 0;
  let sumAB = 0;
  for (let y = 1; y < THUMB_SIDE - 1; y++) {
    for (let x = 1; x < THUMB_SIDE - 1; x++) {
      const p = a[y * THUMB_SIDE + x]!;
      const q = b[(y + dy) * THUMB_SIDE + x + dx]!;
      n++;
      sumA += p;
      sumB += q;
      sumAA += p * p;
      sumBB += q * q;
      sumAB += p * q;
    }
  }
  const cov = sumAB - (sumA * sumB) / n;
  const varA = sumAA - (sumA * sumA) / n;
  const varB = sumBB - (sumB * sumB) / n;
  return varA > 0 && varB > 0 ? cov / Math.sqrt(varA * varB) : 0;
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
