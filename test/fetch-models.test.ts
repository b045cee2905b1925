/**
 * scripts/fetch-models.ts against a local stand-in for the Hugging Face Hub (the real one is not
 * reachable here): the Hub's URL layout, LFS redirects carrying x-linked-etag / x-linked-size,
 * integrity refusal, atomic replacement of a folder, and the manifest it writes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { readManifest } from "../src/models/manifest.ts";
import { ModelVerifier } from "../src/models/model-verifier.ts";
import { run } from "./support/process.ts";
import { tempDir } from "./support/server.ts";

const SCRIPT = path.join(import.meta.dir, "..", "scripts", "fetch-models.ts");
const REPO = "Xenova/all-MiniLM-L6-v2";
const weights = new Uint8Array(200_000).map((_, i) => (i * 7 + 3) & 255);
const files: Record<string, Uint8Array<ArrayBuffer>> = {
  "config.json": new TextEncoder().encode('{"hidden_size": 384}'),
  "tokenizer.json": new TextEncoder().encode('{"model": {}}'),
  "tokenizer_config.json": new TextEncoder().encode("{}"),
  "special_tokens_map.json": new TextEncoder().encode("{}"),
  "vocab.txt": new TextEncoder().encode("[PAD]\n[UNK]\n"),
  "onnx/model_quantized.onnx": weights,
};
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** What the stand-in Hub does wrong, per test. */
const faults = { corruptCdn: false, missing: null as string | null };
const requested: string[] = [];
let hub: ReturnType<typeof Bun.serve>;
const dirs: string[] = [];

beforeAll(() => {
  hub = Bun.serve({
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      requested.push(url.pathname);
      const cdn = url.pathname.match(/^\/cdn\/(.+)$/);
      if (cdn) {
        const bytes = Buffer.from(files[decodeURIComponent(cdn[1]!)]!);
        if (faults.corruptCdn) bytes[100] = bytes[100]! ^ 1;
        return new Response(bytes);
      }
      const match = url.pathname.match(/^\/(.+?\/.+?)\/resolve\/main\/(.+)$/);
      const name = match?.[2];
      if (!match || match[1] !== REPO || !name || !files[name] || name === faults.missing) return new Response("Entry not found", { status: 404 });
      if (name.endsWith(".onnx")) {
        // Large files: a redirect to the CDN with the LFS object's SHA-256 and size.
        return new Response(null, {
          status: 302,
          headers: { location: `/cdn/${encodeURIComponent(name)}`, "x-linked-etag": `"${sha256(files[name]!)}"`, "x-linked-size": String(files[name]!.length) },
        });
      }
      return new Response(Buffer.from(files[name]!), { headers: { etag: `"${createHash("sha1").update(files[name]!).digest("hex")}"` } });
    },
  });
});
afterAll(() => {
  hub.stop(true);
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

function fetchModels(dir: string, ...args: string[]) {
  return run([process.execPath, SCRIPT, "--dir", dir, ...args], { env: { HF_ENDPOINT: `http://127.0.0.1:${hub.port}` } });
}

function freshDir(): string {
  const dir = tempDir("mediabox-fetch-models-");
  dirs.push(dir);
  return dir;
}

describe("scripts/fetch-models.ts", () => {
  test("downloads the text model folder through the Hub layout and writes the manifest with role and source", async () => {
    faults.corruptCdn = false;
    faults.missing = null;
    const dir = freshDir();
    const res = await fetchModels(dir, "text-embedding");
    expect(res.stderr).not.toContain("fetch-models:");
    expect(res.exitCode).toBe(0);
    expect(res.stdout.trim()).toBe(path.join(dir, "manifest.json"));
    expect(res.stderr).toContain("MEDIABOX_TEXT_EMBEDDING_MODEL");
    for (const [name, bytes] of Object.entries(files)) expect(readFileSync(path.join(dir, "all-MiniLM-L6-v2", name))).toEqual(Buffer.from(bytes));
    expect(requested).toContain(`/${REPO}/resolve/main/onnx/model_quantized.onnx`);
    expect(requested).toContain("/cdn/onnx%2Fmodel_quantized.onnx");
    const manifest = readManifest(dir)!;
    expect(manifest.models).toHaveLength(1);
    expect(manifest.models[0]).toMatchObject({ name: "all-MiniLM-L6-v2", role: "text_embedding", source: `${REPO}@main` });
    expect(manifest.models[0]!.files.find((f) => f.path === "onnx/model_quantized.onnx")).toEqual({ path: "onnx/model_quantized.onnx", bytes: weights.length, sha256: sha256(weights) });
    await new ModelVerifier(dir, { requireManifest: true }).require("all-MiniLM-L6-v2");
    expect(readdirSync(dir).sort()).toEqual(["all-MiniLM-L6-v2", "manifest.json"]);
  });

  test("bytes that do not match the published SHA-256 are refused and the installed folder is left as it was", async () => {
    const dir = freshDir();
    faults.corruptCdn = false;
    expect((await fetchModels(dir)).exitCode).toBe(0);
    const before = readFileSync(path.join(dir, "manifest.json"), "utf8");

    faults.corruptCdn = true;
    const res = await fetchModels(dir);
    faults.corruptCdn = false;
    expect(res.exitCode).toBe(1);
    expect(res.stderr).toMatch(/onnx\/model_quantized\.onnx: SHA-256 [0-9a-f]{64} does not match the published [0-9a-f]{64}/);
    expect(readFileSync(path.join(dir, "all-MiniLM-L6-v2", "onnx", "model_quantized.onnx"))).toEqual(Buffer.from(weights));
    expect(readFileSync(path.join(dir, "manifest.json"), "utf8")).toBe(before);
    expect(readdirSync(dir).sort()).toEqual(["all-MiniLM-L6-v2", "manifest.json"]);
  });

  test("a missing file fails naming its URL and leaves no folder; unknown model names are a usage error", async () => {
    const dir = freshDir();
    faults.missing = "tokenizer.json";
    const res = await fetchModels(dir);
    faults.missing = null;
    expect(res.exitCode).toBe(1);
    expect(res.stderr).toContain(`/${REPO}/resolve/main/tokenizer.json: HTTP 404`);
    expect(readdirSync(dir)).toEqual([]);

    const unknown = await fetchModels(dir, "ocr");
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("unknown model ocr; choose from text-embedding, image-embedding, captioning or all");
  });

  test("a manifest written here keeps the other folders' entries (roles and sources of a mixed directory)", async () => {
    const dir = freshDir();
    mkdirSync(path.join(dir, "site-model"));
    writeFileSync(path.join(dir, "site-model", "weights.bin"), "local");
    expect((await fetchModels(dir)).exitCode).toBe(0);
    const manifest = readManifest(dir)!;
    expect(manifest.models.map((m) => [m.name, m.role, m.source ?? null])).toEqual([
      ["all-MiniLM-L6-v2", "text_embedding", `${REPO}@main`],
      ["site-model", "other", null],
    ]);
    expect(readdirSync(dir).sort()).toEqual(["all-MiniLM-L6-v2", "manifest.json", "site-model"]);
  });
});
