/**
 * The models directory's manifest, `<modelsDir>/manifest.json`: which model folders a site
 * installed, the role each serves, and the size and SHA-256 of every file in them. It is written
 * where the folders were downloaded (`mediabox models manifest`), carried to the site with them,
 * and checked by ModelVerifier before any folder model is loaded, so a truncated copy, a swapped
 * weights file or a half-finished rsync is refused with a message instead of producing wrong
 * vectors or captions.
 *
 * {
 *   "version": 1,
 *   "models": [
 *     { "name": "all-MiniLM-L6-v2", "role": "text_embedding", "source": "Xenova/all-MiniLM-L6-v2",
 *       "files": [ { "path": "onnx/model_quantized.onnx", "bytes": 22972370, "sha256": "afdb…" }, … ] }
 *   ]
 * }
 *
 * Models that arrive as npm packages (OCR, objects, faces, MobileNet features) are covered by the
 * lock file's integrity hashes instead and are not listed.
 */
import { digestFileOffThread } from "../storage/hash-threads.ts";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { errorMessage } from "../errors.ts";

export const MANIFEST_FILE = "manifest.json";
export const MODEL_ROLES = ["text_embedding", "image_embedding", "captioning", "ocr", "layout", "table", "other"] as const;
export type ModelRole = (typeof MODEL_ROLES)[number];

const ManifestFileSchema = Type.Object(
  {
    path: Type.String({ minLength: 1 }),
    bytes: Type.Integer({ minimum: 0 }),
    sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }),
  },
  { additionalProperties: false },
);
/** The registry package a folder was unpacked from (scripts/models): what /readyz reports. */
const ManifestPackageSchema = Type.Object(
  {
    registry: Type.Union([Type.Literal("pypi"), Type.Literal("maven"), Type.Literal("npm")]),
    name: Type.String({ minLength: 1 }),
    version: Type.String({ minLength: 1 }),
    /** Of the downloaded archive (wheel, jar, npm tarball). */
    sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }),
    license: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
const ManifestModelSchema = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    role: Type.Union(MODEL_ROLES.map((role) => Type.Literal(role))),
    source: Type.Optional(Type.String()),
    package: Type.Optional(ManifestPackageSchema),
    files: Type.Array(ManifestFileSchema, { minItems: 1 }),
  },
  { additionalProperties: false },
);
const ManifestSchema = Type.Object({ version: Type.Literal(1), models: Type.Array(ManifestModelSchema) }, { additionalProperties: false });

export type ManifestEntry = Static<typeof ManifestFileSchema>;
export type ManifestModel = Static<typeof ManifestModelSchema>;
export type ManifestPackage = Static<typeof ManifestPackageSchema>;
export type Manifest = Static<typeof ManifestSchema>;

export class ManifestError extends Error {}

export const manifestPath = (modelsDir: string) => path.join(path.resolve(modelsDir), MANIFEST_FILE);

/** A model name or file path that stays inside its parent folder (no absolute paths, no `..`). */
function isContainedPath(relative: string): boolean {
  return !path.isAbsolute(relative) && relative.split(/[\\/]/).every((part) => part !== "" && part !== "." && part !== "..");
}

/** The parsed manifest, or null when the models directory has none; ManifestError when it is unreadable or malformed. */
export function readManifest(modelsDir: string): Manifest | null {
  const file = manifestPath(modelsDir);
  if (!existsSync(file)) return null;
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new ManifestError(`models manifest ${file} is not valid JSON: ${errorMessage(err)}`);
  }
  const error = Value.Errors(ManifestSchema, data).First();
  if (error) throw new ManifestError(`models manifest ${file}: ${error.path || "/"} ${error.message}`);
  const manifest = data as Manifest;
  const names = new Set<string>();
  for (const model of manifest.models) {
    if (!isContainedPath(model.name)) throw new ManifestError(`models manifest ${file}: model name "${model.name}" must be a folder inside the models directory`);
    if (names.has(model.name)) throw new ManifestError(`models manifest ${file}: model "${model.name}" is listed twice`);
    names.add(model.name);
    for (const entry of model.files) {
      if (!isContainedPath(entry.path)) throw new ManifestError(`models manifest ${file}: file "${entry.path}" of "${model.name}" must be a path inside its folder`);
    }
  }
  return manifest;
}

/** Writes the manifest atomically (a crash never leaves half a file that would refuse every model). */
export function writeManifest(modelsDir: string, manifest: Manifest): string {
  const file = manifestPath(modelsDir);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(manifest, null, 2) + "\n");
  renameSync(temp, file);
  return file;
}

/**
 * SHA-256 of a file, streamed (weights files are hundreds of megabytes), on a hashing thread when
 * one runs: hashed on the event loop, a start's check of the installed models (121 MB) held it
 * for ~200 ms of every request's time.
 */
