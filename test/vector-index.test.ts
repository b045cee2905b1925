/**
 * The in-memory nearest-neighbour scan against a brute-force reference: small indexes (one
 * thread), large ones (split over scan threads), writes racing a threaded scan, and the vector
 * space's per-organization scoping over a real sqlite-vec table; the SIMD kernel's bytes against
 * its source, rows of any width (padded to the kernel's lanes) and the JavaScript fallback.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { systemClock } from "../src/clock.ts";
import { openDatabase } from "../src/db/database.ts";
import { MemoryScan } from "../src/vectors/memory-scan.ts";
import { MAX_KERNEL_STRIDE } from "../src/vectors/dot-kernel.ts";
import { DOT_KERNEL_WASM } from "../src/vectors/dot-kernel-bytes.ts";
import { compiledModule } from "../scripts/build-wasm.ts";
import { SqliteVectorSpaces } from "../src/vectors/sqlite-vector-spaces.ts";
import { tempDir } from "./support/server.ts";

/** Deterministic pseudo-random unit vectors. */
function vectors(count: number, dimension: number, seed: number): Float32Array[] {
  let x = seed >>> 0 || 1;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32 - 0.5;
  };
  return Array.from({ length: count }, () => {
    const v = new Float32Array(dimension).map(next);
    const norm = Math.hypot(...v);
    return v.map((a) => a / norm);
  });
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);

function bruteForce(items: Map<string, Float32Array>, query: Float32Array, k: number) {
  return [...items].map(([id, v]) => ({ id, similarity: dot(v, query) })).sort((a, b) => b.similarity - a.similarity).slice(0, k);
}

function expectSameTop(actual: { id: string; similarity: number }[], expected: { id: string; similarity: number }[]) {
  expect(actual.map((r) => r.id)).toEqual(expected.map((r) => r.id));
  actual.forEach((r, i) => expect(r.similarity).toBeCloseTo(expected[i]!.similarity, 5));
}

describe("scan kernel", () => {
  test("the committed kernel bytes are dot-kernel.wat compiled (scripts/build-wasm.ts)", async () => {
    expect(await compiledModule("vectors/dot-kernel.wat", "DOT_KERNEL_WASM")).toContain(`"${DOT_KERNEL_WASM}"`);
    // And this runtime runs it: otherwise every scan silently takes the slower JavaScript loop.
    expect(WebAssembly.validate(Buffer.from(DOT_KERNEL_WASM, "base64"))).toBe(true);
  });

  test("rows of a width that is no multiple of the kernel's lanes, grown and deleted, score exactly", async () => {
    const all = vectors(3000, 13, 21);
    const items = new Map(all.map((v, i) => [`id-${i}`, v]));
    const scan = new MemoryScan(13, items); // past its first 1,024 rows: the memory was replaced twice
    for (let i = 0; i < 3000; i += 7) {
      scan.delete(`id-${i}`);
      items.delete(`id-${i}`);
    }
    for (const query of vectors(5, 13, 77)) expectSameTop(await scan.nearest(query, 20), bruteForce(items, query, 20));
    expect(scan.similarity("id-1", all[1]!)).toBeCloseTo(1, 5);
    expect(scan.similarity("id-0", all[0]!)).toBeNull();
  });

  test("rows wider than the kernel takes are scanned by the JavaScript loop, with the same answers", async () => {
    const dimension = MAX_KERNEL_STRIDE + 5;
    const all = vectors(40, dimension, 5);
    const items = new Map(all.map((v, i) => [`id-${i}`, v]));
    const scan = new MemoryScan(dimension, items);
    for (const query of vectors(2, dimension, 9)) expectSameTop(await scan.nearest(query, 5), bruteForce(items, query, 5));
  });
});

describe("MemoryScan", () => {
  test("a small index (one thread) returns the exact top k, most similar first", async () => {
    const all = vectors(500, 24, 7);
    const items = new Map(all.map((v, i) => [`id-${i}`, v]));
    const scan = new MemoryScan(24, items);
    for (const query of vectors(5, 24, 99)) expectSameTop(await scan.nearest(query, 10), bruteForce(items, query, 10));
    expect(await scan.nearest(all[0]!, 1)).toEqual([{ id: "id-0", similarity: expect.closeTo(1, 5) }]);
    expect(await scan.nearest(all[0]!, 1000)).toHaveLength(500);
  });

  test("a large index (split over scan threads) returns the same top k as a brute-force scan", async () => {
    const all = vectors(30_000, 32, 11);
    const items = new Map(all.map((v, i) => [`id-${i}`, v]));
    const scan = new MemoryScan(32, items);
    for (const query of vectors(4, 32, 5)) expectSameTop(await scan.nearest(query, 25), bruteForce(items, query, 25));
    // The best match can sit in any thread's slice: the last row is found as well as the first.
    expect((await scan.nearest(all[29_999]!, 1))[0]!.id).toBe("id-29999");
    expect((await scan.nearest(all[0]!, 1))[0]!.id).toBe("id-0");
  });

  test("rows written while threads scan never come back under the wrong id", async () => {
    const all = vectors(25_000, 16, 3);
    const items = new Map(all.map((v, i) => [`id-${i}`, v]));
    const scan = new MemoryScan(16, items);
    const query = all[10]!;
    const pending = scan.nearest(query, 5);
    // Moves the last row into row 10's place and adds a new row, before the scan's answer is read.
    scan.delete("id-10");
    items.delete("id-10");
    const fresh = vectors(1, 16, 1234)[0]!;
    scan.set("fresh", fresh);
    items.set("fresh", fresh);
    const result = await pending;
    expect(result.map((r) => r.id)).not.toContain("id-10");
    for (const r of result) expect(r.similarity).toBeCloseTo(dot(items.get(r.id)!, query), 5);
    expectSameTop(result, bruteForce(items, query, 5));
  });
});

describe("SqliteVectorSpace", () => {
  const dir = tempDir("mediabox-vectors-");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("nearest stays within the organization and follows upserts and removals", async () => {
    const db = openDatabase(join(dir, "v.db"));
    try {
      const space = await new SqliteVectorSpaces(db, systemClock).open("text", "test-model", 8);
      const [a, b, c, query] = vectors(4, 8, 21);
      await space.upsert("a", "org-1", a!);
      await space.upsert("b", "org-1", b!);
      await space.upsert("c", "org-2", c!);
      expect((await space.nearest("org-1", query!, 10)).map((n) => n.itemId).sort()).toEqual(["a", "b"]);
      expect((await space.nearest("org-2", query!, 10)).map((n) => n.itemId)).toEqual(["c"]);
      await space.upsert("b", "org-1", query!);
      expect((await space.nearest("org-1", query!, 1))[0]).toEqual({ itemId: "b", similarity: expect.closeTo(1, 5) });
      await space.remove(["b"]);
      expect((await space.nearest("org-1", query!, 10)).map((n) => n.itemId)).toEqual(["a"]);
      // The store answers the same as the in-memory copy.
      expect(space.nearestInStore("org-1", query!, 10).map((n) => n.itemId)).toEqual(["a"]);
    } finally {
      db.close();
    }
  });
});
