/**
 * HEIC photos (HEVC-coded HEIF, the iPhone default) for the bundled libvips, which has no HEVC
 * decoder: libheif compiled to wasm (heic-decode) decodes the primary image, with the file's
 * rotation and mirroring applied, and the pixels go on as a PNG every later stage reads
 * (variants, OCR, detectors). Everything else passes through untouched. The decode runs on the
 * calling thread (~270 ms for 12 MP here), like the tfjs detectors.
 */
import decodeHeic from "heic-decode";
import sharp, { type Metadata } from "sharp";

/** True for HEIF whose coding libvips cannot decode here (HEVC); AVIF (AV1 in HEIF) is read natively. */
export const isHevcHeif = (meta: Metadata) => meta.format === "heif" && meta.compression === "hevc";

/** `image` itself, or for HEVC HEIF the PNG of heicToPng. */
export async function sharpReadable(image: Buffer): Promise<Buffer> {
  const meta = await sharp(image).metadata().catch(() => null); // unreadable: the caller reports it
  return meta && isHevcHeif(meta) ? heicToPng(image) : image;
}

/**
 * A lossless PNG of a HEIC's primary image (RGB when fully opaque). A HEIC that libheif cannot
 * decode either is returned unchanged, so the caller's decode fails with sharp's message.
 */
export async function heicToPng(image: Buffer): Promise<Buffer> {
  let decoded: { width: number; height: number; data: Uint8ClampedArray };
  try {
    decoded = await decodeHeic({ buffer: image });
  } catch {
    return image;
  }
  const { width, height, data } = decoded;
  let opaque = true;
  for (let i = 3; i < data.length; i += 4) {
    if (data[i] !== 255) {
      opaque = false;
      break;
    }
  }
  let pixels = sharp(Buffer.from(data.buffer, data.byteOffset, data.byteLength), { raw: { width, height, channels: 4 } });
  if (opaque) pixels = pixels.removeAlpha();
  // Fast compression: the PNG lives only for this processing run.
  return pixels.png({ compressionLevel: 1 }).toBuffer();
}
