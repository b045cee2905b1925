/**
 * The checks of `GET /readyz`, through the data-access port so they answer on either database:
 * the database answers, its schema is at this binary's latest migration, the vector search
 * extension is there (sqlite-vec, or pgvector on PostgreSQL), and the job workers run (or, in an
 * api process, are another process's).
 */
import { MIGRATIONS } from "../db/migrations/index.ts";
import type { SqlClient } from "../db/sql-client.ts";
import { errorMessage } from "../errors.ts";
import type { ProcessRole } from "../config.ts";

export interface Check {
  ok: boolean;
  detail: string;
}

export interface ReadinessDeps {
  sql: SqlClient;
  role: ProcessRole;
  jobsRunning: boolean;
  /** Threads of the in-memory vector scans (null while they start); asked only where the spaces scan in memory. */
  scanThreads: () => number | null;
}

export async function readinessChecks(deps: ReadinessDeps): Promise<Record<"database" | "schema" | "vector_search" | "jobs", Check>> {
  const probe = async (fn: () => Promise<string> | string): Promise<Check> => {
    try {
      return { ok: true, detail: await fn() };
    } catch (err) {
      return { ok: false, detail: errorMessage(err) };
    }
  };
  const { sql } = deps;
  const latest = Math.max(...MIGRATIONS.map((m) => m.version));
  const [database, schema, vectorSearch] = await Promise.all([
    probe(async () => {
      await sql.one("SELECT 1 AS one");
      return "reachable";
    }),
    probe(async () => {
      const version = (await sql.one<{ v: number | null }>("SELECT max(version) AS v FROM schema_migrations"))?.v ?? 0;
      if (version !== latest) throw new Error(`schema at version ${version}, expected ${latest}`);
      return `version ${version}`;
    }),
    probe(async () => {
      const extension = sql.dialect.vectorExtension;
      const version = (await sql.one<{ version: string }>(extension.versionQuery))?.version;
      if (!version) throw new Error(`the ${extension.name} extension is not installed in this database`);
      return extension.scansInMemory ? `${extension.name} ${version}; in-memory scan on ${deps.scanThreads() ?? "(starting)"} thread(s)` : `${extension.name} ${version}`;
    }),
  ]);
  const jobs = await probe(() => {
    // An api process runs no jobs by design (serve --role api); the worker processes do.
    if (deps.role === "api") return "run by the worker processes (role api)";
    if (!deps.jobsRunning) throw new Error("job workers are not running");
    return "workers running";
  });
  return { database, schema, vector_search: vectorSearch, jobs };
}
