/**
 * An object as a file on this machine, for tools that read a path (ffmpeg seeks through a video;
 * it cannot take a stream). The local store's object is used in place; any other store's is
 * copied into a scratch directory that release() removes.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { BlobStore } from "./blob-store.ts";

export interface ObjectOnDisk {
  path: string;
  /** Removes the scratch copy, if one was made. Idempotent. */
  release(): void;
}

/** Null when the object does not exist. */
export async function objectOnDisk(blobs: BlobStore, key: string, scratchDir: string): Promise<ObjectOnDisk | null> {
  const local = blobs.localFiles();
  if (local) {
    const path = local.pathOf(key);
    return (await Bun.file(path).exists()) ? { path, release() {} } : null;
  }
  const stream = await blobs.read(key);
  if (!stream) return null;
  const dir = join(scratchDir, `object-${crypto.randomUUID()}`);
  mkdirSync(dir, { recursive: true });
  const release = () => rmSync(dir, { recursive: true, force: true });
  try {
    const path = join(dir, "object");
    await Bun.write(path, new Response(stream));
    return { path, release };
  } catch (err) {
    release();
    throw err;
  }
}
