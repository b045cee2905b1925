/**
 * Durability of the job scheduler against a real kill -9: a server process dies mid-job, a new
 * process on the same data directory takes the job over at start (the dead process's lease is
 * released, not waited out), and the job completes exactly once with both executions recorded.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DataDir } from "../src/storage/data-dir.ts";
import { waitFor } from "./support/polling.ts";
import { spawnServer, type ServerProcess } from "./support/process.ts";
import { tempDir } from "./support/server.ts";

const dataDir = tempDir("mediabox-crash-");
const fixture = join(import.meta.dir, "fixtures", "job-server.ts");
const env = { MEDIABOX_DATA_DIR: dataDir, MEDIABOX_JOB_LEASE_SECONDS: "600", MEDIABOX_LOG_LEVEL: "info" };
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

/** Read from a separate connection while the server runs (WAL allows concurrent readers). */
function jobStatus(): string | null {
  const db = new Database(new DataDir(dataDir).database, { readonly: true });
  try {
    return (db.query("SELECT status FROM jobs WHERE queue = 'test.crashable'").get() as { status: string } | null)?.status ?? null;
  } finally {
    db.close();
  }
}

test("a job interrupted by kill -9 is taken over by the next process at once and completes exactly once", async () => {
  const first = await spawnServer([process.execPath, fixture], { env });
  started.push(first);
  await waitFor(() => executions().length === 1, { what: "the first execution" });
  expect(await first.stop("SIGKILL")).not.toBe(0);

  const second = await spawnServer([process.execPath, fixture], { env });
  started.push(second);
  // The lease runs 10 minutes: completing within seconds shows the dead process's lease was released.
  await waitFor(() => executions().length === 2 && jobStatus() === "completed", {
    what: () => `the takeover to complete (executions: ${JSON.stringify(executions())}, job: ${jobStatus()})`,
  });
  expect(await second.stop("SIGTERM")).toBe(0);

  const runs = executions();
  expect(runs.map((r) => r.attempt)).toEqual([1, 2]);
  expect(runs[0]!.job_id).toBe(runs[1]!.job_id);
  expect(runs[0]!.pid).not.toBe(runs[1]!.pid);

  const db = new Database(new DataDir(dataDir).database, { readonly: true });
  try {
    const jobs = db.query("SELECT * FROM jobs WHERE queue = 'test.crashable'").all() as Array<Record<string, unknown>>;
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ id: runs[0]!.job_id, status: "completed", attempts: 2, lease_owner: null });
    expect(JSON.parse(jobs[0]!.results as string)).toEqual([{ finished_by: runs[1]!.pid }]);
  } finally {
    db.close();
  }
}, 180_000); // two server starts and two waits, each with a 60 s deadline of its own
