/**
 * Watched folders through the file system and HTTP: a directory added with `mediabox watch` (the
 * real CLI on the running server's data directory), files dropped there stored into the mapped
 * folder with their subdirectories as folders, moved to done/ or failed/ with a reason file, a
 * file still open for writing left alone until it is closed; and MEDIABOX_WATCH_DIR in a server
 * process killed with kill -9 half-way through a drop of many files: after a restart every file is
 * in the library exactly once and in done/ exactly once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, writeSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { elf } from "./support/fixtures.ts";
import { pollApi, waitFor } from "./support/polling.ts";
import { withEngineDatabase } from "./support/engine-database.ts";
import { run, spawnServer, type ServerProcess } from "./support/process.ts";
import { engineEnvironment } from "./support/suite-database.ts";
import { ApiClient, startTestServer, tempDir, type TestServer } from "./support/server.ts";

const MAIN = join(import.meta.dir, "..", "src", "main.ts");

/** Every file under `dir`, relative, sorted. */
function filesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as any[])
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name).slice(dir.length + 1))
    .sort();
}

describe("a watched folder added with mediabox watch", () => {
  let server: TestServer;
  /** The CLI's environment: the database the server uses (its data directory's, or PostgreSQL's). */
  let cli: { env: Record<string, string> };
  beforeAll(async () => {
    server = await startTestServer({ env: { MEDIABOX_WATCH_POLL_MS: "100", MEDIABOX_WATCH_STABLE_MS: "300" } });
    cli = { env: await engineEnvironment(server.dataDir) };
  });
  afterAll(() => server.close());

  test("files are stored with their subfolders as folders, refused ones go to failed/ with the reason", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const dir = tempDir("mediabox-watch-");
    const added = await run([process.execPath, MAIN, "watch", dir, "--org", tenant.orgName, "--folder", "Scans/Inbox", "--data-dir", server.dataDir], cli);
    expect(added.exitCode, added.stderr).toBe(0);
    expect(added.stdout.trim()).toBe(dir);
    const listed = await run([process.execPath, MAIN, "watch", "--data-dir", server.dataDir], cli);
    expect(listed.stdout).toContain(dir);

    writeFileSync(join(dir, "note.txt"), "Invoice 42 from the watched folder");
    mkdirSync(join(dir, "Clients", "2024"), { recursive: true });
    writeFileSync(join(dir, "Clients", "2024", "plan.md"), "# Plan\n\nDeliver the report.");
    writeFileSync(join(dir, "tool.bin"), elf());
    await waitFor(() => filesIn(join(dir, "done")).length === 2 && filesIn(join(dir, "failed")).length === 2, {
      what: () => `done/ and failed/ to fill; done: ${filesIn(join(dir, "done"))}, failed: ${filesIn(join(dir, "failed"))}`,
    });
    expect(filesIn(join(dir, "done"))).toEqual(["Clients/2024/plan.md", "note.txt"]);
    expect(filesIn(join(dir, "failed"))).toEqual(["tool.bin", "tool.bin.reason.txt"]);
    expect(readFileSync(join(dir, "failed", "tool.bin.reason.txt"), "utf8")).toContain("executable");
    // Nothing left in the directory itself but done/, failed/ and the (empty) holding place.
    expect(filesIn(dir).filter((p) => !p.startsWith("done/") && !p.startsWith("failed/"))).toEqual([]);

    const watched = await pollApi(tenant, "/watched-folders", (r) => r.body.items[0]?.counts.done === 2, { what: "the watched folder's counts" });
    const entry = watched.body.items[0];
    expect(entry).toMatchObject({ path: dir, origin: "cli", active: true, counts: { ingesting: 0, done: 2, failed: 1 } });
    const byPath = Object.fromEntries(entry.recent_items.map((i: any) => [i.rel_path, i]));
    expect(byPath["tool.bin"]).toMatchObject({ status: "failed", moved_to: "failed/tool.bin" });
    const note = (await tenant.api.get(`/files/${byPath["note.txt"].file_id}`)).body;
    const plan = (await tenant.api.get(`/files/${byPath["Clients/2024/plan.md"].file_id}`)).body;
    expect([note.filename, plan.filename]).toEqual(["note.txt", "plan.md"]);
    const inbox = (await tenant.api.get(`/folders/${note.folder_id}`)).body;
    expect(inbox.path.map((f: any) => f.name)).toEqual(["Scans", "Inbox"]);
    const year = (await tenant.api.get(`/folders/${plan.folder_id}`)).body;
    expect(year.path.map((f: any) => f.name)).toEqual(["Scans", "Inbox", "Clients", "2024"]);
    // Rules see where they came from.
    await pollApi(tenant, `/files/${note.id}`, (r) => r.body.processing_status === "completed", { what: "the note's analysis" });
    await pollApi(tenant, `/files/${plan.id}`, (r) => r.body.processing_status === "completed", { what: "the plan's analysis" });
    expect((await tenant.api.post("/rules/dry-run", { conditions: [{ field: "source", op: "equals", value: "watch" }] })).body.matched_count).toBe(2);
    // Another organization sees none of it.
    expect((await (await server.tenant()).api.get("/watched-folders")).body.items).toEqual([]);

    const removed = await run([process.execPath, MAIN, "unwatch", dir, "--data-dir", server.dataDir], cli);
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect((await tenant.api.get("/watched-folders")).body.items).toEqual([]);
  });

  test("a file still open for writing is not taken until its writer closes it", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const dir = tempDir("mediabox-watch-");
    expect((await run([process.execPath, MAIN, "watch", dir, "--org", tenant.orgName, "--data-dir", server.dataDir], cli)).exitCode).toBe(0);
    const path = join(dir, "slow.txt");
    const fd = openSync(path, "w");
    writeSync(fd, "first half of a slow scan, ");
    // Well past the stability window (and several polls), the writer still holds it.
    const deadline = Date.now() + 1_500;
    await waitFor(() => Date.now() > deadline, { what: "a second and a half", intervalMs: 100 });
    expect(existsSync(path)).toBe(true);
    expect(filesIn(join(dir, "done"))).toEqual([]);
    writeSync(fd, "second half.");
    closeSync(fd);
    await waitFor(() => filesIn(join(dir, "done")).length === 1, { what: "the closed file to be taken" });
    expect(readFileSync(join(dir, "done", "slow.txt"), "utf8")).toBe("first half of a slow scan, second half.");
  });
});

