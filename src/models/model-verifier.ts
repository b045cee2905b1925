/**
 * Checks model folders against the models directory's manifest before they are loaded. Every
 * folder-model loader (text embeddings, CLIP, captioning, OCR languages) calls `require(name)` first; the server
 * also runs `verifyAll()` at start and logs the outcome, and `mediabox models verify` prints it.
 *
 * - A folder listed in the manifest must hold every listed file with the listed size and SHA-256;
 *   otherwise it is refused with a message naming the file and what differs.
 * - A folder the manifest does not list (or any folder when there is no manifest) is used as it
 *   is, unless `requireManifest` is on, in which case it is refused.
 * - The manifest is parsed again whenever its file changes, so a site that fixes a folder or its
 *   manifest needs no restart; file hashes are remembered per (path, size, mtime), so a check of
 *   unchanged files costs a few stat calls.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../log.ts";
import { listModelFolders, type Manifest, type ManifestModel, manifestPath, type ModelRole, readManifest, sha256File } from "./manifest.ts";
import { errorMessage } from "../errors.ts";
import { modelsReady } from "../native/packages.ts";

export type ModelStatus = "verified" | "failed" | "unlisted";

export interface ModelReport {
  name: string;
  role: ModelRole | null;
  status: ModelStatus;
  /** What differs from the manifest (status failed), or why an unlisted folder is refused. */
  problems: string[];
}

export interface ModelVerifierOptions {
  /** Refuse folders the manifest does not list (MEDIABOX_MODELS_REQUIRE_MANIFEST). */
  requireManifest?: boolean;
}

/** Called by model loaders with the folder name before loading; rejects when the folder may not be used. */
export type ModelCheck = (name: string) => Promise<void>;

export class ModelVerifier {
  readonly modelsDir: string;
  private readonly requireManifest: boolean;
  private readonly hashes = new Map<string, { key: string; sha256: Promise<string> }>();
  private parsed: { key: string; manifest: Manifest | null } | undefined;

  constructor(modelsDir: string, options: ModelVerifierOptions = {}) {
    this.modelsDir = path.resolve(modelsDir);
    this.requireManifest = options.requireManifest ?? false;
  }

  /** Rejects with the reason when folder `name` fails the manifest (or is unlisted while one is required). */
  readonly require: ModelCheck = async (name) => {
    await modelsReady(this.modelsDir);
    const report = await this.check(name, await this.manifest());
    if (report.status === "failed" || (report.status === "unlisted" && this.requireManifest)) {
      throw new Error(`model folder "${name}" in ${this.modelsDir} is refused: ${report.problems.join("; ")}`);
    }
  };

  /**
   * Every folder in the models directory and every model the manifest lists, with the manifest's
   * path (null when there is none). Throws ManifestError for a malformed manifest.
   */
  async verifyAll(): Promise<{ manifest: string | null; reports: ModelReport[] }> {
    await modelsReady(this.modelsDir);
    const manifest = await this.manifest();
    const names = new Set([...listModelFolders(this.modelsDir), ...(manifest?.models.map((m) => m.name) ?? [])]);
    const reports: ModelReport[] = [];
    for (const name of [...names].sort()) reports.push(await this.check(name, manifest));
    return { manifest: manifest ? manifestPath(this.modelsDir) : null, reports };
  }

  /** The manifest, parsed again only when the file changed (checks run on every search). */
  private async manifest(): Promise<Manifest | null> {
    const info = await stat(manifestPath(this.modelsDir)).catch(() => null);
    const key = info ? `${info.size}:${info.mtimeMs}:${info.ino}` : "absent";
    if (this.parsed?.key !== key) this.parsed = { key, manifest: readManifest(this.modelsDir) };
    return this.parsed.manifest;
  }

  private async check(name: string, manifest: Manifest | null): Promise<ModelReport> {
    const listed = manifest?.models.find((m) => m.name === name);
    if (!listed) {
      const problems = this.requireManifest
        ? [manifest ? `not listed in ${manifestPath(this.modelsDir)} (a manifest is required)` : `there is no ${manifestPath(this.modelsDir)} (a manifest is required)`]
        : [];
      return { name, role: null, status: "unlisted", problems };
    }
    const problems = await this.compare(listed);
    return { name, role: listed.role, status: problems.length ? "failed" : "verified", problems };
  }

  private async compare(model: ManifestModel): Promise<string[]> {
    const folder = path.join(this.modelsDir, model.name);
    if (!(await stat(folder).catch(() => null))?.isDirectory()) return [`folder ${folder} does not exist`];
    const problems: string[] = [];
    for (const entry of model.files) {
      const full = path.join(folder, entry.path);
      const info = await stat(full).catch(() => null);
      if (!info?.isFile()) {
        problems.push(`${entry.path} is missing`);
        continue;
      }
      if (info.size !== entry.bytes) {
        problems.push(`${entry.path} is ${info.size} bytes, the manifest says ${entry.bytes}`);
        continue;
      }
      const sha256 = await this.hash(full, `${info.size}:${info.mtimeMs}`);
      if (sha256 !== entry.sha256) problems.push(`${entry.path} has SHA-256 ${sha256}, the manifest says ${entry.sha256}`);
    }
    return problems;
  }

  /** Shared by concurrent checks of the same unchanged file, so a big weights file is hashed once. */
  private hash(file: string, key: string): Promise<string> {
    const known = this.hashes.get(file);
    if (known?.key === key) return known.sha256;
    const sha256 = sha256File(file);
    this.hashes.set(file, { key, sha256 });
    sha256.catch(() => this.hashes.delete(file));
    return sha256;
  }
}

/**
 * At start, in the background (hashing large weights must not delay the listener): one log line
 * per model folder, an error for each refused one.
 */
export function logModelVerification(models: ModelVerifier, log: Logger): void {
  models.verifyAll().then(
    ({ manifest, reports }) => {
      if (!manifest && reports.length) {
        log.info("no models manifest; model folders are used unverified", { models_dir: models.modelsDir, folders: reports.map((r) => r.name) });
      }
      for (const { name, role, status, problems } of reports) {
        if (problems.length) log.error("model folder refused", { model: name, role, status, problems });
        else if (status === "verified") log.info("model folder verified", { model: name, role });
      }
    },
    (err: unknown) => log.error("models manifest unreadable; listed model folders are refused", { err: errorMessage(err) }),
  );
}
