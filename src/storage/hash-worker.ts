/**
 * A hashing thread (hash-threads.ts): keeps the SHA-256/MD5 state of the files being written
 * through it, and for each batch updates the hashes on this thread, in order, and writes the batch
 * at its position on the I/O pool (the fds belong to the process, opened by the caller; an
 * O_DIRECT one when the caller has it), then hands the buffer back: while a batch is being
 * written the next ones are hashed. Also hashes ranges of files on disk into a file's SHA-256, and digests whole
 * files.
 */
import { closeSync, constants, openSync, read, statSync, write } from "node:fs";
import { serveRequests } from "../native/worker-thread.ts";
import type { HashReply, HashRequest } from "./hash-threads.ts";

const streams = new Map<number, { sha: Bun.CryptoHasher | null; md5: Bun.CryptoHasher | null }>();
/** A range (or a whole file) is read in two buffers of this size, one read while the other is hashed (1 MiB direct reads ran as fast as 4 MiB here). */
const RANGE_READ_BYTES = 1024 * 1024;
/** file-writer.ts DIRECT_ALIGNMENT (not imported: this thread loads only what it runs). */
const DIRECT_ALIGNMENT = 4096;

type Answer = { reply: HashReply; transfer?: Transferable[] };

function answer(request: HashRequest): Answer | Promise<Answer> {
  try {
    switch (request.kind) {
      case "open":
        streams.set(request.stream, { sha: request.sha256 ? new Bun.CryptoHasher("sha256") : null, md5: request.md5 ? new Bun.CryptoHasher("md5") : null });
        return { reply: { ok: true } };
      case "batch": {
        const state = streams.get(request.stream);
        if (!state) throw new Error(`hash stream ${request.stream} is not open`);
        const view = new Uint8Array(request.buffer, 0, request.length);
        state.sha?.update(view);
        state.md5?.update(view);
        // Hashed here, in the order the batches came; written on the I/O pool, so the next batch
        // is hashed while this one goes to the disk.
        return writeBatch(request, view);
      }
      case "digest": {
        const state = streams.get(request.stream);
        streams.delete(request.stream);
        if (!state) throw new Error(`hash stream ${request.stream} is not open`);
        return { reply: { ok: true, sha256: state.sha?.digest("hex") ?? "", md5: state.md5?.digest("hex") ?? null } };
      }
      case "drop":
        streams.delete(request.stream);
        return { reply: { ok: true } };
      case "range": {
        const state = streams.get(request.stream);
        if (!state?.sha) throw new Error(`hash stream ${request.stream} is not open for SHA-256`);
        return hashRange(state.sha, request.path, request.offset, request.length).then(
          () => ({ reply: { ok: true } }),
          (err) => failure(request, err),
        );
      }
      case "file": {
        // Up to the size it has now: nothing writes the files digested this way any more.
        const sha = new Bun.CryptoHasher("sha256");
        const size = statSync(request.path).size;
        return hashRange(sha, request.path, 0, size).then(
          () => ({ reply: { ok: true, sha256: sha.digest("hex"), size } }),
          (err) => failure(request, err),
        );
      }
    }
  } catch (err) {
    return failure(request, err);
  }
}

function failure(request: HashRequest, err: unknown): Answer {
  // The buffer still goes back: the writer keeps its buffers whatever happened.
  const buffer = request.kind === "batch" ? request.buffer : undefined;
  return { reply: { ok: false, error: err instanceof Error ? err.message : String(err), code: (err as { code?: string }).code, buffer }, transfer: buffer ? [buffer] : [] };
}

