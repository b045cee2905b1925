import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { buildManifest, ManifestError, readManifest, writeManifest } from "../src/models/manifest.ts";
import { ModelVerifier } from "../src/models/model-verifier.ts";
import { photo } from "./support/images.ts";
import { run } from "./support/process.ts";
import { pollApi } from "./support/polling.ts";
import { startTestServer, tempDir, type TestServer } from "./support/server.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
/** Servers a test started: stopped after it, whatever happened. */
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A models directory with two model-shaped folders of made-up bytes. */
function modelsDir(): string {
  const dir = tempDir("mediabox-models-");
  dirs.push(dir);
  const write = (file: string, content: string | Uint8Array) => {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  };
  write("text-model/config.json", '{"hidden_size": 8}');
  write("text-model/tokenizer.json", "{}");
  write("text-model/onnx/model_quantized.onnx", new Uint8Array(70_000).map((_, i) => (i * 31) & 255));
  write("text-model/.DS_Store", "finder junk");
  write("captioner/onnx/decoder_model_merged_quantized.onnx", "decoder weights");
  return dir;
}

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

describe("the models manifest", () => {
  test("buildManifest lists every file of every folder with its size and SHA-256, skipping dot files", async () => {
    const dir = modelsDir();
    const manifest = await buildManifest(dir, { roles: { "text-model": "text_embedding" } });
    expect(manifest.version).toBe(1);
    expect(manifest.models.map((m) => [m.name, m.role])).toEqual([["captioner", "other"], ["text-model", "text_embedding"]]);
    const text = manifest.models[1]!;
    expect(text.files.map((f) => f.path)).toEqual(["config.json", "onnx/model_quantized.onnx", "tokenizer.json"]);
    const weights = text.files[1]!;
    expect(weights.bytes).toBe(70_000);
    expect(weights.sha256).toBe(sha256(path.join(dir, "text-model/onnx/model_quantized.onnx")));
  });

  test("a rebuilt manifest keeps the roles and sources recorded before", async () => {
    const dir = modelsDir();
    const first = await buildManifest(dir, { roles: { captioner: "captioning" } });
    first.models[0]!.source = "Xenova/vit-gpt2-image-captioning";
    writeManifest(dir, first);
    const again = await buildManifest(dir);
    expect(again.models[0]).toMatchObject({ name: "captioner", role: "captioning", source: "Xenova/vit-gpt2-image-captioning" });
  });

  test("a malformed manifest is an error naming the file and the fault", async () => {
    const dir = modelsDir();
    writeFileSync(path.join(dir, "manifest.json"), "{not json");
    expect(() => readManifest(dir)).toThrow(ManifestError);
    expect(() => readManifest(dir)).toThrow(/manifest\.json is not valid JSON/);
    writeFileSync(path.join(dir, "manifest.json"), JSON.stringify({ version: 1, models: [{ name: "x", role: "oracle", files: [] }] }));
    expect(() => readManifest(dir)).toThrow(/\/models\/0\/role/);
    const entry = { path: "../../etc/passwd", bytes: 1, sha256: "0".repeat(64) };
    writeFileSync(path.join(dir, "manifest.json"), JSON.stringify({ version: 1, models: [{ name: "x", role: "other", files: [entry] }] }));
    expect(() => readManifest(dir)).toThrow(/must be a path inside its folder/);
    const verifier = new ModelVerifier(dir);
    await expect(verifier.require("text-model")).rejects.toThrow(/must be a path inside its folder/);
  });
});

describe("ModelVerifier", () => {
  test("verified folders pass; a changed byte, a truncated file and a missing file are refused by name", async () => {
    const dir = modelsDir();
    writeManifest(dir, await buildManifest(dir));
    const verifier = new ModelVerifier(dir);
    await verifier.require("text-model");
    expect((await verifier.verifyAll()).reports.map((r) => [r.name, r.status])).toEqual([["captioner", "verified"], ["text-model", "verified"]]);

    const weights = path.join(dir, "text-model/onnx/model_quantized.onnx");
    const original = readFileSync(weights);
    const flipped = Buffer.from(original);
    flipped[12_345] = flipped[12_345]! ^ 1;
    writeFileSync(weights, flipped);
    await expect(verifier.require("text-model")).rejects.toThrow(
      `onnx/model_quantized.onnx has SHA-256 ${sha256(weights)}, the manifest says ${createHash("sha256").update(original).digest("hex")}`,
    );

    truncateSync(weights, 1000);
    await expect(verifier.require("text-model")).rejects.toThrow("onnx/model_quantized.onnx is 1000 bytes, the manifest says 70000");

    rmSync(path.join(dir, "text-model/tokenizer.json"));
    const report = (await verifier.verifyAll()).reports.find((r) => r.name === "text-model")!;
    expect(report.status).toBe("failed");
    expect(report.problems).toEqual(["onnx/model_quantized.onnx is 1000 bytes, the manifest says 70000", "tokenizer.json is missing"]);

    // Restoring the files is enough: the same verifier accepts the folder again.
    writeFileSync(weights, original);
    writeFileSync(path.join(dir, "text-model/tokenizer.json"), "{}");
    await verifier.require("text-model");
  });

  test("a listed folder that is gone is refused; unlisted folders are used unless a manifest is required", async () => {
    const dir = modelsDir();
    const manifest = await buildManifest(dir);
    writeManifest(dir, { ...manifest, models: manifest.models.filter((m) => m.name === "text-model") });
    const lenient = new ModelVerifier(dir);
    await lenient.require("captioner");
    const strict = new ModelVerifier(dir, { requireManifest: true });
    await expect(strict.require("captioner")).rejects.toThrow(/"captioner" .* is refused: not listed in .*manifest\.json \(a manifest is required\)/);
    await strict.require("text-model");

    rmSync(path.join(dir, "text-model"), { recursive: true });
    await expect(lenient.require("text-model")).rejects.toThrow(`folder ${path.join(dir, "text-model")} does not exist`);
    const { manifest: file, reports } = await lenient.verifyAll();
    expect(file).toBe(path.join(dir, "manifest.json"));
    expect(reports.map((r) => [r.name, r.status])).toEqual([["captioner", "unlisted"], ["text-model", "failed"]]);

    rmSync(path.join(dir, "manifest.json"));
    await expect(strict.require("captioner")).rejects.toThrow(/there is no .*manifest\.json \(a manifest is required\)/);
    expect((await lenient.verifyAll()).manifest).toBeNull();
  });
});

