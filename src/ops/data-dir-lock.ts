/**
 * One server per data directory. A second `mediabox serve` on the same directory would sweep the
 * first one's staging and temporary files as "left by a crash" and take over its jobs, so the
 * server holds an exclusive flock(2) on `<data>/mediabox.lock` while it runs. The kernel drops the
 * lock when the process ends in any way (kill -9 included), so there is no stale lock to clean up.
 * The file itself only says who holds it, for the error message.
 */
import { dlopen, FFIType } from "bun:ffi";
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync, ftruncateSync } from "node:fs";
import { hostname } from "node:os";
import type { DataDir } from "../storage/data-dir.ts";

const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

/** flock(2) from the C library (loaded once, when the module is). */
const { flock } = dlopen(process.platform === "darwin" ? "libc.dylib" : "libc.so.6", {
  flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
}).symbols;

export class DataDirInUseError extends Error {
  override name = "DataDirInUseError";
}

export class DataDirLock {
  private constructor(private fd: number | null) {}

  /** Takes the lock or throws DataDirInUseError naming the holder. */
  static acquire(dataDir: DataDir): DataDirLock {
    mkdirSync(dataDir.root, { recursive: true });
    const path = dataDir.lockFile;
    const fd = openSync(path, "a+", 0o640);
    if (flock(fd, LOCK_EX | LOCK_NB) !== 0) {
      closeSync(fd);
      let holder = "another process";
      try {
        const held = JSON.parse(readFileSync(path, "utf8")) as { pid: number; host: string };
        holder = `mediabox pid ${held.pid} on ${held.host}`;
      } catch {
        // The holder has not written its name yet; the generic words do.
      }
      throw new DataDirInUseError(`the data directory ${dataDir.root} is in use by ${holder}; stop it first or choose another --data-dir`);
    }
    ftruncateSync(fd, 0);
    writeFileSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), started_at: new Date().toISOString() }) + "\n");
    return new DataDirLock(fd);
  }

  release(): void {
    if (this.fd === null) return;
    flock(this.fd, LOCK_UN);
    closeSync(this.fd);
    this.fd = null;
  }
}
