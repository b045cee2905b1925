// Query expansion by pseudo-relevance feedback (src/documents/query-expansion.ts): the relevance
// model and the RM3 mix on known inputs, and FTS5's bm25() adding one contribution per repeated
// phrase, which is how the expanded query's weights reach the ranking.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { matchQuery } from "../src/documents/keyword-query.ts";
import { expandedTerms, feedbackChunks, ORIGINAL_WEIGHT, relevanceModel, REPEATS_PER_QUERY_TERM } from "../src/documents/query-expansion.ts";

const chunk = (text: string, score: number) => {
  const words = text.split(" ");
  return { words, stems: words, score };
};

describe("relevance model (RM1)", () => {
  test("a term's probability is its share of each feedback chunk, weighted by the chunk's score", () => {
    // Chunk A (score 3): wing x2, drag x1, flow x1 (4 words). Chunk B (score 1): drag x2 (2 words).
    const model = relevanceModel([chunk("wing wing drag flow", 3), chunk("drag drag", 1)], () => true);
    // p(wing) = 2/4 x 3/4 = 0.375; p(drag) = 1/4 x 3/4 + 2/2 x 1/4 = 0.4375; p(flow) = 1/4 x 3/4 = 0.1875 (sum 1).
    expect(model.get("wing")!.p).toBeCloseTo(0.375, 10);
    expect(model.get("drag")!.p).toBeCloseTo(0.4375, 10);
    expect(model.get("flow")!.p).toBeCloseTo(0.1875, 10);
    expect([...model.keys()]).toEqual(["drag", "wing", "flow"]);
  });

  test("ineligible terms are left out, only the most probable are kept, and the kept weights sum to 1", () => {
    const model = relevanceModel([chunk("wing wing drag flow the", 1)], (t) => t !== "the", 2);
    expect([...model.keys()]).toEqual(["wing", "drag"]);
    expect(model.get("wing")!.p + model.get("drag")!.p).toBeCloseTo(1, 10);
  });

  test("feedback chunks are stemmed by the index's stemmer, so their terms meet the index's", () => {
    const [f] = feedbackChunks([{ content: "Flexibility of flexible wings", score: 1 }]);
    expect(f!.words).toEqual(["flexibility", "of", "flexible", "wings"]);
    expect(f!.stems).toEqual(["flexibl", "of", "flexibl", "wing"]);
  });
});

describe("RM3 mix", () => {
  const original = [
    { word: "supersonic", stem: "supersonic" },
    { word: "flutter", stem: "flutter" },
  ];

  test("the original terms keep ORIGINAL_WEIGHT, written REPEATS_PER_QUERY_TERM times; expansion terms get repeats in proportion", () => {
    const model = new Map([
      ["panel", { word: "panels", p: 0.5 }],
      ["flutter", { word: "flutter", p: 0.3 }],
      ["rare", { word: "rare", p: 0.2 }],
    ]);
    const terms = expandedTerms(original, model);
    const by = new Map(terms.map((t) => [t.stem, t]));
    expect(by.get("supersonic")).toMatchObject({ original: true, weight: ORIGINAL_WEIGHT / 2, repeats: REPEATS_PER_QUERY_TERM });
    // An original term the feedback also favours gains weight.
    expect(by.get("flutter")!.weight).toBeCloseTo(ORIGINAL_WEIGHT / 2 + (1 - ORIGINAL_WEIGHT) * 0.3, 10);
    expect(by.get("flutter")!.repeats).toBeGreaterThan(REPEATS_PER_QUERY_TERM);
    // 0.5 x 0.5 = 0.25 of the query = one original term's share: as many repeats.
    expect(by.get("panel")).toMatchObject({ word: "panels", original: false, repeats: REPEATS_PER_QUERY_TERM });
    expect(terms.reduce((s, t) => s + t.weight, 0)).toBeCloseTo(1, 10);
  });

  test("expansion never drops an original term, however heavy the feedback", () => {
    const many = new Map(Array.from({ length: 200 }, (_, i) => [`t${i}`, { word: `t${i}`, p: 1 / 200 }]));
    const long = Array.from({ length: 40 }, (_, i) => ({ word: `q${i}`, stem: `q${i}` }));
    for (const query of [original, long]) {
      const terms = expandedTerms(query, many);
      for (const o of query) expect(terms.find((t) => t.stem === o.stem)).toMatchObject({ original: true, repeats: REPEATS_PER_QUERY_TERM });
    }
  });

  test("without feedback the query is the original terms alone, each weighted equally", () => {
    expect(expandedTerms(original, new Map()).map((t) => [t.stem, t.weight])).toEqual([
      ["supersonic", 0.5],
      ["flutter", 0.5],
    ]);
    expect(expandedTerms([], new Map([["x", { word: "x", p: 1 }]]))).toEqual([]);
  });
});

test("FTS5 bm25() counts a term written twice twice (how expansion weights reach the ranking)", () => {
  const db = new Database(":memory:");
  db.run("CREATE VIRTUAL TABLE t USING fts5(c, tokenize = 'porter unicode61 remove_diacritics 2')");
  ["alpha beta", "alpha gamma", "beta delta", "epsilon", "zeta", "eta"].forEach((c, i) => db.run("INSERT INTO t (rowid, c) VALUES (?, ?)", [i + 1, c]));
  const score = (match: string) => new Map(db.query<{ rowid: number; s: number }, [string]>("SELECT rowid, -bm25(t) AS s FROM t WHERE t MATCH ?").all(match).map((r) => [r.rowid, r.s]));
  const once = score(matchQuery([{ word: "alpha" }, { word: "beta" }]));
  const weighted = score(matchQuery([{ word: "alpha", repeats: 2 }, { word: "beta" }]));
  const alpha = score(matchQuery([{ word: "alpha" }]));
  expect(weighted.get(1)).toBeCloseTo(once.get(1)! + alpha.get(1)!, 10);
  expect(weighted.get(2)).toBeCloseTo(2 * alpha.get(2)!, 10);
  expect(weighted.get(3)).toBeCloseTo(once.get(3)!, 10);
  db.close();
});
