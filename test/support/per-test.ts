/**
 * What one test starts or makes beyond its file's shared server (another server, a scratch
 * folder, a fake endpoint), stopped and removed after it whatever happened, last made first.
 */
import { afterEach } from "bun:test";
import { rmSync } from "node:fs";
import { startTestServer, type TestServer } from "./server.ts";
import { tempDir } from "./temp-dir.ts";

/** Call once at a test file's top level: it registers the afterEach that undoes what the file's tests made. */
export function perTest() {
  const undo: (() => unknown)[] = [];
  afterEach(async () => {
    for (const step of undo.splice(0).reverse()) await step();
  });
  return {
    /** Runs `step` after the current test. */
    defer(step: () => unknown): void {
      undo.push(step);
    },
    /** A server of the test's own, closed after it. */
    async startServer(options: Parameters<typeof startTestServer>[0]): Promise<TestServer> {
      const started = await startTestServer(options);
      undo.push(() => started.close());
      return started;
    },
    /** A scratch folder, removed after the test. */
    dir(prefix: string): string {
      const dir = tempDir(prefix);
      undo.push(() => rmSync(dir, { recursive: true, force: true }));
      return dir;
    },
  };
}
