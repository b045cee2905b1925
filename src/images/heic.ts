/**
 * HEIC photos (HEVC-coded HEIF, the iPhone default) for the bundled libvips, which has no HEVC
 * decoder: libheif compiled to wasm (heic-decode) decodes the primary image, with the file's
 * rotation and mirroring applied, and the pixels go on as a PNG every later stage reads
 * (variants, OCR, detectors). Used by renderImage, which hands the PNG on. The decode (~270 ms
 * for 12 MP here) runs on a thread of its own (heic-worker.ts), off the server's event loop.
 */
import sharp, { type Metadata } from "sharp";
import { workerEntry } from "../native/packages.ts";
import type { HeicReply, HeicRequest } from "./heic-worker.ts";

/** True for HEIF whose coding libvips cannot decode here (HEVC); AVIF (AV1 in HEIF) is read natively. */
export const isHevcHeif = (meta: Metadata) => meta.format === "heif" && meta.compression === "hevc";

/** libheif decodes to RGBA in wasm memory (4 bytes a pixel): twice a 48 MP phone photo, 400 MB at most. */
export const MAX_HEIC_PIXELS = 100_000_000;

/** A lossless PNG of a HEIC's primary image (RGB when fully opaque); throws with the reason when it cannot be decoded. */
export async function heicToPng(image: Buffer, meta: Metadata): Promise<Buffer> {
  if ((meta.width ?? 0) * (meta.height ?? 0) > MAX_HEIC_PIXELS) throw new Error(`HEIC of ${meta.width}×${meta.height} exceeds the ${MAX_HEIC_PIXELS / 1e6} megapixel limit`);
  const reply = await decoder().decode(image);
  if ("error" in reply) throw new Error(`libheif could not decode the HEIC: ${reply.error}`);
  const { width, height, data } = reply;
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

/** The decoding thread, started on first use and replaced if it dies. */
class HeicDecoder {
  private readonly worker = new Worker(workerEntry("images/heic-worker.ts"));
  private readonly waiting = new Map<number, (reply: HeicReply) => void>();
  private requests = 0;
  broken = false;

  constructor() {
    (this.worker as Worker & { unref(): void }).unref(); // Bun's Worker has unref: an idle thread never keeps the process alive
    this.worker.onmessage = (event: MessageEvent<HeicReply>) => {
      this.waiting.get(event.data.id)?.(event.data);
      this.waiting.delete(event.data.id);
    };
    this.worker.onerror = (event: ErrorEvent) => {
      this.broken = true;
      for (const [id, settle] of this.waiting) settle({ id, error: `the decoding thread failed: ${event.message}` });
      this.waiting.clear();
    };
  }

  decode(bytes: Uint8Array): Promise<HeicReply> {
    const id = ++this.requests;
    return new Promise((settle) => {
      this.waiting.set(id, settle);
      this.worker.postMessage({ id, bytes } satisfies HeicRequest);
    });
  }
}

let current: HeicDecoder | null = null;
const decoder = () => (current && !current.broken ? current : (current = new HeicDecoder()));
