/**
 * A hashing thread (hash-threads.ts): keeps the SHA-256/MD5 state of the files being written
 * through it, and for each batch updates the hashes and writes the batch at its position with a
 * blocking write on this thread (the fds belong to the process, opened by the caller; an O_DIRECT
 * one when the caller has it), then hands the buffer back. Also hashes ranges of files on disk into a file's SHA-256, and digests whole
 * files.
 */
import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { serveRequests } from "../native/worker-thread.ts";
import type { HashReply, HashRequest } from "./hash-threads.ts";

const streams = new Map<number, { sha: Bun.CryptoHasher | null; md5: Bun.CryptoHasher | null }>();
const READ_BYTES = 4 * 1024 * 1024;

function answer(request: HashRequest): { reply: HashReply; transfer?: Transferable[] } {
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
        let directRefused = false;
        if (request.directFd >= 0) {
          try {
            writeAll(request.directFd, view, request.position);
          } catch (err) {
            // EINVAL comes before any byte is written: this file system or buffer takes no O_DIRECT.
            if ((err as { code?: string }).code !== "EINVAL") throw err;
            directRefused = true;
          }
        }
        if (request.directFd < 0 || directRefused) writeAll(request.fd, view, request.position);
        return { reply: { ok: true, buffer: request.buffer, directRefused }, transfer: [request.buffer] };
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
        const readBuffer = new Uint8Array(Math.min(READ_BYTES, request.length));
        const fd = openSync(request.path, "r");
        let done = 0;
        try {
          while (done < request.length) {
            const read = readSync(fd, readBuffer, 0, Math.min(readBuffer.length, request.length - done), request.offset + done);
            if (read <= 0) throw new Error(`${request.path} ended at ${request.offset + done} bytes`);
            state.sha.update(readBuffer.subarray(0, read));
            done += read;
          }
        } finally {
          closeSync(fd);
        }
        return { reply: { ok: true } };
      }
      case "file": {
        const sha = new Bun.CryptoHasher("sha256");
        const readBuffer = new Uint8Array(READ_BYTES);
        const fd = openSync(request.path, "r");
        let size = 0;
        try {
          for (;;) {
            const read = readSync(fd, readBuffer, 0, READ_BYTES, size);
            if (read <= 0) break;
            sha.update(readBuffer.subarray(0, read));
            size += read;
          }
        } finally {
          closeSync(fd);
        }
        return { reply: { ok: true, sha256: sha.digest("hex"), size } };
      }
    }
  } catch (err) {
    // The buffer still goes back: the writer keeps its pair of buffers whatever happened.
    const buffer = request.kind === "batch" ? request.buffer : undefined;
    return { reply: { ok: false, error: err instanceof Error ? err.message : String(err), code: (err as { code?: string }).code, buffer }, transfer: buffer ? [buffer] : [] };
  }
}

/** Writes every byte of `view` at `position` (a regular file may take fewer bytes than asked). */
function writeAll(fd: number, view: Uint8Array, position: number): void {
  let done = 0;
  while (done < view.byteLength) {
    const written = writeSync(fd, view, done, view.byteLength - done, position + done);
    if (written <= 0) throw new Error("the disk accepted no bytes");
    done += written;
  }
}

serveRequests<HashRequest, HashReply>(answer);
