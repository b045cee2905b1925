/**
 * The compiled binary's embedded tree is written out by unpackTree (src/native/unpack.ts): under
 * its content hash, complete or not at all, in chunks. Here on a tree staged on disk (the binary
 * test covers the embedded one).
 */
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { treeTarget, unpackTree } from "../src/native/unpack.ts";
import { tempDir } from "./support/temp-dir.ts";

const saved = process.env.MEDIABOX_NATIVE_CACHE;
afterEach(() => {
  if (saved === undefined) delete process.env.MEDIABOX_NATIVE_CACHE;
  else process.env.MEDIABOX_NATIVE_CACHE = saved;
});

test("a tree is written out under its digest, files larger than a chunk byte for byte, once", async () => {
  const tree = tempDir("mediabox-tree-");
  const cache = tempDir("mediabox-cache-");
  process.env.MEDIABOX_NATIVE_CACHE = cache;
  // 9 MB and a bit: more than two 4 MB chunks, with a partial last one.
  const big = new Uint8Array(9 * 1024 * 1024 + 123).map((_, i) => (i * 31) & 0xff);
  mkdirSync(join(tree, "models", "m"), { recursive: true });
  writeFileSync(join(tree, "models", "m", "weights.bin"), big);
  writeFileSync(join(tree, "small.txt"), "hello");
  writeFileSync(join(tree, "manifest.json"), JSON.stringify({ digest: "abc123", files: ["models/m/weights.bin", "small.txt"] }));

  const expected = join(cache, "abc123", "assets");
  expect(treeTarget(tree, "assets")).toBe(expected);
  expect(existsSync(expected)).toBe(false); // naming the target writes nothing

  const seen: [number, number][] = [];
  const dir = await unpackTree(tree, "assets", (done, total) => seen.push([done, total]));
  expect(dir).toBe(expected);
  expect(Buffer.from(readFileSync(join(dir, "models", "m", "weights.bin"))).equals(Buffer.from(big))).toBe(true);
  expect(readFileSync(join(dir, "small.txt"), "utf8")).toBe("hello");
  expect(existsSync(join(dir, "manifest.json"))).toBe(true);
  expect(seen).toEqual([[0, 3], [1, 3], [2, 3], [3, 3]]);
  expect(readdirSync(join(cache, "abc123"))).toEqual(["assets"]); // no partial copy left beside it

  // A second call finds the complete tree and writes nothing.
  const again: unknown[] = [];
  expect(await unpackTree(tree, "assets", () => again.push(1))).toBe(expected);
  expect(again).toEqual([]);
});
