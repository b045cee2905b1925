/**
 * `mediabox import DIR` against a real server: the CLI as a child process (top level, then
 * recursive, then a re-run that stores nothing new; tags, project and folder by name; usage
 * errors; a file above the streaming limit through an upload intent), and `runImport` in process
 * with an injected fetch for 429 and network retries, an unreachable server and the TTY line;
 * --wait following the analysis to its end.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, ftruncateSync, mkdirSync, openSync, rmSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../src/cli/commands.ts";
import { chooseUploadPath, importOptions, runImport, type ImportOptions } from "../src/cli/import.ts";
import { reportPdf } from "./support/documents.ts";
import { mp4, pdf, peExe, png, text } from "./support/fixtures.ts";
import { run } from "./support/process.ts";
import { startTestServer, tempDir, type Tenant, type TestServer } from "./support/server.ts";

const MAIN = join(import.meta.dir, "..", "src", "main.ts");
const MiB = 1024 * 1024;
/** The variables the command reads, emptied so the developer's own never leak into a test. */
const CLEAN_ENV = { MEDIABOX_URL: "", MEDIABOX_API_KEY: "", MEDIABOX_PORT: "" };

let server: TestServer;
const dirs: string[] = [];

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tree(files: Record<string, Uint8Array>): string {
  const root = tempDir("mediabox-import-");
  dirs.push(root);
  for (const [rel, bytes] of Object.entries(files)) {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), bytes);
  }
  return root;
}

const mediabox = (args: string[], env: Record<string, string> = {}) => run([process.execPath, MAIN, "import", ...args], { env: { ...CLEAN_ENV, ...env } });

async function listFiles(tenant: Tenant): Promise<{ id: string; filename: string; tags: string[]; folder_id: string | null; project_id: string; media_type: string; size_bytes: number }[]> {
  const res = await tenant.api.get("/files?limit=100&sort_by=title&sort_order=asc");
  expect(res.status).toBe(200);
  return res.body.items;
}

const summaryOf = (stdout: string) => stdout.split("\n").find((line) => line.startsWith("Summary: ")) ?? `(no summary in: ${stdout})`;

