/** Temporary directories for tests, all removed after the last test file (see preload.ts). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

/**
 * A fresh directory under the system's temp dir, removed after the run whatever happened: a test that
 * fails, times out or forgets its own cleanup leaves nothing behind (full runs had left ~250 MB
 * each, mostly the dashboard's 110 MB upload).
 */
export function tempDir(prefix = "mediabox-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every directory `tempDir` made (Bun's test runner fires no process "exit" event). */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
