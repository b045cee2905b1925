/**
 * Rules of the code's shape that a reviewer would otherwise have to remember: each table that
 * has an owner is written by that owner alone.
 */
import { expect, test } from "bun:test";
import { Glob } from "bun";
import { join, relative } from "node:path";

const SRC = join(import.meta.dir, "..", "src");

/** Source files (relative to src/) holding SQL that writes `table`, outside `ownerDirs`. */
async function writersOf(table: string, owners: string[]): Promise<string[]> {
  const writes = new RegExp(`\\b(UPDATE\\s+${table}\\s+SET|INSERT\\s+(OR\\s+\\w+\\s+)?INTO\\s+${table}\\b|DELETE\\s+FROM\\s+${table}\\b|REPLACE\\s+INTO\\s+${table}\\b)`, "i");
  const found: string[] = [];
  for await (const path of new Glob("**/*.ts").scan(SRC)) {
    // Migrations create and reshape every table; they own none of the rows.
    if (path.startsWith("db/migrations/") || owners.some((owner) => path === owner || path.startsWith(owner))) continue;
    if (writes.test(await Bun.file(join(SRC, path)).text())) found.push(relative(SRC, join(SRC, path)));
  }
  return found.sort();
}

test("only src/files/ writes the files table", async () => {
  expect(await writersOf("files", ["files/"])).toEqual([]);
});

test("only the stage runner writes file_stage_runs", async () => {
  expect(await writersOf("file_stage_runs", ["processing/stage-runner.ts"])).toEqual([]);
});

test("only src/jobs/ writes the jobs table", async () => {
  expect(await writersOf("jobs", ["jobs/"])).toEqual([]);
});

/** Source files (relative to src/) whose text matches `pattern`, outside `owners` (files or folders). */
async function filesMatching(pattern: RegExp, owners: string[]): Promise<string[]> {
  const found: string[] = [];
  for await (const path of new Glob("**/*.ts").scan(SRC)) {
    if (owners.some((owner) => path === owner || path.startsWith(owner))) continue;
    if (pattern.test(await Bun.file(join(SRC, path)).text())) found.push(path);
  }
  return found.sort();
}

test("blob stores are asked for capabilities, never checked with instanceof outside src/storage/", async () => {
  expect(await filesMatching(/instanceof\s+(LocalBlobStore|S3BlobStore)\b|blobs\.kind\b/, ["storage/"])).toEqual([]);
});

test("only storage/data-dir.ts names the places under the data directory", async () => {
  // A quoted name is a path being built (join(dir, "staging")); comments may still mention them.
  const names = /["'](mediabox\.db|mediabox\.lock|local-s3\.json|staging|secrets|blobs)["']/;
  expect(await filesMatching(names, ["storage/data-dir.ts"])).toEqual([]);
});
