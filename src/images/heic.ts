/**
 * HEIC photos (HEVC-coded HEIF, the iPhone default) for the bundled libvips, which has no HEVC
 * decoder: libheif compiled to wasm (heic-decode) decodes the primary image, with the file's
 * rotation and mirroring applied, and the RGBA pixels go to open-image.ts, which renders every
 * variant (and OCR's bounded copy) from them: the HEIC is decoded once per processing run. The
 * decode runs on a thread of its own (heic-worker.ts), off the server's event loop; libheif in
 * wasm is single-threaded (docs/images.md has the measured times).
 */
import sharp, { type Metadata } from "sharp";
import { WorkerThread } from "../native/worker-thread.ts";
import type { HeicReply, HeicRequest } from "./heic-worker.ts";

/** True for HEIF whose coding libvips cannot decode here (HEVC); AVIF (AV1 in HEIF) is read natively. */
export const isHevcHeif = (meta: Metadata) => meta.format === "heif" && meta.compression === "hevc";

/** libheif decodes to RGBA in wasm memory (4 bytes a pixel): twice a 48 MP phone photo, 400 MB at most. */
const MAX_HEIC_PIXELS = 100_000_000;

/** RGBA pixels of a HEIC's primary image, upright; throws with the reason when it cannot be decoded. */
export async function decodeHeic(image: Buffer): Promise<{ width: number; height: number; data: Uint8ClampedArray }> {
  const meta = await sharp(image, { limitInputPixels: false }).metadata();
  if ((meta.width ?? 0) * (meta.height ?? 0) > MAX_HEIC_PIXELS) throw new Error(`HEIC of ${meta.width}×${meta.height} exceeds the ${MAX_HEIC_PIXELS / 1e6} megapixel limit`);
  const reply = await decoder().ask({ bytes: image });
  if (reply instanceof Error || "error" in reply) throw new Error(`libheif could not decode the HEIC: ${reply instanceof Error ? reply.message : reply.error}`);
  return reply;
}

let thread: WorkerThread<HeicRequest, HeicReply> | null = null;
/** The decoding thread, started on first use and replaced if it died. */
const decoder = () => (thread && !thread.broken ? thread : (thread = new WorkerThread<HeicRequest, HeicReply>("images/heic-worker.ts", "the HEIC decoding thread")));
