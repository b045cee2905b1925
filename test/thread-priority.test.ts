/**
 * Background worker threads lower their own CPU priority, or move to the idle scheduling class
 * (native/thread-priority.ts), and leave the event loop's alone.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { getPriority, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BACKGROUND_NICENESS, idleThreadPriority, lowerThreadPriority } from "../src/native/thread-priority.ts";

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
  // Relative to the thread that started it (a test run under `nice` starts above 0).
  expect(reply).toEqual({ lowered: true, priority: Math.min(19, before + BACKGROUND_NICENESS) });
  expect(getPriority(process.pid)).toBe(before);
});

test.skipIf(process.platform !== "linux")("a worker thread moves itself to the idle scheduling class; the main thread stays in the normal one", async () => {
  const policy = (stat: string) => Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[38]); // field 41 of /proc/<tid>/stat
  expect(idleThreadPriority()).toBe(false); // on the main thread: nothing happens
  const entry = join(dir, "idle-worker.ts");
  writeFileSync(
    entry,
    `import { readFileSync } from "node:fs";
     import { idleThreadPriority } from ${JSON.stringify(resolve(import.meta.dir, "../src/native/thread-priority.ts"))};
     const result = idleThreadPriority();
     postMessage({ result, stat: readFileSync("/proc/thread-self/stat", "utf8") });`,
  );
  const worker = new Worker(entry);
  const reply = await new Promise<{ result: string; stat: string }>((settle) => (worker.onmessage = (e) => settle(e.data)));
  worker.terminate();
  expect(reply.result).toBe("idle");
  expect(policy(reply.stat)).toBe(5); // SCHED_IDLE
  expect(policy(readFileSync(`/proc/${process.pid}/stat`, "utf8"))).toBe(0); // SCHED_OTHER
});
