/**
 * HEIC photos (HEVC-coded HEIF, the iPhone default) for the bundled libvips, which has no HEVC
 * decoder: libheif compiled to wasm (heic-decode) decodes the primary image, with the file's
 * rotation and mirroring applied, and the pixels go on as a PNG every later stage reads
 * (variants, OCR, detectors). Used by renderImage, which hands the PNG on. The decode runs on the
 * calling thread (~270 ms for 12 MP here), like the tfjs detectors.
 */
import decodeHeic from "heic-decode";
import sharp, { type Metadata } from "sharp";

/** True for HEIF whose coding libvips cannot decode here (HEVC); AVIF (AV1 in HEIF) is read natively. */
export const isHevcHeif = (meta: Metadata) => meta.format === "heif" && meta.compression === "hevc";

/** libheif decodes to RGBA in wasm memory (4 bytes a pixel): twice a 48 MP phone photo, 400 MB at most. */
export const MAX_HEIC_PIXELS = 100_000_000;

/** A lossless PNG of a HEIC's primary image (RGB when fully opaque); throws with the reason when it cannot be decoded. */
export async function heicToPng(image: Buffer, meta: Metadata): Promise<Buffer> {
  if ((meta.width ?? 0) * (meta.height ?? 0) > MAX_HEIC_PIXELS) throw new Error(`HEIC of ${meta.width}×${meta.height} exceeds the ${MAX_HEIC_PIXELS / 1e6} megapixel limit`);
  let decoded: { width: number; height: number; data: Uint8ClampedArray };
  const libheifSaid = muteLibheifFailures();
  try {
    decoded = await decodeHeic({ buffer: image });
  } catch (err) {
    const why = libheifSaid.at(-1) ?? (err instanceof Error ? err.message : String(err));
    throw new Error(`libheif could not decode the HEIC: ${why}`);
  } finally {
    unmuteLibheifFailures();
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

/**
 * libheif-js reports a failed decode with console.log("Decoding image failed", handle, error),
 * which would land as a multi-line object dump among the server's JSON log lines and tell the
 * caller only "HEIF processing error". While decodes run, those calls are caught and their
 * message kept for the error; every other console.log passes through untouched.
 */
let muted = 0;
let originalLog: typeof console.log = console.log;
const failures: string[] = [];

function muteLibheifFailures(): string[] {
  if (muted++ === 0) {
    originalLog = console.log;
    console.log = (...args: unknown[]) => {
      if (args[0] === "Decoding image failed") {
        const error = args[2] as { message?: unknown } | undefined;
        failures.push(String(error?.message ?? "unknown libheif error").trim());
        return;
      }
      originalLog(...args);
    };
  }
  return failures;
}

function unmuteLibheifFailures(): void {
  if (--muted === 0) {
    console.log = originalLog;
    failures.length = 0;
  }
}
