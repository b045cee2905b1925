/**
 * Structured logs: info lines of one turn of the event loop go out in one write, a warning
 * writes them first, and an exiting process writes what waits.
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Logger } from "../src/log.ts";
import { tempDir } from "./support/server.ts";

const dir = tempDir("mediabox-log-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("info lines of a turn are written together at its end; a warning writes them first", async () => {
  const writes: { stream: string; text: string }[] = [];
  const original = { out: process.stdout.write, err: process.stderr.write };
  process.stdout.write = ((text: string) => writes.push({ stream: "out", text }) > 0) as typeof process.stdout.write;
  process.stderr.write = ((text: string) => writes.push({ stream: "err", text }) > 0) as typeof process.stderr.write;
  try {
    const log = new Logger("info").child({ component: "test" });
    log.info("one");
    log.debug("hidden");
    log.info("two", { n: 2 });
    expect(writes).toEqual([]);
    await new Promise((settle) => setImmediate(settle));
    expect(writes.map((w) => [w.stream, w.text.split("\n").filter(Boolean).map((l) => JSON.parse(l).msg)])).toEqual([["out", ["one", "two"]]]);
    writes.length = 0;
    log.info("three");
    log.warn("careful");
    expect(writes.map((w) => [w.stream, JSON.parse(w.text).msg])).toEqual([["out", "three"], ["err", "careful"]]);
  } finally {
    process.stdout.write = original.out;
    process.stderr.write = original.err;
  }
});

test("lines still waiting when the process exits are written", async () => {
  const script = join(dir, "exit.ts");
  writeFileSync(script, `import { Logger } from ${JSON.stringify(resolve(import.meta.dir, "../src/log.ts"))};\nnew Logger("info").info("last words");\nprocess.exit(3);\n`);
  const proc = Bun.spawn([process.execPath, script], { stdout: "pipe", stderr: "pipe" });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  expect(code).toBe(3);
  expect(JSON.parse(out).msg).toBe("last words");
});
