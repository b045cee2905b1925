/**
 * Jobs shared by real worker processes over one PostgreSQL database (docs/scale-out.md): two
 * processes lease from the same table, one is killed with -9 mid-run, and no job is lost: the
 * survivor takes over the dead process's jobs once their leases lapse, every job completes, and
 * only the jobs the dead process held ran twice. Skips, saying why, where no PostgreSQL server
 * binary is found.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { join } from "node:path";
import { openPostgres } from "../src/db/postgres-database.ts";
import type { PostgresClient } from "../src/db/postgres-client.ts";
import { JobStore } from "../src/jobs/job-store.ts";
import type { JobRow } from "../src/jobs/queue.ts";
import { waitFor } from "./support/polling.ts";
import { postgresOrSkip, startPostgres, type TestPostgres } from "./support/postgres.ts";

const binaries = postgresOrSkip();
const WORKER = join(import.meta.dir, "fixtures", "postgres-job-worker.ts");
const JOBS = 120;

let pg: TestPostgres | null = null;
let url = "";
let client: PostgresClient | null = null;
const processes: Subprocess<"ignore", "pipe", "pipe">[] = [];

beforeAll(async () => {
  if (!binaries) return;
  pg = await startPostgres(binaries);
  url = await pg.createDatabase("processes");
  client = await openPostgres(url, { max: 2 });
}, 120_000);

afterAll(async () => {
  for (const proc of processes) proc.kill("SIGKILL");
  await Promise.all(processes.map((proc) => proc.exited));
  await client?.close();
  await pg?.stop();
});

async function startWorker(name: string, jobMs: number): Promise<Subprocess<"ignore", "pipe", "pipe">> {
  const proc = Bun.spawn([process.execPath, WORKER, url, name, String(jobMs)], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  processes.push(proc);
  const reader = proc.stdout.getReader();
  let seen = "";
  while (!seen.includes("ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`worker ${name} exited before it was ready: ${await new Response(proc.stderr).text()}`);
    seen += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return proc;
}

describe.skipIf(!binaries)("worker processes over PostgreSQL", () => {
  test("two processes share the jobs; one killed with -9 mid-run loses none: the other takes its jobs over once their leases lapse", async () => {
    const store = new JobStore(client!);
    for (let i = 0; i < JOBS; i++) await store.enqueue({ queue: "t.shared", payload: { i } }, Date.now());
    const rows = () => client!.all<JobRow>("SELECT * FROM jobs WHERE queue = 't.shared'");
    const completed = async () => (await rows()).filter((row) => row.status === "completed").length;

    // a's jobs take long enough that those it holds are still held when the kill lands on a busy machine.
    const a = await startWorker("a", 400);
    await startWorker("b", 30);
    await waitFor(async () => (await completed()) >= 20, { what: "the first 20 jobs to complete" });
    // Kill a while it holds jobs (it runs two at a time), once it has finished one; which it held is read once it is dead.
    const heldByA = async () => (await rows()).filter((row) => row.status === "processing" && row.lease_owner?.includes(`-${a.pid}-`));
    const finishedByA = async () => (await rows()).filter((row) => row.status === "completed" && row.results?.includes('"worker":"a"')).length;
    await waitFor(async () => (await finishedByA()) > 0 && (await heldByA()).length > 0, { what: "worker a to have finished a job and hold another", intervalMs: 5 });
    a.kill("SIGKILL");
    await a.exited;
    const orphaned = new Set((await heldByA()).map((row) => row.id));
    expect(orphaned.size).toBeGreaterThan(0);

    let count = 0;
    const done = await waitFor(async () => ((count = await completed()) === JOBS ? rows() : null), {
      what: () => `every job to complete (${count} of ${JOBS})`,
      timeoutMs: 60_000,
    });
    const results = done.map((row) => ({ id: row.id, attempts: row.attempts, worker: (JSON.parse(row.results!) as { worker: string }[])[0]!.worker }));
    expect(done.every((row) => row.status === "completed")).toBe(true);
    // Both took part; every orphaned job was finished by the survivor on a second attempt.
    expect(new Set(results.map((r) => r.worker))).toEqual(new Set(["a", "b"]));
    for (const id of orphaned) expect(results.find((r) => r.id === id)).toMatchObject({ attempts: 2, worker: "b" });
    // No other job ran twice.
    expect(results.filter((r) => r.attempts > 1).every((r) => orphaned.has(r.id))).toBe(true);
  }, 120_000);
});
