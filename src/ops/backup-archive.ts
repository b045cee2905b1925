/**
 * `mediabox backup FILE` writes one archive (POSIX tar, by node-tar) holding all an appliance
 * needs to come back: a consistent snapshot of the database (VACUUM INTO, safe while serving),
 * the local blob store's objects, the secrets folder, and `manifest.json` listing every other
 * entry with its size and SHA-256. The snapshot is taken first and blobs are write-once, so every
 * blob the snapshot references is in the archive (blobs that arrive later may be too, harmless).
 * With an S3 store the blobs stay in the bucket: the manifest names it, and its own versioning
 * or replication keeps them.
 *
 * `mediabox restore FILE` with such an archive unpacks it beside the data directory, checks
 * every entry against the manifest, then puts the database in place (restore.ts: the replaced one
 * kept), adds the blobs the store lacks, and replaces the secrets (the replaced folder kept).
 * Refused while a server holds the data directory.
 */
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { closeSync, copyFileSync, createReadStream, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import * as tar from "tar";
import type { Config } from "../config.ts";
import { BACKED_UP_PLACES, type DataDir } from "../storage/data-dir.ts";
import { DataDirInUseError, DataDirLock } from "./data-dir-lock.ts";
import { replaceDatabase, RestoreError, type RestoreOutcome } from "./restore.ts";

export const ARCHIVE_FORMAT = "mediabox-backup";
const MANIFEST = "manifest.json";
const { database: DATABASE, blobs: BLOBS, secrets: SECRETS } = BACKED_UP_PLACES;

export interface ManifestEntry {
  path: string;
  size: number;
  sha256: string;
}

export interface BackupManifest {
  format: typeof ARCHIVE_FORMAT;
  version: 1;
  created_at: string;
  schema_version: number;
  /** Where the blobs live: "local" (in the archive) or the S3 bucket that keeps them. */
  blob_store: { kind: "local" } | { kind: "s3"; bucket: string; endpoint: string | null };
  files: ManifestEntry[];
}

export interface BackupOutcome {
  archive: string;
  manifest: BackupManifest;
  bytes: number;
}

function sha256Of(path: string): Promise<string> {
  return new Promise((done, fail) => {
    const hash = createHash("sha256");
    createReadStream(path).on("data", (chunk) => hash.update(chunk)).on("error", fail).on("end", () => done(hash.digest("hex")));
  });
}

/** Regular files under `dir`, as paths relative to `base` with forward slashes. */
function filesUnder(dir: string, base: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(full, base));
    else if (entry.isFile()) out.push(relative(base, full).split(sep).join("/"));
  }
  return out.sort();
}

async function describe(path: string, rel: string): Promise<ManifestEntry> {
  return { path: rel, size: statSync(path).size, sha256: await sha256Of(path) };
}

