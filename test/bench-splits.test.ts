/** scripts/bench/splits.ts: every bench dataset's fixed tuning and held-out halves. */
import { describe, expect, test } from "bun:test";
import { halves, splitItems } from "../scripts/bench/splits.ts";

const ids = Array.from({ length: 21 }, (_, i) => `page-${i}`);

describe("bench splits", () => {
  test("halves are disjoint, cover every item, and differ by at most one", () => {
    const { tuning, "held-out": heldOut } = splitItems("docbank", ids, (id) => id);
    expect(tuning.length).toBe(11);
    expect(heldOut.length).toBe(10);
    expect(new Set([...tuning, ...heldOut]).size).toBe(ids.length);
  });

  test("an item's half depends on the dataset and its id, not on the order or the other items", () => {
    const a = halves("docbank", ids);
    const b = halves("docbank", [...ids].reverse());
    expect([...b].every(([id, half]) => a.get(id) === half)).toBe(true);
    // Adding one item moves at most the one item at the boundary.
    const c = halves("docbank", [...ids, "page-extra"]);
    expect(ids.filter((id) => a.get(id) !== c.get(id)).length).toBeLessThanOrEqual(1);
    // Another dataset's name draws other halves.
    const d = halves("publaynet", ids);
    expect(ids.some((id) => a.get(id) !== d.get(id))).toBe(true);
  });

  test("duplicate ids are refused", () => {
    expect(() => halves("x", ["a", "a"])).toThrow(/unique/);
  });
});
