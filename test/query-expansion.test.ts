// Query expansion by pseudo-relevance feedback (src/documents/query-expansion.ts): the relevance
// model and the RM3 mix on known inputs; and the weighted BM25 the expanded query is scored with
// (src/documents/bm25.ts) equal to FTS5's own bm25() for an ordinary query; the query words'
// chunk counts (remembered for common words only).
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { weightedBm25 } from "../src/documents/bm25.ts";
import { Fts5KeywordIndex } from "../src/documents/fts5-keyword-index.ts";
import { documentFrequencies, matchQuery, stems } from "../src/documents/keyword-query.ts";
import { SqliteClient } from "../src/db/sqlite-client.ts";
import { expandedTerms, feedbackChunks, ORIGINAL_WEIGHT, relevanceModel } from "../src/documents/query-expansion.ts";

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
    { word: "supersonic", stem: "supersonic", frequency: 3 },
    { word: "flutter", stem: "flutter", frequency: 5 },
  ];

  test("the original terms keep ORIGINAL_WEIGHT shared equally; expansion terms share the rest by probability", () => {
    const model = new Map([
      ["panel", { word: "panels", p: 0.5 }],
      ["flutter", { word: "flutter", p: 0.3 }],
      ["rare", { word: "rare", p: 0.2 }],
    ]);
    const terms = expandedTerms(original, model);
    const by = new Map(terms.map((t) => [t.stem, t]));
    expect(by.get("supersonic")).toMatchObject({ original: true, weight: ORIGINAL_WEIGHT / 2, bm25Weight: 1 });
    // An original term the feedback also favours gains weight.
    expect(by.get("flutter")!.weight).toBeCloseTo(ORIGINAL_WEIGHT / 2 + (1 - ORIGINAL_WEIGHT) * 0.3, 10);
    expect(by.get("flutter")!.bm25Weight).toBeCloseTo(1.6, 10);
    // 0.5 x 0.5 = 0.25 of the query = one original term's share: the same BM25 weight.
    expect(by.get("panel")).toMatchObject({ word: "panels", original: false, bm25Weight: 1 });
    expect(by.get("rare")!.bm25Weight).toBeCloseTo(0.4, 10);
    expect(terms.reduce((s, t) => s + t.weight, 0)).toBeCloseTo(1, 10);
    expect(terms.slice(0, 2).every((t) => t.original)).toBe(true);
  });

  test("expansion never drops an original term, however heavy the feedback", () => {
    const many = new Map(Array.from({ length: 200 }, (_, i) => [`t${i}`, { word: `t${i}`, p: 1 / 200 }]));
    const long = Array.from({ length: 40 }, (_, i) => ({ word: `q${i}`, stem: `q${i}`, frequency: 1 }));
    for (const query of [original, long]) {
      const terms = expandedTerms(query, many);
      for (const o of query) expect(terms.find((t) => t.stem === o.stem)).toMatchObject({ original: true, bm25Weight: 1 });
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

test("the weighted BM25 equals FTS5's bm25() for an ordinary query, and scales with a term's weight", async () => {
  const db = new Database(":memory:");
  db.run("CREATE VIRTUAL TABLE chunks_fts USING fts5(content, headings, tokenize = 'porter unicode61 remove_diacritics 2')");
  db.run("CREATE VIRTUAL TABLE chunks_fts_vocab USING fts5vocab(chunks_fts, 'row')");
  db.run("CREATE TABLE document_chunks (seq INTEGER PRIMARY KEY)");
  const texts = [
    { id: crypto.randomUUID(), content: "Supersonic flutter of flat panels at high Mach numbers", headings: '["Panel flutter"]' },
    { id: crypto.randomUUID(), content: "Flutter of wings in subsonic flow; the flutter speed was measured", headings: "[]" },
    { id: crypto.randomUUID(), content: "Heat transfer to a flat plate in hypersonic flow", headings: '["Heating"]' },
    { id: crypto.randomUUID(), content: "Boundary layer transition on cones", headings: "[]" },
    { id: crypto.randomUUID(), content: "Panels buckle when heated; supersonic speeds make it worse", headings: "[]" },
  ];
  texts.forEach((t, i) => {
    db.run("INSERT INTO chunks_fts (rowid, content, headings) VALUES (?, ?, ?)", [i + 1, t.content, t.headings]);
    db.run("INSERT INTO document_chunks (seq) VALUES (?)", [i + 1]);
  });
  const index = new Fts5KeywordIndex(new SqliteClient(db));
  const totals = await index.totals();
  expect(totals.rows).toBe(5);
  const fts = new Map(
    db
      .query<{ rowid: number; s: number }, [string]>("SELECT rowid, -bm25(chunks_fts, 1.0, 0.5) AS s FROM chunks_fts WHERE chunks_fts MATCH ?")
      .all(matchQuery([{ word: "flutter" }, { word: "panel" }, { word: "supersonic" }]))
      .map((r) => [r.rowid, r.s]),
  );
  const df = (stem: string) => db.query<{ doc: number }, [string]>("SELECT doc FROM chunks_fts_vocab WHERE term = ?").get(stem)?.doc ?? 0;
  // Document frequencies for expansion terms: exact up to the cap, cap + 1 beyond it.
  const capped = (word: string, cap: number) => index.cappedFrequency({ word, stem: stems([word])[0]! }, cap);
  expect(await capped("fluttering", 10)).toBe(df(stems(["flutter"])[0]!));
  expect(await capped("flutter", 10)).toBe(2);
  expect(await capped("flutter", 1)).toBe(2);
  expect(await capped("nowhere", 10)).toBe(0);
  // Weights are keyed by the index's stems ("supersonic" is "superson").
  const [flutter, panel, supersonic] = stems(["flutter", "panels", "supersonic"]) as [string, string, string];
  expect(supersonic).toBe("superson");
  const query = (weights: [string, number][]) => weights.map(([stem, weight]) => ({ stem, weight, frequency: df(stem) }));
  const ours = weightedBm25(totals, query([[flutter, 1], [panel, 1], [supersonic, 1]]), texts);
  texts.forEach((_, i) => expect(ours[i]!).toBeCloseTo(fts.get(i + 1) ?? 0, 9));
  expect(ours[3]).toBe(0);
  // The second time the chunks' counted stems are remembered: same scores.
  expect(weightedBm25(totals, query([[flutter, 1], [panel, 1], [supersonic, 1]]), texts)).toEqual(ours);
  // Weight 2 on one term = that term counted twice.
  const flutterOnly = weightedBm25(totals, query([[flutter, 1]]), texts);
  const doubled = weightedBm25(totals, query([[flutter, 2], [panel, 1], [supersonic, 1]]), texts);
  // Words the stemmer had not met are counted too (stemmed in one batch after the pass).
  const fresh = weightedBm25(totals, query([[flutter, 1]]), [{ id: crypto.randomUUID(), content: "Flutterings fluttered; flutter xqzfreshword", headings: "[]" }]);
  expect(fresh[0]).toBeGreaterThan(0);
  texts.forEach((_, i) => expect(doubled[i]!).toBeCloseTo(ours[i]! + flutterOnly[i]!, 9));
  db.close();
});

test("common words' chunk counts are remembered until the index grows by a tenth; rare words are always counted", async () => {
  const db = new Database(":memory:");
  db.run("CREATE VIRTUAL TABLE chunks_fts USING fts5(content, headings, tokenize = 'porter unicode61 remove_diacritics 2')");
  db.run("CREATE VIRTUAL TABLE chunks_fts_vocab USING fts5vocab(chunks_fts, 'row')");
  db.run("CREATE TABLE document_chunks (seq INTEGER PRIMARY KEY)");
  let seq = 0;
  const add = (content: string) => {
    seq += 1;
    db.run("INSERT INTO chunks_fts (rowid, content, headings) VALUES (?, ?, '[]')", [seq, content]);
    db.run("INSERT INTO document_chunks (seq) VALUES (?)", [seq]);
  };
  for (let i = 0; i < 200; i++) add(i === 0 ? "pump valve" : "pump");
  const index = new Fts5KeywordIndex(new SqliteClient(db));
  const counts = () => documentFrequencies(index, ["pump", "valv", "gasket"]);
  expect([...(await counts()).values()]).toEqual([200, 1, 0]);
  for (let i = 0; i < 10; i++) add("pump valve gasket");
  // "pump" (200 chunks) is remembered; the rare ones are counted again, so new words are found at once.
  expect([...(await counts()).values()]).toEqual([200, 11, 10]);
  for (let i = 0; i < 20; i++) add("pump");
  // Past a tenth more chunks, every count is read again.
  expect((await counts()).get("pump")).toBe(230);
  db.close();
});
