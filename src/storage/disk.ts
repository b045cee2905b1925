/**
 * Durable local-disk writes: stream to a temporary file while hashing, fsync it, rename it into
 * place and fsync the directory, so a file that was reported written survives a kill -9 or a
 * power cut, and a crash mid-write leaves only a temporary file that startup sweeps away.
 */
import { mkdirSync } from "node:fs";
import { open, rename, rm, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";

export class SizeLimitError extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes`);
    this.name = "SizeLimitError";
  }
}

export interface WrittenFile {
  size: number;
  sha256: string;
  md5: string | null;
  /** The first bytes (up to headBytes), for type detection. */
  head: Uint8Array;
}

export interface WriteOptions {
  maxBytes?: number;
  md5?: boolean;
  headBytes?: number;
  /** Called before the file is committed; throwing discards it (writeStreamAtomically only). */
  verify?: (written: WrittenFile) => void;
}

export const HEAD_BYTES = 64 * 1024;

export async function fsyncDir(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Coalesces the small chunks a request body arrives in (often 16-64 KiB) into 1 MiB writes:
 * one syscall per MiB instead of dozens measurably speeds up streaming uploads.
 */
class WriteBuffer {
  private readonly buffer = new Uint8Array(1024 * 1024);
  private used = 0;
  constructor(private readonly handle: FileHandle) {}

  async push(chunk: Uint8Array): Promise<void> {
    let at = 0;
    while (at < chunk.byteLength) {
      const take = Math.min(chunk.byteLength - at, this.buffer.byteLength - this.used);
      this.buffer.set(chunk.subarray(at, at + take), this.used);
      this.used += take;
      at += take;
      if (this.used === this.buffer.byteLength) await this.flush();
    }
  }

  async flush(): Promise<void> {
    let offset = 0;
    while (offset < this.used) {
      const { bytesWritten } = await this.handle.write(this.buffer, offset, this.used - offset);
      offset += bytesWritten;
    }
    this.used = 0;
  }
}

/** Writes `source` to `path` (which must not be read until this resolves). Deletes it on failure. */
export async function writeStream(source: AsyncIterable<Uint8Array>, path: string, options: WriteOptions = {}): Promise<WrittenFile> {
  mkdirSync(dirname(path), { recursive: true });
  const sha = new Bun.CryptoHasher("sha256");
  const md5 = options.md5 ? new Bun.CryptoHasher("md5") : null;
  const headLimit = options.headBytes ?? HEAD_BYTES;
  const headChunks: Uint8Array[] = [];
  let headSize = 0;
  let size = 0;
  const handle = await open(path, "w", 0o640);
  const buffer = new WriteBuffer(handle);
  try {
    for await (const chunk of source) {
      size += chunk.byteLength;
      if (options.maxBytes !== undefined && size > options.maxBytes) throw new SizeLimitError(options.maxBytes);
      if (headSize < headLimit) {
        const take = chunk.subarray(0, headLimit - headSize);
        headChunks.push(take.slice());
        headSize += take.byteLength;
      }
      sha.update(chunk);
      md5?.update(chunk);
      await buffer.push(chunk);
    }
    await buffer.flush();
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => {});
    await rm(path, { force: true });
    throw err;
  }
  await handle.close();
  const head = new Uint8Array(headSize);
  let at = 0;
  for (const c of headChunks) {
    head.set(c, at);
    at += c.byteLength;
  }
  return { size, sha256: sha.digest("hex"), md5: md5 ? md5.digest("hex") : null, head };
}

/** Atomically replaces `dest` with `tmp` (same filesystem) and makes the rename durable. */
export async function commitFile(tmp: string, dest: string): Promise<void> {
  mkdirSync(dirname(dest), { recursive: true });
  await rename(tmp, dest);
  await fsyncDir(dirname(dest));
}

/** Writes a stream durably to `dest` through a temporary file in `tmpDir`. */
export async function writeStreamAtomically(
  source: AsyncIterable<Uint8Array>,
  dest: string,
  tmpDir: string,
  options: WriteOptions = {},
): Promise<WrittenFile> {
  const tmp = join(tmpDir, `${crypto.randomUUID()}.part`);
  const written = await writeStream(source, tmp, options);
  try {
    // A refused write must leave whatever was at `dest` before untouched.
    options.verify?.(written);
    await commitFile(tmp, dest);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return written;
}

/** Reads the first `bytes` of a file (fewer if it is shorter). */
export async function readHead(path: string, bytes: number): Promise<Uint8Array> {
  const handle = await open(path, "r");
  try {
    const buffer = new Uint8Array(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Writes `source` into an existing file at `offset`, exactly `length` bytes, then fsyncs. More
 * bytes than `length` throw SizeLimitError before anything past the range is written; fewer
 * throw ShortWriteError. Used for multipart parts written straight into their final place.
 */
export async function writeRange(
  source: AsyncIterable<Uint8Array>,
  path: string,
  offset: number,
  length: number,
): Promise<{ size: number; md5: string }> {
  const md5 = new Bun.CryptoHasher("md5");
  let size = 0;
  const handle = await open(path, "r+");
  try {
    for await (const chunk of source) {
      if (size + chunk.byteLength > length) throw new SizeLimitError(length);
      md5.update(chunk);
      let done = 0;
      while (done < chunk.byteLength) {
        const { bytesWritten } = await handle.write(chunk, done, chunk.byteLength - done, offset + size + done);
        done += bytesWritten;
      }
      size += chunk.byteLength;
    }
    if (size !== length) throw new ShortWriteError(length, size);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { size, md5: md5.digest("hex") };
}

export class ShortWriteError extends Error {
  constructor(
    readonly expected: number,
    readonly received: number,
  ) {
    super(`expected ${expected} bytes, received ${received}`);
    this.name = "ShortWriteError";
  }
}
