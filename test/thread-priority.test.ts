/**
 * Background worker threads lower their own CPU priority (native/thread-priority.ts) and leave
 * the event loop's alone.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { getPriority, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BACKGROUND_NICENESS, lowerThreadPriority } from "../src/native/thread-priority.ts";

const dir = mkdtempSync(join(tmpdir(), "mediabox-thread-priority-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test.skipIf(process.platform !== "linux")("a worker thread lowers its own priority; the main thread's stays", async () => {
  const before = getPriority(process.pid);
  expect(lowerThreadPriority()).toBe(false); // on the main thread: nothing happens
  const entry = join(dir, "worker.ts");
  writeFileSync(
    entry,
    `import { readlinkSync } from "node:fs";
     import { getPriority } from "node:os";
     import { lowerThreadPriority } from ${JSON.stringify(resolve(import.meta.dir, "../src/native/thread-priority.ts"))};
     const lowered = lowerThreadPriority();
     const tid = Number(readlinkSync("/proc/thread-self").split("/").at(-1));
     postMessage({ lowered, priority: getPriority(tid) });`,
  );
  const worker = new Worker(entry);
  const reply = await new Promise<{ lowered: boolean; priority: number }>((settle) => (worker.onmessage = (e) => settle(e.data)));
  worker.terminate();
  expect(reply).toEqual({ lowered: true, priority: BACKGROUND_NICENESS });
  expect(getPriority(process.pid)).toBe(before);
});