describe("mediabox import (the CLI against a running server)", () => {
  let root: string;
  beforeAll(() => {
    root = tree({
      "photo-a.png": png(16, 16, 1),
      "photo-b.png": png(16, 16, 2),
      "report.pdf": pdf("Quarterly numbers"),
      "setup.exe": peExe(),
      ".hidden.png": png(16, 16, 3),
      ".cache/inner.png": png(16, 16, 4),
      "nested/photo-c.png": png(16, 16, 5),
      "nested/deeper/notes.md": text("# Field notes\n\nThe survey went well.\n"),
    });
    const outside = tree({ "elsewhere.png": png(16, 16, 6) });
    symlinkSync(join(outside, "elsewhere.png"), join(root, "outside-link.png"));
  });

  test("top level only, then --recursive, then a re-run that stores nothing new; tags applied; the refused file fails the run", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const first = await mediabox([root, "--server", server.url, "--key", tenant.key, "--tags", "trip, 2024"]);
    expect(first.exitCode, first.stderr).toBe(1);
    expect(first.stdout).toMatch(/^stored: photo-a\.png \(\d+ B\) as [0-9a-f-]{36}$/m);
    expect(first.stdout).toMatch(/^stored: photo-b\.png /m);
    expect(first.stdout).toMatch(/^stored: report\.pdf /m);
    expect(first.stdout).toMatch(/^failed: setup\.exe: .*executable.*\(415 UNSUPPORTED_FILE_TYPE\)$/m);
    expect(first.stdout).toContain("1 subdirectory not imported (use --recursive)");
    expect(first.stdout).toMatch(/^skipped: outside-link\.png: symbolic link leading outside the directory/m);
    expect(summaryOf(first.stdout)).toMatch(/^Summary: 4 files: 3 stored, 0 already stored, 1 failed, 1 skipped; /);
    expect(first.stdout).toMatch(/^Failed:\n {2}setup\.exe: .*415 UNSUPPORTED_FILE_TYPE/m);
    const afterFirst = await listFiles(tenant);
    expect(afterFirst.map((f) => f.filename).sort()).toEqual(["photo-a.png", "photo-b.png", "report.pdf"]);
    for (const file of afterFirst) expect(file.tags).toEqual(["trip", "2024"]);
    const tagged = await tenant.api.get("/files?tags=trip&tags=2024");
    expect(tagged.body.total_count).toBe(3);

    const recursive = await mediabox([root, "--recursive", "--server", server.url, "--key", tenant.key]);
    expect(recursive.exitCode, recursive.stderr).toBe(1);
    expect(recursive.stdout).toMatch(/^already stored: photo-a\.png \([0-9a-f-]{36}\)$/m);
    expect(recursive.stdout).toMatch(/^stored: nested\/photo-c\.png /m);
    expect(recursive.stdout).toMatch(/^stored: nested\/deeper\/notes\.md /m);
    expect(recursive.stdout).toMatch(/^failed: setup\.exe: /m);
    expect(summaryOf(recursive.stdout)).toMatch(/^Summary: 6 files: 2 stored, 3 already stored, 1 failed, 1 skipped; /);
    const afterRecursive = await listFiles(tenant);
    expect(afterRecursive.map((f) => f.filename).sort()).toEqual(["notes.md", "photo-a.png", "photo-b.png", "photo-c.png", "report.pdf"]);

    const again = await mediabox([root, "--recursive", "--server", server.url, "--key", tenant.key, "--concurrency", "4"]);
    expect(again.exitCode).toBe(1);
    expect(again.stdout).not.toMatch(/^stored: /m);
    expect(summaryOf(again.stdout)).toMatch(/^Summary: 6 files: 0 stored, 5 already stored, 1 failed, 1 skipped; 0 B uploaded/);
    expect((await listFiles(tenant)).length).toBe(5);

    // Nothing failing: exit 0.
    const clean = await mediabox([join(root, "nested"), "--recursive", "--server", server.url, "--key", tenant.key]);
    expect(clean.exitCode, clean.stdout + clean.stderr).toBe(0);
    expect(summaryOf(clean.stdout)).toMatch(/^Summary: 2 files: 0 stored, 2 already stored, 0 failed; /);
  });

  test("--project and --folder by name; the server from MEDIABOX_PORT and the key from MEDIABOX_API_KEY", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const project = (await tenant.api.post("/projects", { name: "Field Work" })).body;
    const inbox = (await tenant.api.post("/folders", { name: "Inbox", project_id: project.id })).body;
    const year = (await tenant.api.post("/folders", { name: "2024", parent_id: inbox.id })).body;
    expect(year.id).toBeString();
    const dir = tree({ "site.png": png(16, 16, 20), "plan.pdf": pdf("Site plan") });
    const env = { MEDIABOX_PORT: new URL(server.url).port, MEDIABOX_API_KEY: tenant.key };

    const res = await mediabox([dir, "--project", "field work", "--folder", "inbox/2024"], env);
    expect(res.exitCode, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain("(folder Inbox/2024 in project Field Work)");
    const files = await listFiles(tenant);
    expect(files.map((f) => [f.filename, f.project_id, f.folder_id])).toEqual([
      ["plan.pdf", project.id, year.id],
      ["site.png", project.id, year.id],
    ]);

    const byId = await mediabox([tree({ "other.png": png(16, 16, 21) }), "--folder", inbox.id], env);
    expect(byId.exitCode).toBe(0);
    expect((await listFiles(tenant)).find((f) => f.filename === "other.png")?.folder_id).toBe(inbox.id);

    const noFolder = await mediabox([dir, "--project", "Field Work", "--folder", "Inbox/2025"], env);
    expect(noFolder.exitCode).toBe(1);
    expect(noFolder.stderr).toContain('no folder "2025" in folder Inbox');
    const noProject = await mediabox([dir, "--project", "Nowhere"], env);
    expect(noProject.exitCode).toBe(1);
    expect(noProject.stderr).toContain('no project "Nowhere"');
  });

  test("usage errors exit 2 with a hint; --help; a refused key exits 1", async () => {
    const dir = tree({ "a.png": png(8, 8, 30) });
    const [noKey, unknownFlag, help, refused] = await Promise.all([
      mediabox([dir, "--server", server.url]),
      mediabox([dir, "--key", "k", "--colour", "red"]),
      mediabox(["--help"]),
      mediabox([dir, "--server", server.url, "--key", "mbx_" + "x".repeat(43)]),
    ]);
    expect(noKey.exitCode).toBe(2);
    expect(noKey.stderr).toContain("needs an API key");
    expect(noKey.stderr).toContain("mediabox --help");
    expect(unknownFlag.exitCode).toBe(2);
    expect(unknownFlag.stderr).toContain("colour");
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain("Usage: mediabox import DIR");
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain("refused the API key");
    expect(refused.stdout).toContain("Stopped early");
  });

  test("a file above the streaming limit goes up as a multipart upload intent, and is not sent again", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const dir = tempDir("mediabox-import-big-");
    dirs.push(dir);
    // A sparse 101 MiB "video": a real MP4 header, then zeros the disk never stores.
    const fd = openSync(join(dir, "long-take.mp4"), "w");
    writeSync(fd, mp4());
    ftruncateSync(fd, 101 * MiB);
    closeSync(fd);
    writeFileSync(join(dir, "small.png"), png(16, 16, 40));

    const res = await mediabox([dir, "--server", server.url, "--key", tenant.key, "--tags", "raw"]);
    expect(res.exitCode, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^stored: long-take\.mp4 \(106 MB, upload intent\) as [0-9a-f-]{36}$/m);
    expect(res.stdout).toMatch(/^stored: small\.png \(\d+ B\) as /m);
    const big = (await listFiles(tenant)).find((f) => f.filename === "long-take.mp4")!;
    expect(big).toMatchObject({ media_type: "video", size_bytes: 101 * MiB, tags: ["raw"] });

    const again = await mediabox([dir, "--server", server.url, "--key", tenant.key]);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain(`already stored: long-take.mp4 (${big.id})`);
    expect(summaryOf(again.stdout)).toMatch(/^Summary: 2 files: 0 stored, 2 already stored, 0 failed; 0 B uploaded/);
  });
});

