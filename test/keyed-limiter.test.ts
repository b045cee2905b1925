/**
 * The keyed concurrency limit behind link-fetch politeness and per-media-type file processing:
 * each key's own limit, arrival order among the waiting, and a failed task freeing its slot.
 */
import { expect, test } from "bun:test";
import { KeyedLimiter } from "../src/keyed-limiter.ts";

test("each key has its own limit; waiting tasks start in arrival order as slots free; a failure frees its slot", async () => {
  const limiter = new KeyedLimiter((key) => (key === "image" ? 2 : 4));
  const started: string[] = [];
  const gates = new Map<string, ReturnType<typeof Promise.withResolvers<void>>>();
  const task = (key: string, name: string) =>
    limiter.run(key, async () => {
      started.push(name);
      const gate = Promise.withResolvers<void>();
      gates.set(name, gate);
      await gate.promise;
      return name;
    });
  const images = ["i1", "i2", "i3", "i4"].map((n) => task("image", n));
  const docs = ["d1", "d2", "d3", "d4", "d5"].map((n) => task("document", n));
  await Bun.sleep(0);
  expect(limiter.active("image")).toBe(2);
  expect(limiter.active("document")).toBe(4);
  expect(started).toEqual(["i1", "i2", "d1", "d2", "d3", "d4"]);

  gates.get("i2")!.reject(new Error("decode failed"));
  await expect(images[1]!).rejects.toThrow("decode failed");
  await Bun.sleep(0);
  expect(started.at(-1)).toBe("i3");
  gates.get("i1")!.resolve();
  expect(await images[0]!).toBe("i1");
  await Bun.sleep(0);
  expect(started.at(-1)).toBe("i4");
  expect(limiter.active("image")).toBe(2);

  for (const name of ["i3", "i4", "d1", "d2", "d3", "d4"]) gates.get(name)!.resolve();
  await Promise.all([images[2], images[3], ...docs.slice(0, 4)]);
  await Bun.sleep(0);
  gates.get("d5")!.resolve();
  expect(await docs[4]!).toBe("d5");
  expect(limiter.active("image")).toBe(0);
  expect(limiter.active("document")).toBe(0);
});
