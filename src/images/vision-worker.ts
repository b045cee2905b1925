/**
 * Worker thread entry that runs the TensorFlow.js vision models (vision-tfjs.ts: CenterNet
 * objects, BlazeFace faces with the tiled second look, faceres face descriptors, MobileNetV2
 * features) off the event loop.
 * Their wasm inference is synchronous, hundreds of milliseconds an image: on the main thread it
 * stalled every request and ran one image at a time whatever the cores (vision-threads.ts runs
 * one such thread per core). Models load on the first request of each thread.
 */
import { serveRequests } from "../native/worker-thread.ts";
import { lowerThreadPriority } from "../native/thread-priority.ts";
import { adoptAssetsDir } from "../native/packages.ts";
import { detectFaceDescriptors, mobileNetDimension, mobileNetFeatures, type FaceDescriptor } from "./vision-tfjs.ts";
import { detectWithTiles, type TiledDetections } from "./vision-tiles.ts";

export type VisionRequest = (
  | { op: "detect"; rgb: Uint8Array; width: number; height: number; tiles: boolean; recognize: boolean }
  | { op: "features"; rgb: Uint8Array }
  | { op: "faces"; rgb: Uint8Array; width: number; height: number }
  | { op: "dimension" }
) & {
  /** The compiled binary's unpacked assets (the models' files), null in development. */
  assets: string | null;
};

export type VisionReply = { detections: TiledDetections } | { vector: Float32Array } | { faces: FaceDescriptor[] } | { dimension: number } | { error: string };

// Background work: the event loop that feeds this thread (and answers requests) goes first on a busy machine.
lowerThreadPriority();

serveRequests<VisionRequest, VisionReply>(async (request) => {
  try {
    if (request.assets) adoptAssetsDir(request.assets);
    if (request.op === "detect") return { reply: { detections: await detectWithTiles(request.rgb, request.width, request.height, { tiles: request.tiles, recognize: request.recognize }) } };
    if (request.op === "faces") return { reply: { faces: await detectFaceDescriptors(request.rgb, request.width, request.height) } };
    if (request.op === "features") {
      const vector = await mobileNetFeatures(request.rgb);
      return { reply: { vector }, transfer: [vector.buffer as ArrayBuffer] };
    }
    return { reply: { dimension: await mobileNetDimension() } };
  } catch (err) {
    return { reply: { error: err instanceof Error ? err.message : String(err) } };
  }
});
