/**
 * Downloads model folders on a CONNECTED machine, for carrying to an offline site. The server
 * itself never downloads anything; this script is not part of the binary.
 *
 *   bun scripts/fetch-models.ts [--dir models] [--endpoint https://huggingface.co] [--revision main] [MODEL ...]
 *
 * MODEL is text-embedding (the default), image-embedding, captioning or all. Each folder is
 * fetched from the Hugging Face Hub layout (`<endpoint>/<repo>/resolve/<revision>/<file>`, so a
 * mirror works through --endpoint or HF_ENDPOINT), checked against the size and SHA-256 the Hub
 * publishes for large files, assembled beside its final place and renamed into it, so a failed
 * or interrupted download never leaves a half folder and never damages the one already there.
 * Finally the directory's manifest.json is rewritten with each folder's role and source: copy the
 * directory (folders and manifest) to the site's MEDIABOX_MODELS_DIR.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { buildManifest, type ModelRole, writeManifest } from "../src/models/manifest.ts";
import { normalizeEtag } from "../src/storage/blob-store.ts";
import { writeStream } from "../src/storage/disk.ts";

interface CatalogEntry {
  repo: string;
  folder: string;
  role: ModelRole;
  /** The setting that points the server at the folder (its default for the text model). */
  setting: string;
  files: string[];
}

const CATALOG: Record<string, CatalogEntry> = {
  "text-embedding": {
    repo: "Xenova/all-MiniLM-L6-v2",
    folder: "all-MiniLM-L6-v2",
    role: "text_embedding",
    setting: "MEDIABOX_TEXT_EMBEDDING_MODEL (default all-MiniLM-L6-v2)",
    files: ["config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "onnx/model_quantized.onnx"],
  },
  "image-embedding": {
    repo: "Xenova/clip-vit-base-patch32",
    folder: "clip-vit-base-patch32",
    role: "image_embedding",
    setting: "MEDIABOX_IMAGE_EMBEDDING_MODEL=clip-vit-base-patch32",
    // Vision tower for similar images; text tower and tokenizer for zero-shot content categories.
    files: [
      "config.json",
      "preprocessor_config.json",
      "tokenizer.json",
      "tokenizer_config.json",
      "special_tokens_map.json",
      "onnx/vision_model_quantized.onnx",
      "onnx/text_model_quantized.onnx",
    ],
  },
  captioning: {
    repo: "Xenova/vit-gpt2-image-captioning",
    folder: "vit-gpt2-image-captioning",
    role: "captioning",
    setting: "MEDIABOX_CAPTION_MODEL=vit-gpt2-image-captioning",
    files: [
      "config.json",
      "generation_config.json",
      "preprocessor_config.json",
      "tokenizer.json",
      "tokenizer_config.json",
      "special_tokens_map.json",
      "onnx/encoder_model_quantized.onnx",
      "onnx/decoder_model_merged_quantized.onnx",
    ],
  },
};

const SHA256 = /^[0-9a-f]{64}$/;
const etag = (value: string | null) => (value === null ? null : normalizeEtag(value));

class FetchError extends Error {}

/** Downloads one file to `target`, checking it against what the server says it should be. */
async function download(url: string, target: string): Promise<void> {
  let response = await fetch(url, { redirect: "manual" });
  // The Hub's headers for large (LFS) files, on the redirect to the CDN: their SHA-256 and size.
  let expectedSha = etag(response.headers.get("x-linked-etag"));
  let expectedSize = response.headers.get("x-linked-size");
  if (response.status >= 300 && response.status < 400) {
    const location = response.headers.get("location");
    if (!location) throw new FetchError(`${url}: redirect without a location`);
    response = await fetch(new URL(location, url), { redirect: "follow" });
  } else {
    // Served directly: a 64-hex ETag is the file's SHA-256 (small files carry a git SHA-1 instead).
    expectedSha ??= etag(response.headers.get("etag"));
    // A compressed response's length is not the file's (fetch hands back the decoded bytes).
    if (!response.headers.get("content-encoding")) expectedSize ??= response.headers.get("content-length");
  }
  if (!response.ok || !response.body) throw new FetchError(`${url}: HTTP ${response.status}`);
  // Hashed while written, so the file is read once.
  const { size, sha256 } = await writeStream(response.body, target);
  if (expectedSize !== null && Number(expectedSize) !== size) throw new FetchError(`${url}: received ${size} bytes, expected ${expectedSize}`);
  if (expectedSha && SHA256.test(expectedSha) && sha256 !== expectedSha) {
    throw new FetchError(`${url}: SHA-256 ${sha256} does not match the published ${expectedSha}`);
  }
}

/** Fetches one catalog entry into `<dir>/<folder>`, replacing what was there only when every file arrived intact. */
async function fetchModel(dir: string, entry: CatalogEntry, endpoint: string, revision: string): Promise<void> {
  const final = path.join(dir, entry.folder);
  const partial = path.join(dir, `.${entry.folder}.partial-${process.pid}`);
  rmSync(partial, { recursive: true, force: true });
  try {
    for (const file of entry.files) {
      const url = `${endpoint}/${entry.repo}/resolve/${encodeURIComponent(revision)}/${file}`;
      process.stderr.write(`  ${entry.repo} ${file}\n`);
      await download(url, path.join(partial, file));
    }
    const old = path.join(dir, `.${entry.folder}.old-${process.pid}`);
    if (existsSync(final)) renameSync(final, old);
    renameSync(partial, final);
    rmSync(old, { recursive: true, force: true });
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      dir: { type: "string", default: "models" },
      endpoint: { type: "string", default: process.env.HF_ENDPOINT || "https://huggingface.co" },
      revision: { type: "string", default: "main" },
    },
  });
  const names = positionals.length ? positionals : ["text-embedding"];
  const wanted = names.includes("all") ? Object.keys(CATALOG) : names;
  const unknown = wanted.filter((name) => !CATALOG[name]);
  if (unknown.length) {
    process.stderr.write(`unknown model ${unknown.join(", ")}; choose from ${Object.keys(CATALOG).join(", ")} or all\n`);
    return 2;
  }
  const dir = path.resolve(values.dir);
  const endpoint = values.endpoint.replace(/\/+$/, "");
  mkdirSync(dir, { recursive: true });
  const roles: Record<string, ModelRole> = {};
  const sources: Record<string, string> = {};
  for (const name of wanted) {
    const entry = CATALOG[name]!;
    process.stderr.write(`fetching ${name} (${entry.repo}@${values.revision}) into ${path.join(dir, entry.folder)}\n`);
    await fetchModel(dir, entry, endpoint, values.revision);
    roles[entry.folder] = entry.role;
    sources[entry.folder] = `${entry.repo}@${values.revision}`;
  }
  const manifest = writeManifest(dir, await buildManifest(dir, { roles, sources }));
  process.stdout.write(`${manifest}\n`);
  process.stderr.write(
    `done. Copy ${dir} (folders and manifest.json) to the site's MEDIABOX_MODELS_DIR, then set:\n` +
      wanted.map((name) => `  ${CATALOG[name]!.setting}\n`).join(""),
  );
  return 0;
}

try {
  process.exit(await main(process.argv.slice(2)));
} catch (err) {
  process.stderr.write(`fetch-models: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
