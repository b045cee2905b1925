/**
 * Where the media code that runs outside the main bundle is read from: the tesseract worker (a
 * worker thread) with its wasm core and language data, and tfjs/Human/nsfwjs with their model
 * files. In development that is node_modules.
 *
 * The compiled binary cannot resolve packages from disk, so scripts/build.ts pre-bundles those
 * into single files and embeds them, with the wasm and model files they read, as one directory
 * tree (`/$bunfs/root/mediabox-assets`). Code there must be require()d and run as a worker from
 * a real file, so on first use the tree is written out to the native cache directory, under its
 * content hash, in the background (see assetsReady); later starts of the same build reuse it. pdf.js's worker module
 * and font data, also in the tree, are read in place (import() and fs both see embedded files).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { treeTarget, unpackTree } from "./unpack.ts";

/** True inside the executable built by `bun build --compile`. */
export const isCompiled = import.meta.url.includes("$bunfs");

/** Name of the embedded tree; scripts/build.ts stages it in a directory of this name. */
export const EMBEDDED_ASSETS = "mediabox-assets";

let extracted: string | undefined;
let unpacking: Promise<string> | undefined;
let embeddedModels: string | null | undefined;

const embeddedTree = () => join(import.meta.dir, EMBEDDED_ASSETS);

/**
 * The directory holding `tesseract/`, `vision/`, `text/` and `models/` (layout: scripts/build.ts),
 * once it is on disk: the first call starts writing the embedded tree out in the background
 * (see unpackTree: chunked asynchronous writes, so requests keep being answered), later calls
 * share it. Each consumer awaits this for the part it needs; nothing else waits for it, so CLI
 * commands that need no media code never unpack. Only meaningful in the compiled binary.
 * MEDIABOX_ASSETS_DIR overrides it (for trying out a staged tree). `progress` is told of each
 * file written, when this call is the one that starts the unpack.
 */
export function assetsReady(progress?: (done: number, total: number) => void): Promise<string> {
  if (process.env.MEDIABOX_ASSETS_DIR) return Promise.resolve(process.env.MEDIABOX_ASSETS_DIR);
  if (extracted) return Promise.resolve(extracted);
  if (!existsSync(join(embeddedTree(), "manifest.json"))) {
    return Promise.reject(new Error(`this mediabox binary has no embedded ${EMBEDDED_ASSETS} (looked in ${embeddedTree()}); rebuild it with scripts/build.ts`));
  }
  // A later start of the same build finds its tree at once (unpackTree renames it into place whole).
  const target = treeTarget(embeddedTree(), EMBEDDED_ASSETS);
  if (existsSync(target)) return Promise.resolve((extracted = target));
  unpacking ??= (async () => {
    extracted = await unpackTree(embeddedTree(), EMBEDDED_ASSETS, progress);
    return extracted;
  })();
  // A failed unpack (a full disk) is tried again by the next file that needs it.
  unpacking.catch(() => (unpacking = undefined));
  return unpacking;
}

/** True while the embedded tree is being written out (for GET /readyz). */
export function assetsUnpacking(): boolean {
  return unpacking !== undefined && extracted === undefined;
}

/**
 * The model folders `npm run build` embedded from models/ (with their manifest): where the tree
 * puts them once unpacked (assetsReady), which may not have happened yet; null outside the
 * compiled binary or when it was built without models. Reads only the tree's manifest.
 */
export function embeddedModelsDir(): string | null {
  if (!isCompiled) return null;
  embeddedModels ??= existsSync(join(embeddedTree(), "models", "manifest.json"))
    ? join(process.env.MEDIABOX_ASSETS_DIR ?? treeTarget(embeddedTree(), EMBEDDED_ASSETS), "models")
    : null;
  return embeddedModels;
}

/** Resolves once `modelsDir` can be read: at once, unless it is the embedded models' folder still being unpacked. */
export async function modelsReady(modelsDir: string): Promise<void> {
  if (modelsDir === embeddedModelsDir()) await assetsReady();
}

/**
 * Tells a worker thread of the compiled binary where the thread that started it unpacked the
 * assets: inside a worker's bundle import.meta.dir is the worker's folder, not the binary's root,
 * so assetsReady() could not find the embedded tree from there.
 */
export function adoptAssetsDir(dir: string): void {
  extracted = dir;
}

/** A require() that resolves the media packages from node_modules (development only). */
export function packageRequire(): NodeJS.Require {
  return createRequire(import.meta.url);
}

/** A folder of the embedded assets tree, read in place (fs sees embedded files); compiled binary only. */
export function embeddedAssetsPath(...parts: string[]): string {
  return join(import.meta.dir, EMBEDDED_ASSETS, ...parts);
}

/**
 * pdf.js's standard font data folder, with the trailing slash pdf.js needs. In the compiled binary
 * it is read in place from the embedded tree (pdf.js reads it with fs, which sees embedded files).
 */
export function pdfStandardFontsDir(): string {
  if (isCompiled) return `${join(import.meta.dir, EMBEDDED_ASSETS, "pdfjs", "standard_fonts")}/`;
  return `${join(dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json")), "standard_fonts")}/`;
}

/**
 * pdf.js's worker module, which pdf.js imports to run its "fake" (in-process) worker. Only the
 * compiled binary asks (scripts/build.ts points pdf.js here); import() reads embedded modules.
 */
export function pdfWorkerPath(): string {
  return join(import.meta.dir, EMBEDDED_ASSETS, "pdfjs", "pdf.worker.mjs");
}

/** The tesseract worker script and the folder of eng.traineddata.gz. */
export async function tesseractPaths(): Promise<{ workerPath: string; langPath: string }> {
  if (isCompiled) {
    const dir = join(await assetsReady(), "tesseract");
    return { workerPath: join(dir, "tesseract-worker.js"), langPath: join(dir, "eng") };
  }
  const require = createRequire(import.meta.url);
  return {
    workerPath: require.resolve("tesseract.js/src/worker-script/node/index.js"),
    langPath: join(dirname(require.resolve("@tesseract.js-data/eng/package.json")), "4.0.0_best_int"),
  };
}

/**
 * What to pass to `new Worker()` for a worker entry point, given as its path under src/. In the
 * compiled binary scripts/build.ts embeds each worker as an entry point of its own, which lands
 * at that path (as .js) under the binary's root, not beside the module that starts it.
 */
export function workerEntry(pathUnderSrc: string): string {
  if (isCompiled) return join(import.meta.dir, pathUnderSrc.replace(/\.ts$/, ".js"));
  return join(import.meta.dir, "..", pathUnderSrc);
}
