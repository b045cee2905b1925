/**
 * `mediabox restore FILE`: puts a database written by `mediabox backup` in place of the data
 * directory's. It refuses while a server holds the directory (the same lock `serve` takes), checks
 * that the file is a sound Mediabox database no newer than this binary, and keeps the database it
 * replaces beside it (`mediabox.db.before-restore-<time>`), so a restore can itself be undone.
 * A backup archive (backup-archive.ts) brings the blobs and secrets too; this is its database step.
 */
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { MIGRATIONS } from "../db/migrations/index.ts";
import { fsyncDir } from "../storage/disk.ts";
import type { DataDir } from "../storage/data-dir.ts";
import { DataDirInUseError, DataDirLock } from "./data-dir-lock.ts";

export class RestoreError extends Error {
  override name = "RestoreError";
}

export interface RestoreOutcome {
  restored: string;
  /** Where the database it replaced was kept, or null when there was none. */
  previous: string | null;
  schemaVersion: number;
}

export async function restoreDatabase(dataDir: DataDir, backupFile: string, now: Date): Promise<RestoreOutcome> {
  const source = resolve(backupFile);
  if (!existsSync(source)) throw new RestoreError(`${source} does not exist`);
  let lock: DataDirLock;
  try {
    lock = DataDirLock.acquire(dataDir);
  } catch (err) {
    if (err instanceof DataDirInUseError) throw new RestoreError(`${err.message.replace(/; stop it first.*$/, "")}; stop the server before restoring`);
    throw err;
  }
  try {
    return await replaceDatabase(dataDir, source, now);
  } finally {
    lock.release();
  }
}

/** Puts a checked database in place of the data directory's, keeping the one it replaces; the caller holds the lock. */
export async function replaceDatabase(dataDir: DataDir, source: string, now: Date): Promise<RestoreOutcome> {
  const schemaVersion = checkBackup(source);
  {
    const target = dataDir.database;
    const incoming = `${target}.restoring`;
    copyFileSync(source, incoming);
    let previous: string | null = null;
    if (existsSync(target)) {
      // Fold the write-ahead log into the file first, so the kept copy is whole on its own.
      const current = new Database(target);
      current.run("PRAGMA wal_checkpoint(TRUNCATE)");
      current.close();
      previous = join(dirname(target), `${basename(target)}.before-restore-${now.toISOString().replace(/[:.]/g, "-")}`);
      renameSync(target, previous);
    }
    for (const suffix of ["-wal", "-shm"]) rmSync(`${target}${suffix}`, { force: true });
    renameSync(incoming, target);
    await fsyncDir(dirname(target));
    return { restored: target, previous, schemaVersion };
  }
}

/** The backup's schema version; throws when it is not a sound Mediabox database this binary can run. */
function checkBackup(path: string): number {
  let db: Database;
  try {
    db = new Database(path, { readonly: true, strict: true });
  } catch (err) {
    throw new RestoreError(`${path} is not a readable SQLite database: ${String(err)}`);
  }
  try {
    const check = db.query<{ quick_check: string }, []>("PRAGMA quick_check").get()?.quick_check;
    if (check !== "ok") throw new RestoreError(`${path} is damaged (SQLite quick_check: ${check})`);
    const version = db.query<{ v: number | null }, []>("SELECT max(version) AS v FROM schema_migrations").get()?.v ?? 0;
    const known = Math.max(...MIGRATIONS.map((m) => m.version));
    if (version > known) throw new RestoreError(`${path} has schema version ${version}, newer than this mediabox (${known}); restore it with a newer binary`);
    return version;
  } catch (err) {
    if (err instanceof RestoreError) throw err;
    throw new RestoreError(`${path} is not a Mediabox database backup: ${String(err)}`);
  } finally {
    db.close();
  }
}
