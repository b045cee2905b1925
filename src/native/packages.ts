/**
 * Where the media code that runs outside the main bundle is read from: the tesseract worker (a
 * worker thread) with its wasm core and language data, and tfjs/Human/nsfwjs with their model
 * files. In development that is node_modules. The compiled binary cannot resolve packages from
 * disk, so scripts/build.ts pre-bundles those into single files in `mediabox-assets/` beside the
 * executable, with the wasm and model files they read.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** True inside the executable built by `bun build --compile`. */
export const isCompiled = import.meta.url.includes("$bunfs");

export function assetsDir(): string {
  return process.env.MEDIABOX_ASSETS_DIR ?? join(dirname(process.execPath), "mediabox-assets");
}

/** A require() that resolves the media packages from node_modules, or from the assets beside the binary. */
export function packageRequire(): NodeJS.Require {
  return isCompiled ? createRequire(join(assetsDir(), "package.json")) : createRequire(import.meta.url);
}

/** The tesseract worker script and the folder of eng.traineddata.gz. */
export function tesseractPaths(): { workerPath: string; langPath: string } {
  if (isCompiled) {
    const dir = join(assetsDir(), "tesseract");
    return { workerPath: join(dir, "tesseract-worker.js"), langPath: join(dir, "eng") };
  }
  const require = createRequire(import.meta.url);
  return {
    workerPath: require.resolve("tesseract.js/src/worker-script/node/index.js"),
    langPath: join(dirname(require.resolve("@tesseract.js-data/eng/package.json")), "4.0.0_best_int"),
  };
}
