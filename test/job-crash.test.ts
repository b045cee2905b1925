/**
 * Durability of the job scheduler against a real kill -9: a server process dies mid-job, a new
 * process on the same data directory takes the job over at start (the dead process's lease is
 * released, not waited out), and the job completes exactly once with both executions recorded.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { SqlClient } from "../src/db/sql-client.ts";
import { withEngineDatabase } from "./support/engine-database.ts";
import { waitFor } from "./support/polling.ts";
import { spawnServer, type ServerProcess } from "./support/process.ts";
import { tempDir } from "./support/server.ts";
import { engineEnvironment } from "./support/suite-database.ts";

const dataDir = tempDir("mediabox-crash-");
const fixture = join(import.meta.dir, "fixtures", "job-server.ts");
// Both processes use this run's engine: the data directory's SQLite file, or a PostgreSQL database.
const env = { ...(await engineEnvironment(dataDir)), MEDIABOX_DATA_DIR: dataDir, MEDIABOX_JOB_LEASE_SECONDS: "600", MEDIABOX_LOG_LEVEL: "info" };
const started: ServerProcess[] = [];

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop("SIGKILL")));
  rmSync(dataDir, { recursive: true, force: true });
});

interface Execution {
  pid: number;
  job_id: string;
  attempt: number;
}

function executions(): Execution[] {
  const file = join(dataDir, "executions.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line) as Execution);
}

/** Read from a connection of the test's own while the server runs. */
async function jobStatus(sql: SqlClient): Promise<string | null> {
  return (await sql.one<{ status: string }>("SELECT status FROM jobs WHERE queue = 'test.crashable'"))?.status ?? null;
}

test("a job interrupted by kill -9 is taken over by the next process at once and completes exactly once", async () => {
  const first = await spawnServer([process.execPath, fixture], { env });
  started.push(first);
  await waitFor(() => executions().length === 1, { what: "the first execution" });
  expect(await first.stop("SIGKILL")).not.toBe(0);

  const second = await spawnServer([process.execPath, fixture], { env });
  started.push(second);
  await withEngineDatabase(dataDir, async (sql) => {
    // The lease runs 10 minutes: completing within seconds shows the dead process's lease was released.
    let status: string | null = null;
    await waitFor(async () => executions().length === 2 && (status = await jobStatus(sql)) === "completed", {
      what: () => `the takeover to complete (executions: ${JSON.stringify(executions())}, job: ${status})`,
    });
    expect(await second.stop("SIGTERM")).toBe(0);

    const runs = executions();
    expect(runs.map((r) => r.attempt)).toEqual([1, 2]);
    expect(runs[0]!.job_id).toBe(runs[1]!.job_id);
    expect(runs[0]!.pid).not.toBe(runs[1]!.pid);

    const jobs = await sql.all<Record<string, unknown>>("SELECT * FROM jobs WHERE queue = 'test.crashable'");
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ id: runs[0]!.job_id, status: "completed", lease_owner: null });
    expect(Number(jobs[0]!.attempts)).toBe(2);
    expect(JSON.parse(jobs[0]!.results as string)).toEqual([{ finished_by: runs[1]!.pid }]);
  });
}, 180_000); // two server starts and two waits, each with a 60 s deadline of its own