export async function writeBackupArchive(db: Database, dataDir: DataDir, config: Pick<Config, "storage" | "s3Bucket" | "s3Endpoint">, target: string, now: Date): Promise<BackupOutcome> {
  const archive = resolve(target);
  if (existsSync(archive)) throw new RestoreError(`${archive} already exists; choose a new file name`);
  const staging = `${archive}.parts`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    // The snapshot first: every blob it references is already in the store (blobs are write-once).
    db.query("VACUUM INTO ?").run(join(staging, DATABASE));
    const schemaVersion = new Database(join(staging, DATABASE), { readonly: true }).query<{ v: number | null }, []>("SELECT max(version) AS v FROM schema_migrations").get()?.v ?? 0;
    const local = config.storage !== "s3";
    const fromDataDir = [...(local ? filesUnder(dataDir.blobs.objects, dataDir.root) : []), ...filesUnder(dataDir.secrets, dataDir.root)];
    const files: ManifestEntry[] = [await describe(join(staging, DATABASE), DATABASE)];
    for (const rel of fromDataDir) files.push(await describe(join(dataDir.root, rel), rel));
    const manifest: BackupManifest = {
      format: ARCHIVE_FORMAT,
      version: 1,
      created_at: now.toISOString(),
      schema_version: schemaVersion,
      blob_store: local ? { kind: "local" } : { kind: "s3", bucket: config.s3Bucket ?? "", endpoint: config.s3Endpoint ?? null },
      files,
    };
    writeFileSync(join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    // The manifest leads, so a reader meets it first; then the snapshot; then the data directory's files as listed.
    await tar.create({ file: archive, cwd: staging, portable: true }, [MANIFEST, DATABASE]);
    if (fromDataDir.length) await tar.replace({ file: archive, cwd: dataDir.root, portable: true }, fromDataDir);
    return { archive, manifest, bytes: statSync(archive).size };
  } catch (err) {
    rmSync(archive, { force: true });
    throw err;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** A POSIX tar archive ("ustar" at offset 257), as opposed to a bare database file (older backups). */
export function isTarArchive(path: string): boolean {
  const fd = openSync(path, "r");
  try {
    const magic = Buffer.alloc(5);
    return readSync(fd, magic, 0, 5, 257) === 5 && magic.toString("latin1") === "ustar";
  } finally {
    closeSync(fd);
  }
}

export interface ArchiveRestoreOutcome extends RestoreOutcome {
  blobsAdded: number;
  blobsPresent: number;
  secrets: number;
  /** Where the secrets folder it replaced was kept, or null. */
  previousSecrets: string | null;
  blobStore: BackupManifest["blob_store"];
}

/** Unpacks and checks an archive, then restores the database, blobs and secrets; the data directory must be free. */
export async function restoreBackupArchive(dataDir: DataDir, archivePath: string, now: Date): Promise<ArchiveRestoreOutcome> {
  const archive = resolve(archivePath);
  let lock: DataDirLock;
  try {
    lock = DataDirLock.acquire(dataDir);
  } catch (err) {
    if (err instanceof DataDirInUseError) throw new RestoreError(`${err.message.replace(/; stop it first.*$/, "")}; stop the server before restoring`);
    throw err;
  }
  const stamp = now.toISOString().replace(/[:.]/g, "-");
  const unpacked = join(dataDir.root, `restore-${stamp}`);
  try {
    mkdirSync(unpacked, { recursive: true });
    // Only regular files and directories, never outside the folder (node-tar strips absolute paths and "..").
    await tar.extract({ file: archive, cwd: unpacked, strict: true, filter: (_path, entry) => ("type" in entry ? entry.type === "File" || entry.type === "Directory" : true) });
    const manifest = readManifest(join(unpacked, MANIFEST));
    for (const entry of manifest.files) {
      const path = join(unpacked, entry.path);
      if (!path.startsWith(unpacked + sep) || !existsSync(path) || !lstatSync(path).isFile()) throw new RestoreError(`the archive lacks ${entry.path}, which its manifest lists`);
      if (statSync(path).size !== entry.size || (await sha256Of(path)) !== entry.sha256) throw new RestoreError(`${entry.path} in the archive does not match its manifest checksum: the archive is damaged`);
    }
    const restored = await replaceDatabase(dataDir, join(unpacked, DATABASE), now);
    let added = 0;
    let present = 0;
    for (const entry of manifest.files.filter((f) => f.path.startsWith(`${BLOBS}/`))) {
      const target = join(dataDir.root, entry.path);
      // Blobs are named by their key and never rewritten: one already there is the same object.
      if (existsSync(target)) {
        present += 1;
        continue;
      }
      mkdirSync(dirname(target), { recursive: true });
      renameSync(join(unpacked, entry.path), target);
      added += 1;
    }
    const secrets = manifest.files.filter((f) => f.path.startsWith(`${SECRETS}/`));
    let previousSecrets: string | null = null;
    if (secrets.length) {
      if (existsSync(dataDir.secrets)) {
        previousSecrets = `${dataDir.secrets}.before-restore-${stamp}`;
        renameSync(dataDir.secrets, previousSecrets);
      }
      for (const entry of secrets) {
        const target = join(dataDir.root, entry.path);
        mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
        copyFileSync(join(unpacked, entry.path), target);
      }
    }
    return { ...restored, blobsAdded: added, blobsPresent: present, secrets: secrets.length, previousSecrets, blobStore: manifest.blob_store };
  } finally {
    rmSync(unpacked, { recursive: true, force: true });
    lock.release();
  }
}

function readManifest(path: string): BackupManifest {
  if (!existsSync(path)) throw new RestoreError("the archive has no manifest.json: it is not a Mediabox backup");
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(readFileSync(path, "utf8")) as BackupManifest;
  } catch {
    throw new RestoreError("the archive's manifest.json is not JSON: the archive is damaged");
  }
  if (manifest.format !== ARCHIVE_FORMAT || manifest.version !== 1 || !Array.isArray(manifest.files)) {
    throw new RestoreError(`the archive's manifest is not a ${ARCHIVE_FORMAT} version 1 manifest`);
  }
  if (!manifest.files.some((f) => f.path === DATABASE)) throw new RestoreError("the archive's manifest lists no database");
  for (const f of manifest.files) {
    const allowed = f.path === DATABASE || f.path.startsWith(`${BLOBS}/`) || f.path.startsWith(`${SECRETS}/`);
    if (!allowed || f.path.split("/").includes("..")) throw new RestoreError(`the archive's manifest lists ${f.path}, which a backup never holds`);
  }
  return manifest;
}
