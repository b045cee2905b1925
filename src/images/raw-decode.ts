/**
 * Developing a camera RAW's sensor data, for RAWs whose embedded previews are too small for the
 * variants (or missing): LibRaw compiled to wasm (libraw-wasm) demosaics with the camera's white
 * balance into sRGB, turned by the RAW's orientation, on a thread of its own
 * (raw-decode-worker.ts). RAWs with a large enough preview keep being rendered from it (a JPEG
 * decodes in milliseconds; developing takes seconds).
 */
import sharp from "sharp";
import { WorkerThread } from "../native/worker-thread.ts";
import type { RawDecodeReply, RawDecodeRequest } from "./raw-decode-worker.ts";

/**
 * Sensors whose half size is at least this long are developed at half size (LibRaw's -h: each
 * 2 × 2 block of the colour filter becomes one pixel, no demosaicing, about four times faster):
 * half of a 24 MP sensor is 3000 px, more than any variant (1024) or OCR's copy (2500) uses.
 */
const HALF_SIZE_FROM = 2500;
/** Sensor pixels a RAW's byte can hold at most (lossy DNGs: about 3). */
const MIN_PIXELS_PER_BYTE = 16;

/** Upright RGBA pixels of the developed RAW; throws with the reason when LibRaw cannot develop it. */
export async function developRaw(bytes: Buffer, sensor: { width: number; height: number }): Promise<{ width: number; height: number; data: Buffer }> {
  // Even lossy-compressed RAWs keep a third of a byte a pixel; metadata samples with the sensor
  // data stripped would otherwise be "developed" to seconds of black.
  if (bytes.byteLength < (sensor.width * sensor.height) / MIN_PIXELS_PER_BYTE) throw new Error(`the file (${bytes.byteLength} bytes) is too small to hold a ${sensor.width}×${sensor.height} sensor image`);
  const halfSize = Math.max(sensor.width, sensor.height) / 2 >= HALF_SIZE_FROM;
  const reply = await developer().ask({ bytes, halfSize });
  if (reply instanceof Error || "error" in reply) throw new Error(`LibRaw could not develop the RAW: ${reply instanceof Error ? reply.message : reply.error}`);
  const { width, height, data } = reply;
  const rgb = sharp(data, { raw: { width, height, channels: 3 } });
  // A RAW whose sensor data was stripped (metadata samples, damaged copies) develops to black.
  const { channels } = await rgb.stats();
  if (channels.every((c) => c.max <= 2)) throw new Error("LibRaw developed an empty (black) image: the sensor data is missing");
  return { width, height, data: await rgb.ensureAlpha().raw().toBuffer() };
}

let thread: WorkerThread<RawDecodeRequest, RawDecodeReply> | null = null;
/** The developing thread, started on first use and replaced if it died. */
const developer = () => (thread && !thread.broken ? thread : (thread = new WorkerThread<RawDecodeRequest, RawDecodeReply>("images/raw-decode-worker.ts", "the RAW developing thread")));
