/**
 * The JPEG XL decoding thread (jxl.ts): libjxl compiled to wasm (@jsquash/jxl) decodes one image
 * at a time here, off the server's event loop (a 12 MP image takes seconds in wasm). The wasm
 * file is imported as a file so the compiled binary embeds it; it is compiled once per thread.
 */
import wasmPath from "@jsquash/jxl/codec/dec/jxl_dec.wasm" with { type: "file" };
import decode, { init } from "@jsquash/jxl/decode.js";
import { readFileSync } from "node:fs";
import { serveRequests } from "../native/worker-thread.ts";
import { lowerThreadPriority } from "../native/thread-priority.ts";
import { errorMessage } from "../errors.ts";

export interface JxlRequest {
  bytes: Uint8Array;
}

export type JxlReply = { width: number; height: number; data: Uint8ClampedArray } | { error: string };

let ready: Promise<unknown> | null = null;

// Background work: the event loop goes first on a busy machine.
lowerThreadPriority();

serveRequests<JxlRequest, JxlReply>(async ({ bytes }) => {
  try {
    // Given the compiled module, the emscripten glue never tries to fetch the wasm by URL.
    ready ??= init(new WebAssembly.Module(readFileSync(wasmPath)));
    await ready;
    const image = await decode(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
    return { reply: { width: image.width, height: image.height, data: image.data }, transfer: [image.data.buffer] };
  } catch (err) {
    return { reply: { error: errorMessage(err) } };
  }
});
