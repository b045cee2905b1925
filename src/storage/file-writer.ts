/**
 * Writing a file from chunks a producer pushes (a request body, a multipart part): every chunk is
 * copied into a buffer of BATCH_BYTES (the first one FIRST_BUFFER_BYTES); a full buffer is hashed and goes to the kernel in one
 * positioned write off this thread while the next fills on this one, so the producer only waits
 * when the hashing and the disk fall MAX_BUFFERS - 1 buffers behind (an awaited write per buffer,
 * or per chunk for intent parts, kept parsing, hashing and writing in series). Memory is at most
 * MAX_BUFFERS buffers per file, whatever the chunks. 2 MiB buffers against 1 MiB (half the
 * messages to the hashing thread and writes): 392 MB/s against 345 in an A/B of 12 uploads each,
 * the same RSS growth; 4 buffers against 2: 280 MB/s against 228; 8 against 4: no faster (288
 * against 300) and 12 MiB more RSS growth.
 *
 * Holding the chunks themselves for a writev instead of copying them saved ~25 ms per 100 MB but
 * let them outlive the young generation: the server's RSS grew by 81 MiB during the upload
 * benchmark instead of ~45.
 *
 * Full buffers are hashed and written by a hashing thread (hash-threads.ts) when one is
 * available, so this thread only copies; otherwise each chunk is hashed here as it arrives and
 * the buffers are written on the I/O thread.
 *
 * With a second handle opened O_DIRECT (disk.ts openDirect), full buffers go past the page cache:
 * on this machine kind filling fresh page-cache pages cost ~4 ms of CPU per MiB (the VM's free
 * memory is reclaimed by its host and faulted back in on use), which made the writing thread, not
 * the request's, the slowest stage of an upload. The tail (not a multiple of 4 KiB) and any buffer
 * a direct write is refused for go through the main handle.
 *
 * Every SYNC_EVERY_BYTES written through the page cache, an fdatasync starts on the I/O thread (one at a time, never
 * awaited by push): the disk writes back while the rest of the body is still arriving, so the
 * caller's final fsync only has the tail left. On this machine kind `dd conv=fsync` of 100 MB
 * spends ~80% of its time in that final fsync; one fsync at the end put it after all the parsing
 * and hashing instead of beside them. It is early writeback only: durability still comes from
 * the caller's fsync after flush.
 */
import type { FileHandle } from "node:fs/promises";
import { ThreadedHash } from "./hash-threads.ts";

export const BATCH_BYTES = 2 * 1024 * 1024;
/** Buffers per file at most: one filling, the others being hashed and written (allocated as needed). */
export const MAX_BUFFERS = 4;
export const SYNC_EVERY_BYTES = 8 * 1024 * 1024;
/** What O_DIRECT asks of a write's buffer address, length and file position (the page size covers any logical block size up to 4 KiB). */
export const DIRECT_ALIGNMENT = 4096;

/**
 * Spare buffers shared by every writer. Each writer used to allocate (and so zero) a buffer when
 * it started and another for its last write: 4 MiB a file on the event loop, which in a batch
 * upload of fifty small notes was 200 MB of allocation and its collections (the longest stalls
 * of /healthz in a bulk import). A writer takes its buffers here and gives them back once its
 * writes are done; buffers beyond SPARE_BUFFERS are left to the collector.
 */
const spareBuffers: Uint8Array[] = [];
/**
 * A writer's first buffer: most files of a batch upload are a few KB, and a batch stages its
 * fifty parts at once, so each starting with a 2 MiB buffer still allocated (and zeroed) 100 MB
 * a batch. A file that outgrows it writes it out (a multiple of DIRECT_ALIGNMENT, so the rest
 * stays aligned for O_DIRECT) and goes on in BATCH_BYTES buffers.
 */
export const FIRST_BUFFER_BYTES = 64 * 1024;
const SPARE_BUFFERS = 8;
const NO_BUFFER = new Uint8Array(0);

/** Spare buffers waiting for a writer (for tests and metrics). */
export const spareBufferCount = (): number => spareBuffers.length;

function takeBuffer(): Uint8Array {
  return spareBuffers.pop() ?? new Uint8Array(BATCH_BYTES);
}

function giveBack(buffers: Uint8Array[]): void {
  // A buffer handed to a thread and not back is detached (length 0): never kept.
  for (const b of buffers) if (b.byteLength === BATCH_BYTES && spareBuffers.length < SPARE_BUFFERS && !spareBuffers.includes(b)) spareBuffers.push(b);
}

