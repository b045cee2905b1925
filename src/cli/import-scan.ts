/**
 * `mediabox import`: which files of a directory tree are imported, and their SHA-256.
 * Hidden names (dot-files and dot-directories) are left out; symbolic links are followed only
 * when they lead to somewhere inside the directory being imported (each real file is imported
 * once, and a directory reached twice is walked once, so link cycles end).
 */
import { lstatSync, readdirSync, realpathSync, statSync, type Stats } from "node:fs";
import { join, sep } from "node:path";

export interface ScannedFile {
  /** Absolute path of the file (a symbolic link's own path when reached through one). */
  path: string;
  /** Path relative to the imported directory, with "/" separators, as reported to the user. */
  rel: string;
  size: number;
}

export interface ScanResult {
  /** Files to import, ordered by relative path. */
  files: ScannedFile[];
  /** Entries left out with a reason worth telling (links leading out of the tree, special files). */
  skipped: { rel: string; reason: string }[];
  /** Subdirectories not entered because the scan was not recursive. */
  subdirectoriesNotEntered: number;
}

export function scanDirectory(root: string, options: { recursive: boolean }): ScanResult {
  const rootReal = realpathSync(root);
  const inside = (real: string) => real === rootReal || real.startsWith(rootReal.endsWith(sep) ? rootReal : rootReal + sep);
  const files: ScannedFile[] = [];
  const skipped: ScanResult["skipped"] = [];
  const seenFiles = new Set<string>();
  const seenDirs = new Set<string>([rootReal]);
  let notEntered = 0;

  const walk = (dir: string, relDir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch (err) {
      skipped.push({ rel: relDir || ".", reason: `cannot read the directory: ${(err as NodeJS.ErrnoException).code ?? String(err)}` });
      return;
    }
    for (const name of names) {
      if (name.startsWith(".")) continue;
      const path = join(dir, name);
      const rel = relDir ? `${relDir}/${name}` : name;
      let stats: Stats;
      let real: string;
      try {
        const own = lstatSync(path);
        if (own.isSymbolicLink()) {
          try {
            real = realpathSync(path);
          } catch {
            skipped.push({ rel, reason: "broken symbolic link" });
            continue;
          }
          if (!inside(real)) {
            skipped.push({ rel, reason: "symbolic link leading outside the directory (not followed)" });
            continue;
          }
          stats = statSync(real);
        } else {
          stats = own;
          real = realpathSync(path);
        }
      } catch (err) {
        skipped.push({ rel, reason: `cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}` });
        continue;
      }
      if (stats.isDirectory()) {
        if (!options.recursive) {
          notEntered += 1;
          continue;
        }
        if (seenDirs.has(real)) continue;
        seenDirs.add(real);
        walk(path, rel);
      } else if (stats.isFile()) {
        if (seenFiles.has(real)) continue;
        seenFiles.add(real);
        files.push({ path, rel, size: stats.size });
      } else {
        skipped.push({ rel, reason: "not a regular file" });
      }
    }
  };
  walk(root, "");
  files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return { files, skipped, subdirectoriesNotEntered: notEntered };
}

/** SHA-256 (hex) and size of a file, read as a stream so memory stays flat whatever its size. */
export async function hashFile(path: string): Promise<{ sha256: string; size: number }> {
  const hasher = new Bun.CryptoHasher("sha256");
  let size = 0;
  for await (const chunk of Bun.file(path).stream()) {
    hasher.update(chunk);
    size += chunk.byteLength;
  }
  return { sha256: hasher.digest("hex"), size };
}
