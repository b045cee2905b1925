/**
 * Native libraries embedded in the compiled binary cannot be dlopen()ed from its virtual
 * filesystem. This writes one out to a cache directory keyed by its content hash (once; later
 * starts reuse it) and returns the real path. Used only by the compiled build (scripts/build.ts).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

export function nativeCacheDir(): string {
  if (process.env.MEDIABOX_NATIVE_CACHE) return process.env.MEDIABOX_NATIVE_CACHE;
  const base = process.env.XDG_CACHE_HOME || (homedir() ? join(homedir(), ".cache") : tmpdir());
  return join(base, "mediabox", "native");
}

export function extractNative(embeddedPath: string, fileName: string): string {
  const bytes = readFileSync(embeddedPath);
  const digest = new Bun.CryptoHasher("sha256").update(bytes).digest("hex").slice(0, 16);
  const dir = join(nativeCacheDir(), digest);
  const target = join(dir, fileName);
  if (existsSync(target)) return target;
  mkdirSync(dir, { recursive: true });
  const partial = `${target}.${process.pid}.tmp`;
  writeFileSync(partial, bytes, { mode: 0o755 });
  renameSync(partial, target);
  return target;
}
