import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { TextEmbedder } from "../src/embeddings/text-embedder.ts";
import { buildManifest, writeManifest } from "../src/models/manifest.ts";
import { ModelVerifier } from "../src/models/model-verifier.ts";
import { buildFixtureEmbeddingModel, fixtureTokenizerDir } from "./support/embedding-model.ts";


const DIM = 32;
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i]!, 0);
const norm = (a: Float32Array) => Math.sqrt(dot(a, a));
const urlOf = (input: unknown) => (input instanceof Request ? input.url : input instanceof URL ? input.href : String(input));

describe("TextEmbedder with the fixture model", () => {
  let modelsDir: string;
  let embedder: TextEmbedder;
  const realFetch = globalThis.fetch;
  /** Every URL anything in the process fetched (global fetch) or transformers.js asked for (env.fetch). */
  const fetched: string[] = [];
  const transformersFetched: string[] = [];
  let restoreEnvFetch = () => {};

  beforeAll(async () => {
    globalThis.fetch = Object.assign(
      async (input: string | URL | Request, init?: RequestInit) => {
        const url = urlOf(input);
        fetched.push(url);
        if (/^https?:/i.test(url)) throw new Error(`test forbids network access: ${url}`);
        return realFetch(input, init);
      },
      { preconnect: realFetch.preconnect },
    ) as typeof fetch;
    modelsDir = mkdtempSync(path.join(tmpdir(), "mediabox-text-models-"));
    await buildFixtureEmbeddingModel(modelsDir, { dim: DIM });
    embedder = new TextEmbedder({ modelsDir, model: "all-MiniLM-L6-v2" });
    await embedder.tokenizer(); // loads transformers.js with its offline settings
    // Watch what transformers.js itself fetches (it captured the original fetch at import).
    const { env } = await import("@huggingface/transformers");
    const guarded = env.fetch;
    env.fetch = (input: string | URL, init?: unknown) => {
      transformersFetched.push(urlOf(input));
      return guarded(input, init);
    };
    restoreEnvFetch = () => {
      env.fetch = guarded;
    };
  });

  afterAll(async () => {
    await embedder?.close();
    restoreEnvFetch();
    globalThis.fetch = realFetch;
    if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
  });

  test("embeds to L2-normalized vectors of the model's dimension", async () => {
    expect(embedder.modelId).toBe("all-MiniLM-L6-v2");
    expect(await embedder.unavailableReason()).toBeNull();
    expect(await embedder.dimension()).toBe(DIM);
    const vectors = await embedder.embed(["The pump was serviced.", "", "Ünïcödé — 12.5 N·m"]);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(DIM);
      expect(norm(v)).toBeCloseTo(1, 5);
      expect(v.every(Number.isFinite)).toBe(true);
    }
    expect(await embedder.embed([])).toEqual([]);
  });

  test("the same text gives the same vector, whatever else is in the batch", async () => {
    const text = "replace the pressure relief valve";
    const [alone] = await embedder.embed([text]);
    const [again] = await embedder.embed([text]);
    const padded = await embedder.embed(["a much longer text about something else entirely, with many more words", text]);
    expect(Array.from(again!)).toEqual(Array.from(alone!));
    for (let i = 0; i < DIM; i++) expect(padded[1]![i]!).toBeCloseTo(alone![i]!, 6);
  });

  test("a text sharing words with the query is closer than an unrelated one", async () => {
    const [query, related, unrelated] = await embedder.embed([
      "pressure valve replacement",
      "the pressure valve on pump three needs replacement soon",
      "sunny beaches and holiday cocktails by the sea",
    ]);
    expect(dot(query!, related!)).toBeGreaterThan(dot(query!, unrelated!) + 0.2);
  });

  test("a batch of 50 keeps order and matches single embeddings", async () => {
    const texts = Array.from({ length: 50 }, (_, i) => `chunk ${i}: ${"lorem ipsum dolor ".repeat(i % 7)}item number ${i * 37}`);
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(50);
    for (const i of [0, 31, 32, 49]) {
      const [single] = await embedder.embed([texts[i]!]);
      expect(dot(vectors[i]!, single!)).toBeCloseTo(1, 5);
    }
  });

  test("concurrent calls are safe", async () => {
    const texts = ["alpha beta", "gamma delta", "epsilon"];
    const results = await Promise.all([embedder.embed(texts), embedder.embed(texts.slice(1)), embedder.dimension(), embedder.embed(texts)]);
    expect(Array.from(results[0][1]!)).toEqual(Array.from(results[1][0]!));
    expect(results[2]).toBe(DIM);
    expect(Array.from(results[3][2]!)).toEqual(Array.from(results[0][2]!));
  });

  test("calls made together share runs of the model thread, each answered with its own texts' vectors in order", async () => {
    const texts = Array.from({ length: 40 }, (_, i) => `${"pump ".repeat((i * 7) % 13)}valve ${i} seal`);
    const alone: Float32Array[] = [];
    for (const text of texts) alone.push((await embedder.embed([text]))[0]!);
    // Forty calls of one to three texts each, of mixed lengths, and a query among them.
    const calls: Promise<Float32Array[]>[] = [];
    for (let i = 0; i < texts.length; i += 3) calls.push(embedder.embed(texts.slice(i, i + 3)));
    const query = embedder.embed(["valve 7 seal"], "query");
    const together = (await Promise.all(calls)).flat();
    expect(together).toHaveLength(texts.length);
    together.forEach((vector, i) => {
      for (let k = 0; k < DIM; k++) expect(vector[k]!).toBeCloseTo(alone[i]![k]!, 5);
    });
    // The fixture model has no prompts: a query embeds like the same text as a document.
    const [asDocument] = await embedder.embed(["valve 7 seal"]);
    const [asQuery] = await query;
    for (let k = 0; k < DIM; k++) expect(asQuery![k]!).toBeCloseTo(asDocument![k]!, 5);
  });

  test("input is truncated at the model window (256 tokens)", async () => {
    const tokenizer = await embedder.tokenizer();
    expect(tokenizer.maxTokens).toBe(256);
    // 300 tokens: past the 256-token window, short of the 512 the tokenizer config names.
    const head = "pump seal ".repeat(150).trim();
    expect(tokenizer.count(head)).toBe(300);
    const [a, b] = await embedder.embed([`${head} ${"valve ".repeat(100)}`, `${head} ${"beach ".repeat(100)}`]);
    expect(dot(a!, b!)).toBeCloseTo(1, 5);
  });

  test("close() releases the model; the next call loads it again", async () => {
    const [before] = await embedder.embed(["reload me"]);
    await embedder.close();
    const [after] = await embedder.embed(["reload me"]);
    expect(Array.from(after!)).toEqual(Array.from(before!));
  });

  test("without weights: tokenizer works, unavailableReason names the weights, so does embed", async () => {
    const folder = path.join(modelsDir, "tokenizer-only");
    mkdirSync(folder);
    for (const file of ["config.json", "tokenizer.json", "tokenizer_config.json"]) copyFileSync(path.join(fixtureTokenizerDir(), file), path.join(folder, file));
    const partial = new TextEmbedder({ modelsDir, model: "tokenizer-only" });
    // Answers name files relative to the models directory, never by the server's absolute path.
    const weights = "models/tokenizer-only/onnx/model_quantized.onnx";
    expect(await partial.unavailableReason()).toBe(`text embedding model "tokenizer-only" is not installed: ${weights} is missing`);
    expect((await partial.tokenizer()).count("pressure valve")).toBe(2);
    await expect(partial.embed(["x"])).rejects.toThrow(`text embedding model "tokenizer-only" is not installed: ${weights} is missing`);
    await expect(partial.dimension()).rejects.toThrow(weights);

    // A site that installs the weights later needs no new embedder.
    await buildFixtureEmbeddingModel(modelsDir, { name: "tokenizer-only", dim: 16 });
    expect(await partial.unavailableReason()).toBeNull();
    expect(await partial.dimension()).toBe(16);
    await partial.close();
  });

  test("with the models manifest check: weights that differ from the manifest are refused, tokenizer included", async () => {
    await buildFixtureEmbeddingModel(modelsDir, { name: "checked", dim: 8 });
    writeManifest(modelsDir, await buildManifest(modelsDir));
    const verifier = new ModelVerifier(modelsDir);
    const checked = new TextEmbedder({ modelsDir, model: "checked", check: verifier.require });
    expect(await checked.unavailableReason()).toBeNull();
    expect(await checked.dimension()).toBe(8);
    await checked.close();

    const weights = path.join(modelsDir, "checked", "onnx", "model_quantized.onnx");
    const bytes = readFileSync(weights);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    writeFileSync(weights, bytes);
    const refused = new TextEmbedder({ modelsDir, model: "checked", check: verifier.require });
    expect(await refused.unavailableReason()).toMatch(/model folder "checked" .* is refused: onnx\/model_quantized\.onnx has SHA-256 [0-9a-f]{64}, the manifest says/);
    await expect(refused.embed(["x"])).rejects.toThrow("is refused");
    await expect(refused.tokenizer()).rejects.toThrow("is refused");
    await expect(refused.chunkWindow()).rejects.toThrow("is refused");
    rmSync(path.join(modelsDir, "manifest.json"));
  });

  test("the folder's prompts prefix queries and documents, and its pooling config is used", async () => {
    await buildFixtureEmbeddingModel(modelsDir, { dim: DIM, name: "prompted" });
    writeFileSync(
      path.join(modelsDir, "prompted", "config_sentence_transformers.json"),
      JSON.stringify({ prompts: { query: "pressure query: ", passage: "valve passage: " } }),
    );
    const prompted = new TextEmbedder({ modelsDir, model: "prompted" });
    const plain = new TextEmbedder({ modelsDir, model: "all-MiniLM-L6-v2" });
    expect((await prompted.usage()).prompts).toEqual({ query: "pressure query: ", document: "valve passage: " });
    const [asQuery] = await prompted.embed(["pump seal"], "query");
    const [asDocument] = await prompted.embed(["pump seal"]);
    const [expectedQuery, expectedDocument] = await plain.embed(["pressure query: pump seal", "valve passage: pump seal"]);
    for (let i = 0; i < DIM; i++) {
      expect(asQuery![i]!).toBeCloseTo(expectedQuery![i]!, 5);
      expect(asDocument![i]!).toBeCloseTo(expectedDocument![i]!, 5);
    }
    // The document prompt takes room in the window chunks are sized for.
    const prompt = (await prompted.tokenizer()).count("valve passage: ");
    expect(prompt).toBeGreaterThan(0);
    expect((await prompted.tokenizer()).maxTokens).toBe((await plain.tokenizer()).maxTokens - prompt);
    // The server's window (no tokenizer loaded) is the whole one; the reader takes the prompt off.
    expect(await prompted.chunkWindow()).toBe((await plain.tokenizer()).maxTokens);

    // [CLS] pooling: the fixture's [CLS] vector is the same in every text.
    mkdirSync(path.join(modelsDir, "prompted", "1_Pooling"), { recursive: true });
    writeFileSync(path.join(modelsDir, "prompted", "1_Pooling", "config.json"), JSON.stringify({ pooling_mode_cls_token: true, pooling_mode_mean_tokens: false }));
    const cls = new TextEmbedder({ modelsDir, model: "prompted" });
    expect((await cls.usage()).pooling).toBe("cls");
    const [a, b] = await cls.embed(["pump seal", "an unrelated sentence about weather"]);
    expect(Array.from(a!)).toEqual(Array.from(b!));
    await Promise.all([prompted.close(), plain.close(), cls.close()]);
  });

  test("a missing folder: tokenizer() and embed() reject naming it", async () => {
    const missing = new TextEmbedder({ modelsDir, model: "no-such-model" });
    const folder = "models/no-such-model";
    expect(await missing.unavailableReason()).toContain(folder);
    expect(await missing.unavailableReason()).not.toContain(modelsDir);
    await expect(missing.tokenizer()).rejects.toThrow(`text embedding model "no-such-model" is not installed: folder ${folder} does not exist`);
    await expect(missing.chunkWindow()).rejects.toThrow(`folder ${folder} does not exist`);
    await expect(missing.embed(["x"])).rejects.toThrow(folder);
    const escaping = new TextEmbedder({ modelsDir, model: "../elsewhere" });
    expect(await escaping.unavailableReason()).toMatch(/must be a folder name inside the models directory/);
    await expect(escaping.tokenizer()).rejects.toThrow(/must be a folder name inside the models directory/);
  });

  test("nothing was fetched over the network, and transformers.js refuses to", async () => {
    expect(fetched.filter((u) => /^https?:/i.test(u))).toEqual([]);
    expect(transformersFetched.filter((u) => /^https?:/i.test(u))).toEqual([]);
    const { env } = await import("@huggingface/transformers");
    expect(env.allowRemoteModels).toBe(false);
    await expect(env.fetch("https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/config.json")).rejects.toThrow(/refused to fetch/);
    expect(fetched.filter((u) => /^https?:/i.test(u))).toEqual([]);
  });
});
