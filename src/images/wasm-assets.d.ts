// wasm files imported with `with { type: "file" }` resolve to a path (embedded in the compiled binary).
declare module "*.wasm" {
  const path: string;
  export default path;
}

// libraw-wasm's emscripten module (its package types cover only the Web Worker wrapper).
declare module "libraw-wasm/dist/libraw.js" {
  const createLibRaw: (options: { wasmBinary: Uint8Array }) => Promise<{ LibRaw: new () => import("./raw-decode-worker.ts").LibRawInstance }>;
  export default createLibRaw;
}