async function writeBatch(request: Extract<HashRequest, { kind: "batch" }>, view: Uint8Array): Promise<Answer> {
  try {
    let directRefused = false;
    if (request.directFd >= 0) {
      try {
        await writeAll(request.directFd, view, request.position);
      } catch (err) {
        // EINVAL comes before any byte is written: this file system or buffer takes no O_DIRECT.
        if ((err as { code?: string }).code !== "EINVAL") throw err;
        directRefused = true;
      }
    }
    if (request.directFd < 0 || directRefused) await writeAll(request.fd, view, request.position);
    return { reply: { ok: true, buffer: request.buffer, directRefused }, transfer: [request.buffer] };
  } catch (err) {
    return failure(request, err);
  }
}

/**
 * Adds bytes offset..offset+length of a file to `sha`, read on the I/O pool while the previous
 * read is hashed here. Parts written past the page cache (O_DIRECT) are read back the same way
 * when the offset allows it: reading them through the page cache would fill fresh pages, which
 * costs CPU on this machine kind (see disk.ts openDirect). Other requests are answered meanwhile;
 * the callers wait for this one before asking anything else of the same stream.
 */
async function hashRange(sha: Bun.CryptoHasher, path: string, offset: number, length: number): Promise<void> {
  let direct = offset % DIRECT_ALIGNMENT === 0 ? openDirectForReading(path) : null;
  let fd = direct ?? openSync(path, "r");
  const buffers = [takeReadBuffer(), takeReadBuffer()];
  const read = (buffer: Uint8Array, at: number): Promise<number> => {
    const want = Math.min(RANGE_READ_BYTES, length - at);
    // A direct read asks for whole blocks; the bytes past the range (or the file's end) are not hashed.
    const ask = direct !== null ? Math.ceil(want / DIRECT_ALIGNMENT) * DIRECT_ALIGNMENT : want;
    return readAt(fd, buffer, ask, offset + at).then((got) => Math.min(got, want));
  };
  try {
    let done = 0;
    let turn = 0;
    let next: Promise<number> | null = length > 0 ? read(buffers[0]!, 0) : null;
    while (next) {
      let got: number;
      try {
        got = await next;
      } catch (err) {
        if (direct === null || (err as { code?: string }).code !== "EINVAL") throw err;
        // This file system takes no O_DIRECT reads: the rest through the page cache.
        closeSync(direct);
        direct = null;
        fd = openSync(path, "r");
        next = read(buffers[turn]!, done);
        continue;
      }
      if (got <= 0) throw new Error(`${path} ended at ${offset + done} bytes`);
      const current = buffers[turn]!;
      done += got;
      turn ^= 1;
      next = done < length ? read(buffers[turn]!, done) : null;
      sha.update(current.subarray(0, got));
    }
  } finally {
    // No read is in flight here: every throw above comes after awaiting the last one.
    closeSync(fd);
    for (const buffer of buffers) if (readBuffers.length < KEPT_READ_BUFFERS) readBuffers.push(buffer);
  }
}

/** Read buffers kept for the next range (a range uses two; ranges of different uploads may overlap in time). */
const readBuffers: Uint8Array[] = [];
const KEPT_READ_BUFFERS = 2;

function takeReadBuffer(): Uint8Array {
  return readBuffers.pop() ?? new Uint8Array(RANGE_READ_BYTES);
}

function openDirectForReading(path: string): number | null {
  try {
    return constants.O_DIRECT ? openSync(path, constants.O_RDONLY | constants.O_DIRECT) : null;
  } catch {
    return null;
  }
}

function readAt(fd: number, buffer: Uint8Array, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buffer, 0, length, position, (err, bytesRead) => (err ? reject(err) : resolve(bytesRead))));
}

/** Writes every byte of `view` at `position` (a regular file may take fewer bytes than asked). */
async function writeAll(fd: number, view: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < view.byteLength) {
    const written = await writeAt(fd, view, done, view.byteLength - done, position + done);
    if (written <= 0) throw new Error("the disk accepted no bytes");
    done += written;
  }
}

function writeAt(fd: number, view: Uint8Array, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => write(fd, view, offset, length, position, (err, written) => (err ? reject(err) : resolve(written))));
}

serveRequests<HashRequest, HashReply>(answer);