describe("mediabox models (CLI)", () => {
  const MAIN = path.join(import.meta.dir, "..", "src", "main.ts");
  const cli = (dir: string, ...args: string[]) =>
    run([process.execPath, MAIN, "models", ...args, "--models-dir", dir, "--caption-model", "captioner", "--ocr-languages", "eng+deu"]);

  test("manifest writes manifest.json with the configured roles; verify exits 1 naming a tampered file", async () => {
    const dir = modelsDir();
    const written = await cli(dir, "manifest");
    expect(written.exitCode).toBe(0);
    expect(written.stdout.trim()).toBe(path.join(dir, "manifest.json"));
    expect(written.stderr).toContain("recorded 2 model folder(s), 4 file(s): captioner (captioning), text-model (other)");

    const ok = await cli(dir, "verify");
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout).toBe("captioner\tcaptioning\tverified\t-\ntext-model\tother\tverified\t-\n");

    writeFileSync(path.join(dir, "captioner/onnx/decoder_model_merged_quantized.onnx"), "decoder weightz");
    const bad = await cli(dir, "verify");
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout).toContain("captioner\tcaptioning\tfailed\tonnx/decoder_model_merged_quantized.onnx has SHA-256 ");
    expect(bad.stderr).toContain("2 model folder(s), 1 refused");
    // The default text model's folder is not installed here: the built-in one serves meanwhile.
    expect(bad.stderr).toContain(`configured text_embedding model "bge-small-en-v1.5" is not installed in ${dir} (the built-in use-lite-sif serves; npm run models installs it)`);
    expect(bad.stderr).toContain(`configured OCR language "deu" is not installed: ${dir}/tesseract/deu.traineddata (or .gz) is missing`);
    // Which ffmpeg videos are analysed with, and its version.
    expect(bad.stderr).toMatch(/^videos: ffmpeg \S+ \(\/.*ffmpeg\), ffprobe \S+ \(\/.*ffprobe\); /m);

    const empty = tempDir("mediabox-models-empty-");
    dirs.push(empty);
    const none = await cli(empty, "manifest");
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain(`no model folders in ${empty}`);
  });
});

describe("a server with a models manifest (HTTP)", () => {
  test("a captioning model folder that does not match the manifest is refused: the description fails naming the file", async () => {
    const dir = modelsDir();
    writeManifest(dir, await buildManifest(dir, { roles: { captioner: "captioning" } }));
    writeFileSync(path.join(dir, "captioner/onnx/decoder_model_merged_quantized.onnx"), "swapped weights");
    const server = await startTestServer({ env: { MEDIABOX_MODELS_DIR: dir, MEDIABOX_CAPTION_MODEL: "captioner" } });
    servers.push(server);
    const tenant = await server.tenant({ tier: "ENTERPRISE" });
    const form = new FormData();
    form.append("file", new File([(await photo(3, 400, 300)) as Uint8Array<ArrayBuffer>], "m.jpg"));
    const id = (await tenant.api.form("/files/upload", form)).body.image_id;
    const described = (r: { body: Record<string, unknown> }) => ["completed", "failed", "skipped"].includes(r.body.description_status as string);
    const file = (await pollApi<Record<string, unknown>>(tenant, `/files/${id}`, described, { what: `the description of ${id} to finish` })).body;
    expect(file.description_status).toBe("failed");
    expect(file.description_error).toMatch(/model folder "captioner" in \S+ is refused/);
    // Tenants read the folder's name, never the server's path to it.
    expect(file.description_error).not.toContain(dir);
    expect(file.description_error).toContain("onnx/decoder_model_merged_quantized.onnx has SHA-256 ");
    expect(file.upload_description).toBeNull();
  });
});