export async function sha256File(file: string): Promise<string> {
  const offThread = await digestFileOffThread(file);
  if (offThread) return offThread.sha256;
  const hasher = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(file).stream()) hasher.update(chunk);
  return hasher.digest("hex");
}

/** Every regular file under `folder` (following symlinks), relative, "/"-separated, sorted; dot files are skipped. */
export function listModelFiles(folder: string): string[] {
  const files: string[] = [];
  const walk = (dir: string, prefix: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (name.startsWith(".")) continue;
      const full = path.join(dir, name);
      const info = statSync(full, { throwIfNoEntry: false });
      if (info?.isDirectory()) walk(full, `${prefix}${name}/`);
      else if (info?.isFile()) files.push(`${prefix}${name}`);
    }
  };
  walk(folder, "");
  return files;
}

/** Model folders directly under the models directory (symlinked folders included), sorted. */
export function listModelFolders(modelsDir: string): string[] {
  if (!existsSync(modelsDir)) return [];
  return readdirSync(modelsDir)
    .filter((name) => !name.startsWith(".") && statSync(path.join(modelsDir, name), { throwIfNoEntry: false })?.isDirectory())
    .sort();
}

export interface BuildOptions {
  /** Roles of folders the configuration names (e.g. the text embedding model); others keep their listed role or get "other". */
  roles?: Record<string, ModelRole>;
  /** Where folders came from (e.g. "Xenova/all-MiniLM-L6-v2@main"); others keep their listed source. */
  sources?: Record<string, string>;
}

const sameFiles = (a: ManifestEntry[], b: ManifestEntry[]) =>
  a.length === b.length && a.every((entry, i) => entry.path === b[i]!.path && entry.sha256 === b[i]!.sha256);

/**
 * The manifest with `model` added, or replacing the entry of the same name; written atomically.
 * A malformed manifest is replaced by one listing only `model`.
 */
export function upsertManifestModel(modelsDir: string, model: ManifestModel): string {
  let manifest: Manifest | null = null;
  try {
    manifest = readManifest(modelsDir);
  } catch {
    manifest = null;
  }
  const models = (manifest?.models ?? []).filter((m) => m.name !== model.name);
  models.push(model);
  models.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return writeManifest(modelsDir, { version: 1, models });
}

/**
 * A manifest describing every folder now in the models directory, hashing each file. Roles and
 * sources already recorded in an existing manifest are kept unless `options` says otherwise.
 */
export async function buildManifest(modelsDir: string, options: BuildOptions = {}): Promise<Manifest> {
  const dir = path.resolve(modelsDir);
  let previous: Manifest | null = null;
  try {
    previous = readManifest(dir);
  } catch {
    previous = null; // a broken manifest is exactly what this rebuilds
  }
  const models: ManifestModel[] = [];
  for (const name of listModelFolders(dir)) {
    const folder = path.join(dir, name);
    const files = listModelFiles(folder);
    if (!files.length) continue;
    const before = previous?.models.find((m) => m.name === name);
    const source = options.sources?.[name] ?? before?.source;
    const entries: ManifestEntry[] = [];
    for (const file of files) {
      const full = path.join(folder, file);
      entries.push({ path: file, bytes: statSync(full).size, sha256: await sha256File(full) });
    }
    models.push({
      name,
      role: options.roles?.[name] ?? before?.role ?? "other",
      ...(source ? { source } : {}),
      // Kept while the folder still holds what the package gave (a site's own folder of that name has none).
      ...(before?.package && sameFiles(before.files, entries) ? { package: before.package } : {}),
      files: entries,
    });
  }
  return { version: 1, models };
}

/** What /readyz says about one installed model folder. */
export interface InstalledModel {
  name: string;
  role: ModelRole;
  /** Registry and package it was unpacked from ("maven dev.langchain4j:...@1.11.0-beta19"), else the manifest's source. */
  source: string | null;
  /** The package's version, null for a folder a site installed by hand. */
  version: string | null;
  /** The package archive's SHA-256; for a folder without one, that of its largest file (the weights). */
  sha256: string;
  license: string | null;
}

/** The models the manifest lists (none without one, or with a malformed one: the verifier logs that). */
export function installedModels(modelsDir: string): InstalledModel[] {
  let manifest: Manifest | null;
  try {
    manifest = readManifest(modelsDir);
  } catch {
    return [];
  }
  return (manifest?.models ?? []).map((model) => ({
    name: model.name,
    role: model.role,
    source: model.source ?? null,
    version: model.package?.version ?? null,
    sha256: model.package?.sha256 ?? [...model.files].sort((a, b) => b.bytes - a.bytes)[0]!.sha256,
    license: model.package?.license ?? null,
  }));
}
