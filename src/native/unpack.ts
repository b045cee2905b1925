/**
 * Native libraries embedded in the compiled binary cannot be dlopen()ed from its virtual
 * filesystem, and code embedded as plain files cannot be require()d from it. These write
 * embedded files out to a cache directory keyed by their content hash (once; later starts reuse
 * them) and return the real path. Used only by the compiled build (scripts/build.ts).
 */
import { dlopen } from "bun:ffi";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { mkdir, open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";

export function nativeCacheDir(): string {
  if (process.env.MEDIABOX_NATIVE_CACHE) return process.env.MEDIABOX_NATIVE_CACHE;
  const base = process.env.XDG_CACHE_HOME || (homedir() ? join(homedir(), ".cache") : tmpdir());
  return join(base, "mediabox", "native");
}

/**
 * `digest`: the file's content hash as scripts/build.ts computed it (the first 16 hex digits of
 * its SHA-256), so a start whose cache holds the file reads nothing; without it the file is read
 * and hashed here.
 */
export function unpackNative(embeddedPath: string, fileName: string, digest?: string): string {
  let bytes: Buffer | null = null;
  if (!digest) {
    bytes = readFileSync(embeddedPath);
    digest = new Bun.CryptoHasher("sha256").update(bytes).digest("hex").slice(0, 16);
  }
  const dir = join(nativeCacheDir(), digest);
  const target = join(dir, fileName);
  if (existsSync(target)) return target;
  bytes ??= readFileSync(embeddedPath);
  mkdirSync(dir, { recursive: true });
  const partial = `${target}.${process.pid}.tmp`;
  writeFileSync(partial, bytes, { mode: 0o755 });
  renameSync(partial, target);
  return target;
}

/**
 * unpackNative() with asynchronous reads and writes, for files too large to write on the event
 * loop (ffmpeg is 140 MB: written synchronously it held every request for ~0.4 s on a cold
 * binary's first video). Callers share one promise per file so two never write the same partial.
 */
export async function unpackNativeInBackground(embeddedPath: string, fileName: string, digest: string): Promise<string> {
  const dir = join(nativeCacheDir(), digest);
  const target = join(dir, fileName);
  if (existsSync(target)) return target;
  await mkdir(dir, { recursive: true });
  const partial = `${target}.${process.pid}.background.tmp`;
  try {
    await writeFile(partial, await readFile(embeddedPath), { mode: 0o755 });
    await rename(partial, target);
  } catch (err) {
    await rm(partial, { force: true });
    if (!existsSync(target)) throw err;
  }
  return target;
}

/** What scripts/build.ts writes as manifest.json at the top of an embedded directory tree. */
export interface TreeManifest {
  /** Content hash of every file in the tree (with its relative path); names the cache directory. */
  digest: string;
  /** Paths relative to the tree, "/"-separated. */
  files: string[];
}

/** The bytes copied between two turns of the event loop: a few milliseconds of memcpy and write. */
const CHUNK_BYTES = 4 << 20;

/**
 * Where unpackTree() puts an embedded directory tree (one with a manifest.json, see TreeManifest):
 * `<cache>/<digest>/<name>`. Reads only the manifest; the directory may not exist yet.
 */
export function treeTarget(embeddedDir: string, name: string): string {
  const manifest = JSON.parse(readFileSync(join(embeddedDir, "manifest.json"), "utf8")) as TreeManifest;
  return join(nativeCacheDir(), manifest.digest, name);
}

/**
 * Writes an embedded directory tree out to treeTarget() and returns that directory, without
 * holding the event loop: each file is copied a chunk at a time with asynchronous writes (the
 * tree is ~156 MB with models; written in one synchronous go it held a cold binary's every
 * command for seconds on a busy machine). The tree is written beside the target under a name of
 * this process's and renamed into place, so a directory that exists is always complete; a
 * process that loses the race to another one uses the winner's copy.
 */
export async function unpackTree(embeddedDir: string, name: string, progress?: (done: number, total: number) => void): Promise<string> {
  const manifest = JSON.parse(await readFile(join(embeddedDir, "manifest.json"), "utf8")) as TreeManifest;
  const target = join(nativeCacheDir(), manifest.digest, name);
  if (existsSync(target)) return target;
  const partial = `${target}.${process.pid}.tmp`;
  await rm(partial, { recursive: true, force: true });
  try {
    const files = [...manifest.files, "manifest.json"];
    progress?.(0, files.length);
    for (const [i, file] of files.entries()) {
      if (existsSync(target)) break; // another process finished first
      const to = join(partial, file);
      await mkdir(dirname(to), { recursive: true });
      await copyInChunks(join(embeddedDir, file), to);
      progress?.(i + 1, files.length);
    }
    if (!existsSync(target)) await rename(partial, target);
  } catch (err) {
    if (!existsSync(target)) throw err;
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  return target;
}

async function copyInChunks(from: string, to: string): Promise<void> {
  const source = Bun.file(from);
  const out = await open(to, "w");
  try {
    for (let offset = 0; offset < source.size; offset += CHUNK_BYTES) {
      await out.write(await source.slice(offset, offset + CHUNK_BYTES).bytes());
    }
  } finally {
    await out.close();
  }
}

// Handles of preloaded libraries; kept so they stay open for the life of the process.
const preloaded: unknown[] = [];

/**
 * dlopen()s a shared library so that a native addon linked against it (by soname) finds it
 * already resident instead of searching its RPATH. `symbol` must be a function the library
 * exports (bun:ffi only opens a library together with at least one symbol); it is never called.
 */
export function preloadSharedLibrary(path: string, symbol: string): void {
  preloaded.push(dlopen(path, { [symbol]: { args: [], returns: "void" } }));
}