export class SizeLimitError extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes`);
    this.name = "SizeLimitError";
  }
}

export interface WriterOptions {
  /** Position of the first byte in the file. */
  offset?: number;
  /** More bytes than this throw SizeLimitError before any of them is written. */
  maxBytes?: number;
  sha256?: boolean;
  md5?: boolean;
  /** How many of the first bytes to keep (for type detection). */
  headBytes?: number;
  /**
   * A second handle on the same file opened with O_DIRECT (openDirect): full buffers at aligned
   * positions are written through it, past the page cache; the rest, and every buffer once a
   * direct write was refused, through the main handle.
   */
  direct?: FileHandle | null;
}

export interface WriterResult {
  size: number;
  /** Lower-case hex, "" unless asked for. */
  sha256: string;
  md5: string | null;
  head: Uint8Array;
}

export class ChunkedFileWriter {
  private readonly sha: Bun.CryptoHasher | null;
  private readonly md5: Bun.CryptoHasher | null;
  /** The hashing thread's share of this file, or null when this thread hashes. */
  private readonly threaded: ThreadedHash | null;
  private digested = false;
  private readonly headLimit: number;
  private readonly headChunks: Uint8Array[] = [];
  private headSize = 0;
  private size = 0;
  private position: number;
  /** The buffer filling; up to MAX_BUFFERS - 1 others may be being hashed and written. */
  private batch: Uint8Array = new Uint8Array(FIRST_BUFFER_BYTES);
  /** Buffers back from their write, free to fill. */
  private readonly free: Uint8Array[] = [];
  private buffers = 1;
  private batchBytes = 0;
  /** The writes in flight, each settling (never rejecting) once its buffer is back. */
  private readonly writing = new Set<Promise<void>>();
  /** The early-writeback fdatasync in flight, if any, and the bytes written since the last one started. */
  private syncing: Promise<void> | null = null;
  private unsynced = 0;
  private failure: unknown = null;
  /** The O_DIRECT handle while it is usable (null after a refused direct write). */
  private direct: FileHandle | null;

  constructor(
    private readonly handle: FileHandle,
    private readonly options: WriterOptions = {},
  ) {
    this.position = options.offset ?? 0;
    const sha256 = options.sha256 !== false;
    const md5 = options.md5 === true;
    this.threaded = sha256 || md5 ? ThreadedHash.open({ sha256, md5 }) : null;
    this.sha = sha256 && !this.threaded ? new Bun.CryptoHasher("sha256") : null;
    this.md5 = md5 && !this.threaded ? new Bun.CryptoHasher("md5") : null;
    this.headLimit = options.headBytes ?? 0;
    this.direct = options.direct ?? null;
  }

  get bytes(): number {
    return this.size;
  }

  /**
   * Takes a chunk, copied by the time this returns or, when it returns a promise, by the time
   * that resolves: the caller waits for it before pushing again (a write is in flight). Throws
   * SizeLimitError past maxBytes, or the error of an earlier failed write.
   */
  push(chunk: Uint8Array): Promise<void> | undefined {
    if (this.failure !== null) throw this.failure;
    if (this.options.maxBytes !== undefined && this.size + chunk.byteLength > this.options.maxBytes) throw new SizeLimitError(this.options.maxBytes);
    this.size += chunk.byteLength;
    if (this.headSize < this.headLimit) {
      const take = chunk.subarray(0, this.headLimit - this.headSize);
      this.headChunks.push(take.slice());
      this.headSize += take.byteLength;
    }
    this.sha?.update(chunk);
    this.md5?.update(chunk);
    return this.fill(chunk, 0);
  }

  /** Copies chunk[at..] into the buffers, starting writes as they fill. */
  private fill(chunk: Uint8Array, at: number): Promise<void> | undefined {
    while (at < chunk.byteLength) {
      if (this.batchBytes === this.batch.byteLength) {
        // Every buffer full: the rest waits for a write in flight to end, and so does the caller.
        if (!this.hasSpare()) return this.afterAnyWrite().then(() => this.fill(chunk, at));
        this.startWrite();
      }
      const take = Math.min(chunk.byteLength - at, this.batch.byteLength - this.batchBytes);
      this.batch.set(chunk.subarray(at, at + take), this.batchBytes);
      this.batchBytes += take;
      at += take;
    }
    if (this.batchBytes === this.batch.byteLength && this.hasSpare()) this.startWrite();
    return undefined;
  }

  private hasSpare(): boolean {
    return this.free.length > 0 || this.buffers < MAX_BUFFERS;
  }

  private async afterAnyWrite(): Promise<void> {
    if (this.writing.size > 0) await Promise.race(this.writing);
    if (this.failure !== null) throw this.failure;
  }

  private async afterWrite(): Promise<void> {
    while (this.writing.size > 0) await Promise.all(this.writing);
    if (this.failure !== null) throw this.failure;
  }

  /** Writes what is left and waits for every write; the caller fsyncs and closes the handle. */
  async flush(): Promise<WriterResult> {
    await this.afterWrite();
    if (this.batchBytes > 0) {
      this.startWrite(true);
      await this.afterWrite();
    }
    await this.drained();
    this.releaseBuffers();
    if (this.failure !== null) throw this.failure;
    const head = new Uint8Array(this.headSize);
    let at = 0;
    for (const c of this.headChunks) {
      head.set(c, at);
      at += c.byteLength;
    }
    if (this.threaded) {
      this.digested = true;
      const { sha256, md5 } = await this.threaded.digest();
      return { size: this.size, sha256, md5, head };
    }
    return { size: this.size, sha256: this.sha ? this.sha.digest("hex") : "", md5: this.md5 ? this.md5.digest("hex") : null, head };
  }

  /** Waits for the write in flight, if any, so the handle can be closed; never throws. */
  async settle(): Promise<void> {
    await this.drained();
    this.releaseBuffers();
    if (this.threaded && !this.digested) {
      this.digested = true;
      this.threaded.drop();
    }
  }

  /** Waits for the writes and the early fdatasync in flight; never throws (failures are kept in `failure`). */
  private async drained(): Promise<void> {
    while (this.writing.size > 0 || this.syncing) await (this.writing.size > 0 ? Promise.all(this.writing) : this.syncing);
  }

  /** Gives this writer's buffers back for other writers (every write has ended). */
  private releaseBuffers(): void {
    giveBack([this.batch, ...this.free]);
    this.batch = NO_BUFFER;
    this.free.length = 0;
  }

  /** Sends the filling buffer to the kernel and, unless it is the `last`, takes a free one (hasSpare) to fill. */
  private startWrite(last = false): void {
    const full = this.batch;
    const length = this.batchBytes;
    const position = this.position;
    this.position += length;
    if (last) this.batch = NO_BUFFER;
    else {
      if (this.free.length === 0) this.buffers++;
      this.batch = this.free.pop() ?? takeBuffer();
    }
    this.batchBytes = 0;
    const direct = this.direct && length % DIRECT_ALIGNMENT === 0 && position % DIRECT_ALIGNMENT === 0 ? this.direct : null;
    // Bytes written past the page cache need no early writeback; buffered ones count toward it.
    let buffered = direct === null;
    // The hashing thread takes the buffer (transferred) and hands it back once written.
    const written = this.threaded
      ? this.threaded.batch(full, length, this.handle.fd, position, direct?.fd ?? -1).then(
          ({ buffer, directRefused }) => {
            if (directRefused) this.refuseDirect();
            buffered ||= directRefused;
            return buffer;
          },
          (err: Error & { buffer?: Uint8Array | null }) => {
            this.failure ??= err;
            return err.buffer ?? new Uint8Array(BATCH_BYTES);
          },
        )
      : writeBatch(this.handle, direct, full, length, position).then(
          (directRefused) => {
            if (directRefused) this.refuseDirect();
            buffered ||= directRefused;
            return full;
          },
          (err) => {
            this.failure ??= err;
            return full;
          },
        );
    const step: Promise<void> = written
      .then((back) => {
        // The small first buffer is not used again: the file goes on in full-size ones.
        if (back.byteLength === BATCH_BYTES) this.free.push(back);
        else this.buffers--;
      })
      .finally(() => {
        this.writing.delete(step);
        if (buffered) this.unsynced += length;
        if (this.unsynced >= SYNC_EVERY_BYTES && !this.syncing && this.failure === null) this.startSync();
      });
    this.writing.add(step);
  }

  /** A direct write was refused (EINVAL: the file system or the buffer does not allow it): the rest goes through the page cache. */
  private refuseDirect(): void {
    this.direct = null;
  }

  private startSync(): void {
    this.unsynced = 0;
    this.syncing = this.handle
      .datasync()
      .catch((err) => {
        this.failure ??= err;
      })
      .finally(() => {
        this.syncing = null;
      });
  }
}

/**
 * Writes a batch through the O_DIRECT handle when there is one, else (or when the direct write is
 * refused with EINVAL, before any byte is written) through the buffered one; resolves to whether
 * a direct write was refused.
 */
async function writeBatch(handle: FileHandle, direct: FileHandle | null, buffer: Uint8Array, length: number, position: number): Promise<boolean> {
  if (direct) {
    try {
      await writeAll(direct, buffer, length, position);
      return false;
    } catch (err) {
      if ((err as { code?: string }).code !== "EINVAL") throw err;
    }
  }
  await writeAll(handle, buffer, length, position);
  return direct !== null;
}

/** Writes until every byte is down (a regular file may take fewer bytes than asked). */
async function writeAll(handle: FileHandle, buffer: Uint8Array, length: number, position: number): Promise<void> {
  let done = 0;
  while (done < length) {
    const { bytesWritten } = await handle.write(buffer, done, length - done, position + done);
    if (bytesWritten <= 0) throw new Error("the disk accepted no bytes");
    done += bytesWritten;
  }
}