describe("MEDIABOX_WATCH_DIR and kill -9", () => {
  const children: ServerProcess[] = [];
  afterAll(async () => {
    await Promise.allSettled(children.map((c) => c.stop("SIGKILL")));
  });

  test("a server killed half-way through a drop loses no file and stores none twice", async () => {
    const dataDir = tempDir("mediabox-watch-data-");
    const dir = tempDir("mediabox-watch-drop-");
    const env = { ...(await engineEnvironment(dataDir)), MEDIABOX_DATA_DIR: dataDir, MEDIABOX_LOG_LEVEL: "info", MEDIABOX_WATCH_DIR: `${dir}=Acme/Default/Drop`, MEDIABOX_WATCH_POLL_MS: "50", MEDIABOX_WATCH_STABLE_MS: "0" };
    expect((await run([process.execPath, MAIN, "orgs", "create", "Acme", "--tier", "CUSTOM"], { env })).exitCode).toBe(0);
    const key = (await run([process.execPath, MAIN, "keys", "create", "--org", "Acme"], { env })).stdout.trim();
    const COUNT = 120;
    const names = Array.from({ length: COUNT }, (_, i) => `sub${i % 3}/doc-${String(i).padStart(3, "0")}.txt`);
    for (const [i, name] of names.entries()) {
      mkdirSync(join(dir, name, ".."), { recursive: true });
      writeFileSync(join(dir, name), `document number ${i}: ${"lorem ipsum ".repeat(20)}`);
    }

    const first = await spawnServer([process.execPath, MAIN, "serve"], { env });
    children.push(first);
    await waitFor(() => filesIn(join(dir, "done")).length >= 10, { what: "the first files to be stored", intervalMs: 5 });
    expect(await first.stop("SIGKILL")).not.toBe(0);
    const doneAtKill = filesIn(join(dir, "done")).length;

    const second = await spawnServer([process.execPath, MAIN, "serve"], { env });
    children.push(second);
    await waitFor(() => filesIn(join(dir, "done")).length === COUNT, { what: () => `all files in done/ (${filesIn(join(dir, "done")).length} of ${COUNT}; failed: ${filesIn(join(dir, "failed"))})`, timeoutMs: 120_000 });
    const api = new ApiClient(second.url, key);
    const listing = await pollApi({ api }, "/files?limit=1", (r) => r.status === 200 && r.body.total_count >= COUNT, { what: "the stored files in the listing" });
    expect(await second.stop("SIGTERM")).toBe(0);

    expect(filesIn(join(dir, "done"))).toEqual([...names].sort());
    expect(filesIn(join(dir, "failed"))).toEqual([]);
    expect(filesIn(dir).filter((p) => !p.startsWith("done/"))).toEqual([]);
    await withEngineDatabase(dataDir, async (sql) => {
      const stored = await sql.all<{ filename: string; n: number }>("SELECT filename, count(*) AS n FROM files GROUP BY filename");
      expect(stored.length).toBe(COUNT);
      expect(stored.filter((s) => s.n !== 1)).toEqual([]);
      expect((await sql.one<{ n: number }>("SELECT count(*) AS n FROM watch_items WHERE status = 'done'"))!.n).toBe(COUNT);
      expect((await sql.one<{ n: number }>("SELECT count(*) AS n FROM watch_items"))!.n).toBe(COUNT);
    });
    expect(listing.body.total_count).toBe(COUNT);
    // The kill landed before the end (otherwise the test proved nothing about a restart).
    expect(doneAtKill).toBeLessThan(COUNT);
  });
});
