/**
 * The durable writer behind every upload: chunks of any size come out as the same bytes on disk
 * with the right SHA-256/MD5, whether the batches are hashed and written on a hashing thread or
 * (before the threads answer) on the caller's own.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { openDirect, SizeLimitError, writeRange, writeStream } from "../src/storage/disk.ts";
import { BATCH_BYTES, ChunkedFileWriter, FIRST_BUFFER_BYTES, MAX_BUFFERS, spareBufferCount } from "../src/storage/file-writer.ts";
import { digestFileOffThread, startHashThreads, ThreadedHash } from "../src/storage/hash-threads.ts";
import { tempDir } from "./support/server.ts";

const dir = tempDir("mediabox-writer-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Random bytes cut into uneven chunks (1 byte to ~700 KB), as a request body arrives. */
function chunked(size: number): { bytes: Uint8Array; chunks: Uint8Array[] } {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 65536) crypto.getRandomValues(bytes.subarray(i, Math.min(size, i + 65536)));
  const chunks: Uint8Array[] = [];
  for (let at = 0, n = 0; at < size; n++) {
    const take = Math.min(size - at, [1, 65536, 700_001, 4093, 1024 * 1024][n % 5]!);
    chunks.push(bytes.slice(at, at + take));
    at += take;
  }
  return { bytes, chunks };
}

async function* from(chunks: Uint8Array[]): AsyncIterable<Uint8Array> {
  yield* chunks;
}

/** Whether this O_DIRECT descriptor refuses a write at an unaligned position (probed past the end of the test's bytes). */
function refusesUnaligned(fd: number): boolean {
  try {
    writeSync(fd, new Uint8Array(4096), 0, 4096, 1 << 20 | 100);
    return false;
  } catch (err) {
    return (err as { code?: string }).code === "EINVAL";
  }
}

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
const md5 = (bytes: Uint8Array) => new Bun.CryptoHasher("md5").update(bytes).digest("hex");

test("a file written through the hashing threads has its bytes, SHA-256, MD5 and head", async () => {
  expect(await startHashThreads()).toBeGreaterThan(0);
  // Several files at once: each keeps its own hash state on its thread.
  const files = [chunked(9 * 1024 * 1024 + 17), chunked(3 * 1024 * 1024), chunked(5)];
  const written = await Promise.all(files.map((f, i) => writeStream(from(f.chunks), join(dir, `f${i}`), { md5: true, headBytes: 1000 })));
  for (const [i, f] of files.entries()) {
    expect(written[i]!.size).toBe(f.bytes.length);
    expect(written[i]!.sha256).toBe(sha256(f.bytes));
    expect(written[i]!.md5).toBe(md5(f.bytes));
    expect(written[i]!.head).toEqual(f.bytes.subarray(0, 1000));
    expect(readFileSync(join(dir, `f${i}`)).equals(f.bytes)).toBe(true);
  }
});

test("a range written through the hashing threads lands at its offset with its MD5", async () => {
  expect(await startHashThreads()).toBeGreaterThan(0);
  const path = join(dir, "ranged");
  writeFileSync(path, new Uint8Array(4 * 1024 * 1024 + 100));
  const part = chunked(2 * 1024 * 1024 + 50);
  const result = await writeRange(from(part.chunks), path, 2 * 1024 * 1024 + 50, part.bytes.length);
  expect(result).toEqual({ size: part.bytes.length, md5: md5(part.bytes) });
  expect(readFileSync(path).subarray(2 * 1024 * 1024 + 50).equals(part.bytes)).toBe(true);
});

test("a file over its limit is refused and removed", async () => {
  const big = chunked(3 * 1024 * 1024);
  const path = join(dir, "too-big");
  await expect(writeStream(from(big.chunks), path, { maxBytes: 2 * 1024 * 1024 })).rejects.toBeInstanceOf(SizeLimitError);
  expect(await Bun.file(path).exists()).toBe(false);
});

test("a write the disk refuses fails the file on the hashing thread that writes it, and leaves no buffer waiting", async () => {
  expect(await startHashThreads()).toBeGreaterThan(0);
  const path = join(dir, "read-only");
  writeFileSync(path, "");
  // A handle opened for reading: every positioned write is EBADF, as a failing disk's would be an error.
  const handle = await open(path, "r");
  const writer = new ChunkedFileWriter(handle, { md5: true });
  const big = chunked(5 * 1024 * 1024);
  const outcome = (async () => {
    for (const chunk of big.chunks) await writer.push(chunk);
    return writer.flush();
  })();
  await expect(outcome).rejects.toThrow();
  await writer.settle();
  await handle.close();
});

test("full buffers go through an O_DIRECT handle and the tail through the buffered one: the same bytes and hashes", async () => {
  expect(await startHashThreads()).toBeGreaterThan(0);
  const path = join(dir, "direct");
  const handle = await open(path, "w");
  const direct = await openDirect(path);
  const file = chunked(3 * BATCH_BYTES + 4097);
  const writer = new ChunkedFileWriter(handle, { md5: true, direct });
  for (const chunk of file.chunks) await writer.push(chunk);
  const written = await writer.flush();
  await handle.sync();
  await direct?.close();
  await handle.close();
  expect(written.sha256).toBe(sha256(file.bytes));
  expect(written.md5).toBe(md5(file.bytes));
  expect(readFileSync(path).equals(file.bytes)).toBe(true);
});

