/**
 * Builds dist/mediabox: one executable with the server, its dependencies, the docs assets and
 * the sqlite-vec extension inside. Run with `npm run build`.
 */
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import type { BunPlugin } from "bun";
import { getLoadablePath } from "sqlite-vec";

const root = resolve(import.meta.dir, "..");

/** Replaces `sqlite-vec` with a module that embeds vec0 and extracts it at run time. */
const embedSqliteVec: BunPlugin = {
  name: "embed-sqlite-vec",
  setup(build) {
    build.onResolve({ filter: /^sqlite-vec$/ }, () => ({ path: "sqlite-vec", namespace: "mediabox-embedded" }));
    build.onLoad({ filter: /^sqlite-vec$/, namespace: "mediabox-embedded" }, () => ({
      loader: "ts",
      contents: `
        import vec0 from ${JSON.stringify(getLoadablePath())} with { type: "file" };
        import { extractNative } from ${JSON.stringify(resolve(root, "src/native/extract.ts"))};
        export function getLoadablePath(): string { return extractNative(vec0, "vec0.so"); }
      `,
    }));
  },
};

const require = createRequire(import.meta.url);
const sharpAddon = require.resolve("@img/sharp-linux-x64/package.json").replace(/package\.json$/, "lib/sharp-linux-x64-0.35.5.node");
const libvipsDir = dirname(require.resolve("@img/sharp-libvips-linux-x64/package.json")) + "/lib";
const libvips = readdirSync(libvipsDir).find((f) => f.startsWith("libvips-cpp.so"))!;

/**
 * Replaces sharp's addon loader (dist/sharp.mjs) with one that unpacks the embedded addon and
 * libvips to the native cache, preloads libvips (so the addon's NEEDED entry resolves by soname,
 * whatever its RPATH says) and loads the addon from there.
 */
const embedSharp: BunPlugin = {
  name: "embed-sharp",
  setup(build) {
    build.onLoad({ filter: /sharp[\\/]dist[\\/]sharp\.mjs$/ }, () => ({
      loader: "ts",
      contents: `
        import { dlopen } from "bun:ffi";
        import addonFile from ${JSON.stringify(sharpAddon)} with { type: "file" };
        import vipsFile from ${JSON.stringify(join(libvipsDir, libvips))} with { type: "file" };
        import { extractNative } from ${JSON.stringify(resolve(root, "src/native/extract.ts"))};
        dlopen(extractNative(vipsFile, ${JSON.stringify(libvips)}), { vips_version: { args: ["int"], returns: "int" } });
        const module = { exports: {} as Record<string, unknown> };
        process.dlopen(module, extractNative(addonFile, "sharp.node"));
        export default module.exports;
      `,
    }));
  },
};

/**
 * Media code that runs outside the main bundle goes beside the binary in dist/mediabox-assets
 * (a compiled binary cannot resolve packages from disk, so each part is pre-bundled into one
 * file with the wasm and model files it reads): the tesseract worker with its wasm cores and the
 * eng language data, and one tfjs runtime (core, wasm backend, layers, Human) with Human's and
 * MobileNetV2's model files.
 */
async function buildAssets(): Promise<void> {
  const target = resolve(root, "dist/mediabox-assets");
  rmSync(target, { recursive: true, force: true });
  const tesseract = join(target, "tesseract");
  const worker = await Bun.build({
    entrypoints: [require.resolve("tesseract.js/src/worker-script/node/index.js")],
    target: "bun",
    outdir: tesseract,
    naming: "tesseract-worker.js",
    minify: true,
  });
  if (!worker.success) throw new AggregateError(worker.logs, "tesseract worker bundle failed");
  const core = dirname(require.resolve("tesseract.js-core/package.json"));
  for (const file of readdirSync(core).filter((f) => f.endsWith("lstm.wasm"))) cpSync(join(core, file), join(tesseract, file));
  cpSync(join(dirname(require.resolve("@tesseract.js-data/eng/package.json")), "4.0.0_best_int"), join(tesseract, "eng"), { recursive: true });

  const vision = join(target, "vision");
  const humanMain = require.resolve("@vladmandic/human");
  const requireFromHuman = createRequire(humanMain);
  const requireFromTfjs = createRequire(require.resolve("@tensorflow/tfjs"));
  const entry = join(vision, "entry.cjs");
  mkdirSync(vision, { recursive: true });
  writeFileSync(
    entry,
    `module.exports = {
      tf: require(${JSON.stringify(requireFromHuman.resolve("@tensorflow/tfjs-core"))}),
      wasm: require(${JSON.stringify(requireFromHuman.resolve("@tensorflow/tfjs-backend-wasm"))}),
      layers: require(${JSON.stringify(requireFromTfjs.resolve("@tensorflow/tfjs-layers"))}),
      human: require(${JSON.stringify(join(dirname(humanMain), "human.node-wasm.js"))}),
    };`,
  );
  const runtime = await Bun.build({ entrypoints: [entry], target: "bun", format: "cjs", outdir: vision, naming: "runtime.js", minify: true });
  rmSync(entry);
  if (!runtime.success) throw new AggregateError(runtime.logs, "vision runtime bundle failed");
  const wasmDir = dirname(requireFromHuman.resolve("@tensorflow/tfjs-backend-wasm"));
  mkdirSync(join(vision, "wasm"), { recursive: true });
  for (const file of readdirSync(wasmDir).filter((f) => f.endsWith(".wasm"))) cpSync(join(wasmDir, file), join(vision, "wasm", file));
  cpSync(join(dirname(humanMain), "..", "models"), join(vision, "human-models"), { recursive: true });
  cpSync(join(dirname(require.resolve("nsfwjs")), "..", "models", "mobilenet_v2"), join(vision, "mobilenet_v2"), { recursive: true });
  console.log("wrote dist/mediabox-assets (tesseract worker and data, tfjs runtime and vision models)");
}

const started = performance.now();
const result = await Bun.build({
  entrypoints: [resolve(root, "src/main.ts")],
  compile: { outfile: resolve(root, "dist/mediabox") },
  minify: true,
  sourcemap: "linked",
  plugins: [embedSqliteVec, embedSharp],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
await buildAssets();
const size = Bun.file(resolve(root, "dist/mediabox")).size;
console.log(`built dist/mediabox (${(size / 1024 ** 2).toFixed(1)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
