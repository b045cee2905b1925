/**
 * Operations on PostgreSQL (docs/scale-out.md): `/readyz`'s checks through the data-access port on
 * both databases (the vector search check names sqlite-vec or pgvector with its version; the
 * chunks waiting for their embedding are counted there too), and the
 * administration commands as child processes against a PostgreSQL database named by --database:
 * organizations, keys, users, watched folders and support messages are read and written there
 * (nothing in the data directory), while `backup` and `restore` refuse, pointing to pg_dump,
 * pg_restore and the bucket's versioning. The SQLite side of the commands is cli.test.ts's and
 * accounts-cli.test.ts's. The PostgreSQL parts skip, saying why, where no server binary is found.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS } from "../src/db/migrations/index.ts";
import { openPostgres } from "../src/db/postgres-database.ts";
import { readinessChecks } from "../src/ops/readiness.ts";
import { pendingEmbeddingChunks } from "../src/embeddings/text-models.ts";
import { portEngines } from "./support/port-engines.ts";
import { postgresOrSkip, startPostgres, type TestPostgres } from "./support/postgres.ts";
import { run } from "./support/process.ts";
import { tempDir } from "./support/temp-dir.ts";

const { engines } = portEngines("ops");
const latest = Math.max(...MIGRATIONS.map((m) => m.version));

describe.each(engines)("/readyz's checks on $name", ({ name, client }) => {
  test("database, schema, vector search and jobs", async () => {
    const checks = await readinessChecks({ sql: client(), role: "all", jobsRunning: true, scanThreads: () => 2 });
    expect(checks.database).toEqual({ ok: true, detail: "reachable" });
    expect(checks.schema).toEqual({ ok: true, detail: `version ${latest}` });
    expect(checks.vector_search.ok).toBe(true);
    expect(checks.vector_search.detail).toMatch(name === "sqlite" ? /^sqlite-vec v\d+\.\d+\.\d+; in-memory scan on 2 thread\(s\)$/ : /^pgvector \d+\.\d+\.\d+$/);
    expect(checks.jobs).toEqual({ ok: true, detail: "workers running" });
    const api = await readinessChecks({ sql: client(), role: "api", jobsRunning: false, scanThreads: () => null });
    expect(api.jobs).toEqual({ ok: true, detail: "run by the worker processes (role api)" });
    const stopped = await readinessChecks({ sql: client(), role: "worker", jobsRunning: false, scanThreads: () => null });
    expect(stopped.jobs).toEqual({ ok: false, detail: "job workers are not running" });
    // The models part of /readyz: chunks waiting for their text embedding.
    expect(await pendingEmbeddingChunks(client())).toBe(0);
  });
});

const binaries = postgresOrSkip();
describe.skipIf(!binaries)("the administration commands on PostgreSQL", () => {
  const MAIN = join(import.meta.dir, "..", "src", "main.ts");
  const dataDir = tempDir("mediabox-cli-postgres-");
  let pg: TestPostgres;
  let url: string;
  beforeAll(async () => {
    pg = await startPostgres(binaries!);
    url = await pg.createDatabase("cli");
  }, 120_000);
  afterAll(() => pg?.stop());

  /** The settings every process of a shared deployment has: the database, the bucket, the sealing key. */
  const env = () => ({ MEDIABOX_DATABASE: url, MEDIABOX_STORAGE: "s3", MEDIABOX_S3_BUCKET: "mediabox", MEDIABOX_CLOUD_TOKEN_KEY: Buffer.alloc(32, 7).toString("base64") });
  const cli = (...args: string[]) => run([process.execPath, MAIN, ...args, "--data-dir", dataDir], { env: env() });

  test("orgs, keys, users, watch and support read and write the PostgreSQL database, not the data directory", async () => {
    const created = await cli("orgs", "create", "Harbor Lab", "--tier", "professional");
    expect(created.exitCode).toBe(0);
    expect(created.stdout).toMatch(/^[0-9a-f-]{36}\tHarbor Lab\tPROFESSIONAL\n$/);
    expect((await cli("orgs", "set-tier", "Harbor Lab", "ENTERPRISE")).stdout).toContain("ENTERPRISE");
    expect((await cli("orgs", "list")).stdout).toContain("\tHarbor Lab\tENTERPRISE\t");

    const key = await cli("keys", "create", "--org", "Harbor Lab", "--permissions", "view", "--name", "reader");
    expect(key.exitCode).toBe(0);
    const keyId = /created API key (\S+)/.exec(key.stderr)![1]!;
    expect((await cli("keys", "list", "--org", "Harbor Lab")).stdout).toMatch(new RegExp(`^${keyId}\t.*\treader\tview\t.*\tactive$`, "m"));
    expect((await cli("keys", "revoke", keyId)).stdout).toStartWith(`${keyId}\trevoked `);

    const user = await cli("users", "create", "pilot@example.com", "--org", "Harbor Lab", "--role", "admin");
    expect(user.exitCode).toBe(0);
    expect(user.stdout).toMatch(/\tpilot@example\.com\tHarbor Lab\tadmin\n$/);
    expect((await cli("users", "list")).stdout).toContain("pilot@example.com");

    const inbox = join(dataDir, "inbox");
    mkdirSync(inbox, { recursive: true });
    expect((await cli("watch", inbox, "--org", "Harbor Lab")).exitCode).toBe(0);
    expect((await cli("watch")).stdout).toContain(inbox);
    expect((await cli("unwatch", inbox)).exitCode).toBe(0);
    expect((await cli("watch")).stdout).not.toContain(inbox);
    expect((await cli("support", "list")).exitCode).toBe(0);

    // The rows are PostgreSQL's, and the data directory has no database of its own.
    const sql = await openPostgres(url, { max: 1 });
    try {
      expect(await sql.one("SELECT name, tier FROM organizations WHERE name = 'Harbor Lab'")).toEqual({ name: "Harbor Lab", tier: "ENTERPRISE" });
      expect(await sql.one<{ n: number }>("SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NOT NULL")).toEqual({ n: 1 });
      expect(await sql.one("SELECT email FROM users")).toEqual({ email: "pilot@example.com" });
    } finally {
      await sql.close();
    }
    expect(existsSync(join(dataDir, "mediabox.db"))).toBe(false);
  });

  test("backup and restore refuse, pointing to pg_dump, pg_restore and the bucket's versioning", async () => {
    const backup = await cli("backup", join(dataDir, "backup.tar"));
    expect(backup.exitCode).toBe(1);
    expect(backup.stderr).toContain("this deployment's database is PostgreSQL");
    expect(backup.stderr).toContain("pg_dump");
    expect(backup.stderr).toContain("versioning");
    const restore = await cli("restore", join(dataDir, "backup.tar"));
    expect(restore.exitCode).toBe(1);
    expect(restore.stderr).toContain("pg_restore");
    expect(readdirSync(dataDir).filter((f) => f.startsWith("backup"))).toEqual([]);
  });
});
