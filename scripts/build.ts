/**
 * Builds dist/mediabox: one executable with the server, its dependencies, the docs assets and
 * the sqlite-vec extension inside. Run with `npm run build`.
 */
import { resolve } from "node:path";
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

const started = performance.now();
const result = await Bun.build({
  entrypoints: [resolve(root, "src/main.ts")],
  compile: { outfile: resolve(root, "dist/mediabox") },
  minify: true,
  sourcemap: "linked",
  plugins: [embedSqliteVec],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
const size = Bun.file(resolve(root, "dist/mediabox")).size;
console.log(`built dist/mediabox (${(size / 1024 ** 2).toFixed(1)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
