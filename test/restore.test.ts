/**
 * `mediabox restore FILE` through the real CLI: refused while a server runs on the data
 * directory, refused for a file that is not a Mediabox database, and otherwise the backup is in
 * place (the organizations it held are back, later changes are gone) with the replaced database
 * kept beside it. A backup archive made while serving brings a file's blob and the secrets back
 * into an empty data directory (the file downloads again, local presigned URLs still verify), and
 * a damaged archive is refused before anything changes.
 */
import { afterEach, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as tar from "tar";
import { ApiClient, startTestServer } from "./support/server.ts";
import { join } from "node:path";
import { run, spawnServer, type ServerProcess } from "./support/process.ts";
import { tempDir } from "./support/server.ts";
import { testEngine } from "./support/suite-database.ts";

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

// The archive is of a SQLite data directory; on PostgreSQL backup and restore refuse (port-ops.test.ts checks that).
test.skipIf(testEngine() === "postgres")("a backup archive taken while serving brings the database, a file's blob and the secrets back into an empty data directory", async () => {
  const dir = tempDir("mediabox-archive-");
  dirs.push(dir);
  const dataDir = join(dir, "data");
  const server = await startTestServer({ dataDir });
  const tenant = await server.tenant({ tier: "CUSTOM" });
  const form = new FormData();
  form.append("file", new File(["The quay wall was repaired in March.\n"], "quay.txt"));
  const id = (await tenant.api.form("/files/upload", form)).body.image_id as string;
  const secret = readFileSync(join(dataDir, "secrets", "local-s3.json"), "utf8");
  const archive = join(dir, "backup.tar");
  const cli = (data: string, ...args: string[]) => run([process.execPath, MAIN, ...args, "--data-dir", data]);
  const made = await cli(dataDir, "backup", archive);
  expect(made.exitCode).toBe(0);
  expect(made.stderr).toMatch(/backup archive written \(.+\): database snapshot, [1-9]\d* blob\(s\), [1-9]\d* secret file\(s\), manifest with SHA-256 checksums/);
  await server.close();

  // What is inside: the manifest first, the snapshot, the blobs and secrets it lists with their checksums.
  const entries: string[] = [];
  await tar.list({ file: archive, onReadEntry: (e) => void entries.push(e.path) });
  expect(entries.slice(0, 2)).toEqual(["manifest.json", "mediabox.db"]);
  expect(entries.some((e) => e.startsWith("blobs/objects/"))).toBe(true);
  expect(entries).toContain("secrets/local-s3.json");

  // Into a new, empty data directory: everything is back.
  const fresh = join(dir, "fresh");
  const restored = await cli(fresh, "restore", archive);
  expect(restored.exitCode).toBe(0);
  expect(restored.stderr).toMatch(/restored: database \(schema version \d+\), [1-9]\d* blob\(s\) put back \(0 already there\), [1-9]\d* secret file\(s\)/);
  expect(readFileSync(join(fresh, "secrets", "local-s3.json"), "utf8")).toBe(secret);
  const again = await startTestServer({ dataDir: fresh });
  try {
    const client = new ApiClient(again.url, tenant.key);
    const file = await client.get(`/files/${id}`);
    expect(file.status).toBe(200);
    const download = await fetch(file.body.document_url);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe("The quay wall was repaired in March.\n");
  } finally {
    await again.close();
  }

  // A damaged archive (one byte of a listed file changed) is refused and changes nothing.
  const bytes = readFileSync(archive);
  const at = bytes.indexOf(Buffer.from("The quay wall"));
  expect(at).toBeGreaterThan(0);
  bytes[at] = "X".charCodeAt(0);
  const damaged = join(dir, "damaged.tar");
  writeFileSync(damaged, bytes);
  const other = join(dir, "other");
  const refused = await cli(other, "restore", damaged);
  expect(refused.exitCode).toBe(1);
  expect(refused.stderr).toContain("does not match its manifest checksum");
  expect(existsSync(join(other, "mediabox.db"))).toBe(false);
}, 180_000);
