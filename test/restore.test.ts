/**
 * `mediabox restore FILE` through the real CLI: refused while a server runs on the data
 * directory, refused for a file that is not a Mediabox database, and otherwise the backup is in
 * place (the organizations it held are back, later changes are gone) with the replaced database
 * kept beside it.
 */
import { afterEach, expect, test } from "bun:test";
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run, spawnServer, type ServerProcess } from "./support/process.ts";
import { tempDir } from "./support/server.ts";

const MAIN = join(import.meta.dir, "..", "src", "main.ts");
const servers: ServerProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop("SIGKILL")));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

test("restore puts a backup back, keeps the replaced database, and refuses while serving or for a foreign file", async () => {
  const dir = tempDir("mediabox-restore-");
  dirs.push(dir);
  const dataDir = join(dir, "data");
  const cli = (...args: string[]) => run([process.execPath, MAIN, ...args, "--data-dir", dataDir]);
  expect((await cli("orgs", "create", "Before Backup")).exitCode).toBe(0);
  const backup = join(dir, "backup.db");
  expect((await cli("backup", backup)).exitCode).toBe(0);
  expect((await cli("orgs", "create", "After Backup")).exitCode).toBe(0);

  const server = await spawnServer([process.execPath, MAIN, "serve", "--data-dir", dataDir]);
  servers.push(server);
  const refused = await cli("restore", backup);
  expect(refused.exitCode).toBe(1);
  expect(refused.stderr).toContain("stop the server before restoring");
  expect(refused.stderr.trim().split("\n")).toHaveLength(1);
  await server.stop("SIGTERM");

  const junk = join(dir, "junk.db");
  writeFileSync(junk, "not a database at all");
  const foreign = await cli("restore", junk);
  expect([foreign.exitCode, foreign.stderr]).toEqual([1, expect.stringContaining("not a")]);

  const restored = await cli("restore", backup);
  expect(restored.exitCode).toBe(0);
  expect(restored.stderr).toContain("the one it replaced is kept as");
  const orgs = (await cli("orgs", "list")).stdout;
  expect(orgs).toContain("Before Backup");
  expect(orgs).not.toContain("After Backup");
  expect(readdirSync(dataDir).some((f) => f.startsWith("mediabox.db.before-restore-"))).toBe(true);
  const usage = await cli("restore");
  expect(usage.exitCode).toBe(2);
});
