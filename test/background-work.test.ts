/**
 * Work that can wait gives way to files being analysed (jobs/background-work.ts): it waits for a
 * quiet spell, background job queues are not claimed meanwhile, and /readyz says what is
 * preparing and whether it is paused.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { BackgroundWork, QUIET_MS } from "../src/jobs/background-work.ts";
import { startTestServer, type TestServer } from "./support/server.ts";

describe("BackgroundWork", () => {
  test("idle() resolves at once without foreground work, and only a quiet spell after the last foreground work ends", async () => {
    const work = new BackgroundWork();
    expect(work.busy).toBe(false);
    await work.idle();
    const first = work.foreground();
    const second = work.foreground();
    let resumed = 0;
    const waiting = work.idle().then(() => (resumed = performance.now()));
    first();
    first(); // a second call changes nothing
    await Bun.sleep(QUIET_MS + 200);
    expect(resumed).toBe(0); // `second` still runs
    expect(work.busy).toBe(true);
    const ended = performance.now();
    second();
    expect(work.busy).toBe(true); // the quiet spell has not passed
    await waiting;
    expect(resumed - ended).toBeGreaterThanOrEqual(QUIET_MS - 20);
    expect(work.busy).toBe(false);
  });

  test("an aborted wait resolves at once", async () => {
    const work = new BackgroundWork();
    const end = work.foreground();
    const abort = new AbortController();
    const waiting = work.idle(abort.signal);
    abort.abort();
    await waiting;
    expect(work.busy).toBe(true);
    end();
  });

  test("tasks say what they prepare, how far they got, and whether they are paused; polled ones leave when they answer null", () => {
    const work = new BackgroundWork();
    const task = work.preparing("common words", "use-lite-sif");
    task.progress(10, 100);
    let left = 3;
    work.preparingPolled("image re-embedding", "mobilenet", () => (left ? { done: 5 - left, total: 5 } : null));
    expect(work.preparingNow()).toEqual([
      { task: "common words", model: "use-lite-sif", done: 10, total: 100, paused: false },
      { task: "image re-embedding", model: "mobilenet", done: 2, total: 5, paused: false },
    ]);
    const end = work.foreground();
    expect(work.preparingNow().every((t) => t.paused)).toBe(true);
    end();
    left = 0;
    task.end();
    expect(work.preparingNow()).toEqual([]);
  });
});

describe("GET /readyz", () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  test("lists the built-in text model's vocabulary preparation, paused while a file is being analysed", async () => {
    const server = await startTestServer({ env: { MEDIABOX_TEXT_VOCABULARY_WORDS: "50" } });
    servers.push(server);
    const ready = await server.anonymous().get("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body.preparing).toEqual([
      { task: "vocabulary pieces", model: "use-lite-sif", done: 0, total: 0, paused: false },
      { task: "common words", model: "use-lite-sif", done: 0, total: 50, paused: false },
    ]);
    const analysing = server.ctx.background.foreground();
    const busy = await server.anonymous().get("/readyz");
    expect(busy.body.preparing.map((t: { paused: boolean }) => t.paused)).toEqual([true, true]);
    analysing();
  });

  test("is empty when nothing prepares", async () => {
    const server = await startTestServer();
    servers.push(server);
    expect((await server.anonymous().get("/readyz")).body.preparing).toEqual([]);
  });
});
