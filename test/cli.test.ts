import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import * as tar from "tar";
import { join } from "node:path";
import { tempDir } from "./support/server.ts";
import { run, spawnServer, type ServerProcess } from "./support/process.ts";

const dataDir = tempDir("mediabox-cli-");
const MAIN = join(import.meta.dir, "..", "src", "main.ts");
const cli = (...args: string[]) => run([process.execPath, MAIN, ...args, "--data-dir", dataDir]);
/** Servers a test started: killed after it, whatever happened (stopping one already stopped is harmless). */
const servers: ServerProcess[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop("SIGKILL")));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("organizations", () => {
  test("create, list and change tier", async () => {
    const created = await cli("orgs", "create", "Acme Labs", "--tier", "professional");
    expect(created.exitCode).toBe(0);
    expect(created.stdout).toMatch(/^[0-9a-f-]{36}\tAcme Labs\tPROFESSIONAL\n$/);
    expect(created.stderr).toContain("Default project");
    const duplicate = await cli("orgs", "create", "acme labs");
    expect(duplicate.exitCode).toBe(1);
    expect(duplicate.stderr).toContain("already exists");
    const badTier = await cli("orgs", "create", "Other", "--tier", "GOLD");
    expect(badTier.exitCode).toBe(1);
    expect(badTier.stderr).toContain("unknown tier");
    const moved = await cli("orgs", "set-tier", "Acme Labs", "ENTERPRISE");
    expect(moved.stdout).toContain("ENTERPRISE");
    const list = await cli("orgs", "list");
    expect(list.stdout).toContain("\tAcme Labs\tENTERPRISE\t");
  });

  test("usage errors exit 2 with a hint", async () => {
    const res = await cli("orgs", "explode");
    expect(res.exitCode).toBe(2);
    expect(res.stderr).toContain("mediabox --help");
    const unknownFlag = await cli("orgs", "list", "--colour", "red");
    expect(unknownFlag.exitCode).toBe(2);
    expect(unknownFlag.stderr).toContain("colour");
  });
});

describe("keys", () => {
  test("create prints only the key on stdout; list shows a prefix, never the key", async () => {
    await cli("orgs", "create", "Keyed");
    const created = await cli("keys", "create", "--org", "Keyed", "--permissions", "view,edit", "--name", "ci bot");
    expect(created.exitCode).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^mbx_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).toContain("shown only once");
    const list = await cli("keys", "list", "--org", "Keyed");
    expect(list.stdout).toContain(key.slice(0, 12) + "…");
    expect(list.stdout).not.toContain(key);
    expect(list.stdout).toContain("\tci bot\tview,edit\t");
  });

  test("FREE organizations cannot get keys; bad permissions are refused", async () => {
    await cli("orgs", "create", "Freeloader", "--tier", "FREE");
    const free = await cli("keys", "create", "--org", "Freeloader");
    expect(free.exitCode).toBe(1);
    expect(free.stdout).toBe("");
    expect(free.stderr).toContain("FREE tier");
    const perms = await cli("keys", "create", "--org", "Keyed", "--permissions", "view,admin");
    expect(perms.exitCode).toBe(1);
    expect(perms.stderr).toContain('unknown permission "admin"');
    const noOrg = await cli("keys", "create", "--org", "Nobody");
    expect(noOrg.exitCode).toBe(1);
    expect(noOrg.stderr).toContain('no organization named "Nobody"');
  });
});

describe("serve", () => {
  test("the server uses the same data directory as the CLI, and revocation applies at once", async () => {
    await cli("orgs", "create", "Served");
    const key = (await cli("keys", "create", "--org", "Served")).stdout.trim();
    const server = await spawnServer([process.execPath, MAIN, "serve", "--data-dir", dataDir]);
    servers.push(server);
    const call = () => fetch(`${server.url}/api/v2/projects`, { headers: { authorization: `Bearer ${key}` } });
    const ok = await call();
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { items: { name: string }[] }).items[0]!.name).toBe("Default");

    const keyId = (await cli("keys", "list", "--org", "Served")).stdout.split("\t")[0]!;
    const revoked = await cli("keys", "revoke", keyId);
    expect(revoked.exitCode).toBe(0);
    expect((await call()).status).toBe(401);

    expect(await server.stop("SIGTERM")).toBe(0);
  });

  test("flags override environment variables", async () => {
    const server = await spawnServer([process.execPath, MAIN, "serve", "--data-dir", dataDir, "--port", "0"], {
      env: { MEDIABOX_PORT: "1", MEDIABOX_DATA_DIR: "/nonexistent/should-not-be-used" },
    });
    servers.push(server);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    await server.stop();
  });

  test("invalid settings stop the server with a message naming the setting", async () => {
    const res = await run([process.execPath, MAIN, "serve", "--data-dir", dataDir], {
      env: { MEDIABOX_UNAUTHENTICATED_RATE_LIMIT: "50" },
    });
    expect(res.exitCode).toBe(1);
    expect(res.stderr).toContain("MEDIABOX_UNAUTHENTICATED_RATE_LIMIT");
  });
});

describe("backup", () => {
  test("writes one archive with a consistent, openable copy of the database and refuses to overwrite", async () => {
    await cli("orgs", "create", "Backed Up");
    const target = join(dataDir, "..", `backup-${crypto.randomUUID()}.tar`);
    const res = await cli("backup", target);
    expect(res.exitCode).toBe(0);
    const out = join(dataDir, "..", `unpacked-${crypto.randomUUID()}`);
    mkdirSync(out);
    await tar.extract({ file: target, cwd: out });
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
    expect(manifest).toMatchObject({ format: "mediabox-backup", version: 1, blob_store: { kind: "local" } });
    const db = manifest.files.find((f: { path: string }) => f.path === "mediabox.db");
    expect(new Bun.CryptoHasher("sha256").update(readFileSync(join(out, "mediabox.db"))).digest("hex")).toBe(db.sha256);
    const copy = new Database(join(out, "mediabox.db"), { readonly: true });
    try {
      const names = copy.query<{ name: string }, []>("SELECT name FROM organizations").all().map((r) => r.name);
      expect(names).toContain("Backed Up");
    } finally {
      copy.close();
      rmSync(target, { force: true });
      rmSync(out, { recursive: true, force: true });
    }
    const again = await cli("backup", join(dataDir, "mediabox.db"));
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain("already exists");
  });
});