describe("runImport in process", () => {
  const options = (tenant: Tenant, dir: string, extra: Partial<ImportOptions> = {}): ImportOptions => ({
    dir,
    server: server.url,
    key: tenant.key,
    project: null,
    folder: null,
    tags: [],
    recursive: false,
    skipDuplicates: false,
    concurrency: 2,
    wait: false,
    ...extra,
  });
  const capture = (isTTY = false) => {
    const out = { text: "", isTTY, columns: 120, write: (chunk: string) => (out.text += chunk) };
    return out;
  };

  test("the command line: every problem is a usage error naming what is wrong; defaults", async () => {
    const parse = (flags: Record<string, string | boolean>, positionals: string[], env: Record<string, string> = {}) => () => importOptions(flags, positionals, env);
    expect(parse({ key: "k" }, [])).toThrow(new UsageError("import needs the DIR to import"));
    expect(parse({ key: "k" }, ["a", "b"])).toThrow("import takes one DIR");
    expect(parse({}, ["dir"])).toThrow("needs an API key");
    expect(parse({ key: "k", concurrency: "0" }, ["dir"])).toThrow("--concurrency: expected an integer from 1 to 16");
    expect(parse({ key: "k", concurrency: "2.5" }, ["dir"])).toThrow("--concurrency");
    expect(parse({ key: "k", server: "ftp://example" }, ["dir"])).toThrow("--server: expected an http(s) URL");
    expect(parse({ key: "k", tags: Array.from({ length: 21 }, (_, i) => `t${i}`).join(",") }, ["dir"])).toThrow("at most 20 tags");
    expect(parse({ key: "k", tags: "x".repeat(51) }, ["dir"])).toThrow("longer than 50 characters");
    expect(parse({ key: "k", port: "0" }, ["dir"])).toThrow("--server URL");
    expect(importOptions({ tags: " a, b ,a,", recursive: true }, ["dir"], { MEDIABOX_API_KEY: "env-key", MEDIABOX_PORT: "9123" })).toEqual({
      dir: "dir",
      server: "http://127.0.0.1:9123",
      key: "env-key",
      project: null,
      folder: null,
      tags: ["a", "b"],
      recursive: true,
      skipDuplicates: false,
      concurrency: 2,
      wait: false,
    });
    const fromUrl = importOptions({ key: "k", server: "https://media.example/api/v2/" }, ["dir"], { MEDIABOX_URL: "http://ignored" });
    expect(fromUrl.server).toBe("https://media.example");
    expect(importOptions({ key: "k" }, ["dir"], { MEDIABOX_URL: "http://box:8080" }).server).toBe("http://box:8080");

    const tenant = await server.tenant({ tier: "CUSTOM" });
    const notADir = join(tree({ "a.png": png(8, 8, 31) }), "a.png");
    await expect(runImport(options(tenant, join(notADir, "..", "missing")), { out: capture() })).rejects.toThrow("no such directory");
    await expect(runImport(options(tenant, notADir), { out: capture() })).rejects.toThrow("not a directory");
  });

  test("the upload path: streaming within the limits, an intent above them", () => {
    expect(chooseUploadPath(100 * MiB, "image", "a.png")).toBe("streaming");
    expect(chooseUploadPath(100 * MiB + 1, "image", "a.png")).toBe("intent");
    expect(chooseUploadPath(50 * MiB, "document", "a.pdf")).toBe("streaming");
    expect(chooseUploadPath(50 * MiB + 1, "document", "scan.bin")).toBe("intent");
    expect(chooseUploadPath(60 * MiB, "video", "clip.pdf")).toBe("streaming");
    expect(chooseUploadPath(60 * MiB, null, "notes.txt")).toBe("intent");
    expect(chooseUploadPath(60 * MiB, null, "blob.bin")).toBe("streaming");
  });

  test("429 waits Retry-After and network errors back off, then the files go up (STARTER tenant); same content is sent once", async () => {
    const tenant = await server.tenant({ tier: "STARTER" });
    const dir = tree({ "one.png": png(16, 16, 50), "three-same-as-one.png": png(16, 16, 50), "two.png": png(16, 16, 51) });
    const sleeps: number[] = [];
    const injected = { rateLimited: 0, resets: 0 };
    const fetcher = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input);
      if (url.endsWith("/files/check-duplicates") && injected.rateLimited === 0) {
        injected.rateLimited += 1;
        return Response.json({ detail: "rate limit of 30 requests per minute exceeded; retry in 7 s", code: "RATE_LIMITED" }, { status: 429, headers: { "retry-after": "7" } });
      }
      if (url.endsWith("/files/upload") && injected.resets === 0) {
        injected.resets += 1;
        throw new TypeError("socket connection was closed unexpectedly");
      }
      return fetch(input, init);
    }) as typeof fetch;
    const out = capture();
    const summary = await runImport(options(tenant, dir), { out, fetch: fetcher, sleep: async (ms) => void sleeps.push(ms) });
    expect(injected).toEqual({ rateLimited: 1, resets: 1 });
    expect(sleeps).toEqual([7000, 500]);
    expect(out.text).toContain("waiting 7 s: rate limited");
    expect(out.text).toContain("waiting 1 s: network error (socket connection was closed unexpectedly); retrying");
    expect(summary).toMatchObject({ total: 3, stored: 2, alreadyStored: 1, failed: [], aborted: null, exitCode: 0 });
    expect(out.text).toMatch(/^already stored: three-same-as-one\.png \(same content as one\.png\)$/m);
    expect((await listFiles(tenant)).map((f) => f.filename).sort()).toEqual(["one.png", "two.png"]);
  });

  test("--skip-duplicates asks the server too: content that arrives after the check is not stored twice", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const bytes = png(16, 16, 55);
    const dir = tree({ "late.png": bytes });
    const form = new FormData();
    form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>], { type: "image/png" }), "first.png");
    const existing = await tenant.api.form("/files/upload", form);
    expect(existing.status).toBe(201);
    // The check answers as if the other copy had not arrived yet.
    const blindCheck = (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (!String(input).endsWith("/files/check-duplicates")) return fetch(input, init);
      const { hashes } = JSON.parse(String(init?.body));
      return Response.json({ duplicates: [], unique: hashes, matches: [] });
    }) as typeof fetch;

    const skipping = await runImport(options(tenant, dir, { skipDuplicates: true }), { out: capture(), fetch: blindCheck });
    expect(skipping).toMatchObject({ stored: 0, alreadyStored: 1, exitCode: 0 });
    expect(skipping.outcomes[0]).toMatchObject({ status: "already stored", fileId: existing.body.image_id });
    expect((await listFiles(tenant)).length).toBe(1);

    const copying = await runImport(options(tenant, dir), { out: capture(), fetch: blindCheck });
    expect(copying).toMatchObject({ stored: 1, alreadyStored: 0, exitCode: 0 });
    expect((await listFiles(tenant)).length).toBe(2);
  });

  test("an unreachable server stops the run with a summary that says how to resume", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const dir = tree({ "a.png": png(8, 8, 60) });
    const out = capture();
    const refusing = (async () => {
      throw new TypeError("Unable to connect. Is the computer able to access the url?");
    }) as unknown as typeof fetch;
    const summary = await runImport(options(tenant, dir), { out, fetch: refusing, sleep: async () => {} });
    expect(summary.exitCode).toBe(1);
    expect(summary.aborted).toContain("cannot reach");
    expect(out.text).toContain("1 not reached");
    expect(out.text).toContain("Run the same import again to resume.");
  });

  test("a file name with a newline and a terminal escape prints on one line, escaped", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const dir = tree({ "two\nlines\x1b[31m.png": png(8, 8, 90) });
    const out = capture();
    const summary = await runImport(options(tenant, dir), { out });
    expect(summary).toMatchObject({ stored: 1, exitCode: 0 });
    expect(out.text).toContain("stored: two\\nlines\\x1b[31m.png (");
    expect(out.text).not.toContain("\x1b");
    expect(out.text.split("\n").filter((l) => l.startsWith("lines"))).toEqual([]);
  });

  test("--wait follows the analysis to its end: one line per analysed file without a terminal, the failed ones named, exit 1 when one failed", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const dir = tempDir("mediabox-import-wait-");
    writeFileSync(join(dir, "note.txt"), "The quay wall was repaired in March.\n");
    writeFileSync(join(dir, "memo.md"), "# Memo\n\nThe crane is back in service.\n");
    // A PDF that cannot be read: stored, then its analysis fails.
    writeFileSync(join(dir, "broken.pdf"), "%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n");
    const out = capture();
    const summary = await runImport(options(tenant, dir, { wait: true }), { out });
    expect(summary.stored).toBe(3);
    expect(summary.analysis?.completed).toBe(2);
    expect(summary.analysis?.failed.map((f) => f.rel)).toEqual(["broken.pdf"]);
    expect(summary.exitCode).toBe(1);
    expect(out.text).toContain("Waiting for the analysis of 3 files");
    expect(out.text).toMatch(/analysed: note\.txt \(completed\)/);
    expect(out.text).toMatch(/analysis failed: broken\.pdf: \S/);
    expect(out.text).toMatch(/Analysis: 2 completed, 1 failed in /);
    // Every file is indeed at its end on the server.
    for (const f of (await tenant.api.get("/files?limit=10")).body.items) expect(["completed", "failed"]).toContain(f.processing_status);
  }, 120_000);

  test("--wait on a terminal redraws one line with the file in progress and its stage", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const dir = tempDir("mediabox-import-wait-tty-");
    writeFileSync(join(dir, "report.pdf"), await reportPdf());
    const out = capture(true);
    const summary = await runImport(options(tenant, dir, { wait: true }), { out });
    expect(summary.analysis).toEqual({ completed: 1, failed: [], elapsedMs: expect.any(Number) });
    expect(summary.exitCode).toBe(0);
    expect(out.text).toContain("\r\x1b[KAnalysing [0/1]");
    expect(out.text).toMatch(/Analysis: 1 completed, 0 failed/);
  }, 120_000);

  test("on a terminal one progress line is redrawn instead of a line per file; failures still show", async () => {
    const tenant = await server.tenant({ tier: "CUSTOM" });
    const dir = tree({ "a.png": png(16, 16, 70), "b.png": png(16, 16, 71), "tool": peExe() });
    const out = capture(true);
    const summary = await runImport(options(tenant, dir, { concurrency: 1 }), { out });
    expect(summary).toMatchObject({ stored: 2, exitCode: 1 });
    expect(out.text).toMatch(/\r\x1b\[K\[\d\/3\] {2}[\d.]+ files\/s {2}[\d.]+ MB\/s {2}ETA [^ ]+( s)? {2}\d failed/);
    expect(out.text).not.toContain("stored: a.png");
    expect(out.text).toMatch(/\r\x1b\[Kfailed: tool: .*\(415 UNSUPPORTED_FILE_TYPE\)\n/);
    expect(out.text).toMatch(/Summary: 3 files: 2 stored, 0 already stored, 1 failed; [\d.]+ K?B uploaded in [\d.]+ s\n/);
  });
});
