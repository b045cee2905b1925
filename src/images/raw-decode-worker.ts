/**
 * The camera RAW decoding thread (raw-decode.ts): LibRaw compiled to wasm (libraw-wasm) develops
 * one RAW at a time here, off the server's event loop (demosaicing a 24 MP sensor takes seconds
 * in wasm). The wasm file is imported as a file so the compiled binary embeds it; the module is
 * instantiated once per thread. libraw-wasm's own entry starts a Web Worker by URL, which the
 * compiled binary cannot resolve, so its emscripten module is driven here directly.
 */
import wasmPath from "libraw-wasm/dist/libraw.wasm" with { type: "file" };
import createLibRaw from "libraw-wasm/dist/libraw.js";
import { readFileSync } from "node:fs";
import { serveRequests } from "../native/worker-thread.ts";
import { lowerThreadPriority } from "../native/thread-priority.ts";
import { errorMessage } from "../errors.ts";

export interface RawDecodeRequest {
  bytes: Uint8Array;
  /** Develop at half size (LibRaw's -h: no demosaicing, four times faster). */
  halfSize: boolean;
}

/** 8-bit RGB, developed with the camera's white balance and turned by the RAW's orientation. */
export type RawDecodeReply = { width: number; height: number; data: Uint8Array } | { error: string };

export interface LibRawInstance {
  open(bytes: Uint8Array, settings: Record<string, unknown>): unknown;
  imageData(): { width: number; height: number; colors: number; bits: number; data: Uint8Array } | undefined;
}

// One LibRaw per thread, reused: each open() recycles what the previous file held.
let libraw: Promise<LibRawInstance> | null = null;

// Background work: the event loop goes first on a busy machine.
lowerThreadPriority();

serveRequests<RawDecodeRequest, RawDecodeReply>(async ({ bytes, halfSize }) => {
  try {
    // Given the wasm's bytes, the emscripten glue never tries to fetch it by URL.
    libraw ??= createLibRaw({ wasmBinary: readFileSync(wasmPath) }).then((m) => new m.LibRaw());
    const decoder = await libraw;
    decoder.open(bytes, { halfSize, useCameraWb: true, outputBps: 8, outputColor: 1 });
    const image = decoder.imageData();
    if (!image?.data || image.colors !== 3 || image.bits !== 8) throw new Error(`LibRaw gave no 8-bit RGB image (${image ? `${image.colors} colours, ${image.bits} bits` : "nothing"})`);
    const data = new Uint8Array(image.data); // out of the wasm heap, to be transferred
    return { reply: { width: image.width, height: image.height, data }, transfer: [data.buffer] };
  } catch (err) {
    return { reply: { error: libRawFailure(err) } };
  }
});

/**
 * LibRaw's own failures arrive as emscripten's C++ exception objects ({excPtr}), which carry no
 * message this build can read (it said "[object Object]"): LibRaw throws them when the sensor
 * data ends early or needs more memory than the thread may take.
 */
export function libRawFailure(err: unknown): string {
  if (err && typeof err === "object" && "excPtr" in err) return "LibRaw stopped inside its decoder (the sensor data is truncated, damaged or larger than it can hold)";
  return errorMessage(err);
}