test("a direct write the file system refuses (EINVAL) is written through the buffered handle on the hashing thread", async () => {
  expect(await startHashThreads()).toBeGreaterThan(0);
  const path = join(dir, "direct-refused");
  const handle = await open(path, "w");
  const direct = await openDirect(path);
  const hash = ThreadedHash.open({ sha256: true, md5: false })!;
  const expected = direct !== null && refusesUnaligned(direct.fd);
  await handle.truncate(0);
  const bytes = chunked(8192).bytes;
  // A position that is not a multiple of the block size: O_DIRECT on ext4/xfs answers EINVAL (tmpfs takes it).
  const { buffer, directRefused } = await hash.batch(bytes.slice(), bytes.length, handle.fd, 100, direct?.fd ?? -1);
  expect(buffer.byteLength).toBe(8192);
  expect(directRefused).toBe(expected);
  expect((await hash.digest()).sha256).toBe(sha256(bytes));
  await direct?.close();
  await handle.close();
  expect(readFileSync(path).subarray(100).equals(bytes)).toBe(true);
});

test("without a hashing thread, a direct handle that refuses a write (EINVAL) hands every batch to the buffered one", async () => {
  const path = join(dir, "direct-refused-here");
  const handle = await open(path, "w");
  let refused = 0;
  // What a file system without O_DIRECT for this file answers to a direct write.
  const direct = {
    fd: -1,
    write: async () => {
      refused++;
      throw Object.assign(new Error("EINVAL: invalid argument, write"), { code: "EINVAL" });
    },
  } as unknown as Awaited<ReturnType<typeof open>>;
  const file = chunked(8 * BATCH_BYTES);
  const writer = new ChunkedFileWriter(handle, { sha256: false, direct });
  for (const chunk of file.chunks) await writer.push(chunk);
  await writer.flush();
  await handle.close();
  // Only the writes already under way when the first refusal came back tried the direct handle.
  expect(refused).toBeGreaterThanOrEqual(1);
  expect(refused).toBeLessThan(MAX_BUFFERS);
  expect(readFileSync(path).equals(file.bytes)).toBe(true);
});

test("ranges of a file are hashed on the hashing thread, read back past the page cache where aligned, whatever their length", async () => {
  expect(await startHashThreads()).toBeGreaterThan(0);
  const path = join(dir, "ranges");
  const file = chunked(9 * 1024 * 1024 + 4097);
  writeFileSync(path, file.bytes);
  // Aligned offsets (read with O_DIRECT where the file system allows it) and unaligned ones (through the page cache); lengths not multiples of a block.
  for (const [offset, length] of [
    [0, file.bytes.length],
    [4096, 4 * 1024 * 1024 + 1],
    [5 * 1024 * 1024, 4 * 1024 * 1024 + 4097],
    [100, 8 * 1024 * 1024],
    [0, 0],
  ] as const) {
    const hash = ThreadedHash.open({ sha256: true, md5: false })!;
    await hash.range(path, offset, length);
    expect((await hash.digest()).sha256).toBe(sha256(file.bytes.subarray(offset, offset + length)));
  }
  expect(await digestFileOffThread(path)).toEqual({ sha256: sha256(file.bytes), size: file.bytes.length });
  const past = ThreadedHash.open({ sha256: true, md5: false })!;
  await expect(past.range(path, file.bytes.length - 10, 20)).rejects.toThrow("ended at");
  past.drop();
});

test("writers reuse each other's buffers and a small file takes none: the bytes stay each file's own", async () => {
  await writeStream(from([new Uint8Array(10)]), join(dir, "warm"));
  const spare = spareBufferCount();
  expect(spare).toBeGreaterThan(0);
  // Files of different lengths through the same buffers: a reused buffer's old bytes never leak.
  const files = [chunked(3 * BATCH_BYTES + 5), chunked(700), chunked(BATCH_BYTES), chunked(12)];
  for (const [i, f] of files.entries()) {
    const written = await writeStream(from(f.chunks), join(dir, `reuse${i}`));
    expect(written.sha256).toBe(sha256(f.bytes));
    expect(readFileSync(join(dir, `reuse${i}`)).equals(f.bytes)).toBe(true);
    // Every buffer came back: none left behind by the writer, none lost.
    expect(spareBufferCount()).toBeGreaterThanOrEqual(spare);
  }
  const handle = await open(join(dir, "taker"), "w");
  const before = spareBufferCount();
  const writer = new ChunkedFileWriter(handle);
  // A small first buffer of its own: a batch of small files holds no full-size buffers.
  expect(spareBufferCount()).toBe(before);
  expect(writer.push(new Uint8Array(FIRST_BUFFER_BYTES + 1))).toBeUndefined();
  expect(spareBufferCount()).toBe(before - 1); // past the first buffer: a spare full-size one, not a new one
  await writer.flush();
  expect(spareBufferCount()).toBe(before);
  await handle.close();
});
