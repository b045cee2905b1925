/**
 * The job queue's callers' side and the small shared writers on the data-access port, on SQLite
 * and PostgreSQL: a job submitted inside a port transaction commits with it or not at all, waiting
 * for a job sees it finish, where a file goes (placement), and the monthly usage counters with the
 * AI-description quota's reservation, which two uploads at once on PostgreSQL cannot both take
 * past its last credit; and the stage runner's record of each stage.
 */
import { describe, expect, test } from "bun:test";
import { systemClock } from "../src/clock.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import { FileRepository } from "../src/files/file-repository.ts";
import { Metrics } from "../src/metrics.ts";
import { LocalProgressBoard } from "../src/processing/progress-board.ts";
import { runStages, type FileWork } from "../src/processing/stage-runner.ts";
import type { JobContext } from "../src/jobs/runner.ts";
import { placement } from "../src/folders/placement.ts";
import { JobStore } from "../src/jobs/job-store.ts";
import { JobRunner } from "../src/jobs/runner.ts";
import { Logger } from "../src/log.ts";
import { period, recordUsage, releaseUsage, reserveUsage, usageThisMonth } from "../src/usage/usage.ts";
import { portEngines } from "./support/port-engines.ts";

const { engines } = portEngines("queue", { connections: 8 });
const log = new Logger("error");

async function tenant(db: SqlClient, orgId: string): Promise<{ projectId: string }> {
  const projectId = crypto.randomUUID();
  await db.run("INSERT INTO organizations (id, name, name_key, tier, created_at) VALUES (?, ?, ?, 'STARTER', 'x')", [orgId, orgId, orgId]);
  await db.run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES (?, ?, 'Default', 'default', 1, 'x', 'x')", [projectId, orgId]);
  return { projectId };
}

async function project(db: SqlClient, orgId: string, name: string): Promise<string> {
  const id = crypto.randomUUID();
  await db.run("INSERT INTO projects (id, org_id, name, name_key, is_default, created_at, updated_at) VALUES (?, ?, ?, ?, 0, 'x', 'x')", [id, orgId, name, name]);
  return id;
}

async function folder(db: SqlClient, orgId: string, projectId: string, name: string): Promise<string> {
  const id = crypto.randomUUID();
  await db.run("INSERT INTO folders (id, org_id, project_id, name, name_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'x', 'x')", [id, orgId, projectId, name, name]);
  return id;
}

describe.each(engines)("the job queue and shared writers on the port, on $name", ({ name, client }) => {
  const runners: JobRunner[] = [];
  const runner = () => {
    const r = new JobRunner(new JobStore(client()), systemClock, log, { leaseMs: 10_000, pollMs: 50 });
    runners.push(r);
    return r;
  };

  test("a job submitted inside a transaction that rolls back leaves no job; one that commits leaves it pending", async () => {
    const jobs = runner();
    let id = "";
    const failed = client().transaction(async (tx) => {
      id = (await jobs.submit({ queue: "t.queue-rollback", orgId: null, payload: {} }, tx)).id;
      expect(await jobs.store.get(id, tx)).toMatchObject({ status: "pending" });
      throw new Error("the record this job belongs to failed");
    });
    await expect(failed).rejects.toThrow(/failed/);
    expect(await jobs.store.get(id)).toBeNull();

    const kept = await client().transaction(async (tx) => (await jobs.submit({ queue: "t.queue-rollback", payload: {} }, tx)).id);
    expect(await jobs.store.get(kept)).toMatchObject({ id: kept, status: "pending", queue: "t.queue-rollback" });
  });

  test("waitFor returns the row once a worker finished the job, and the row as it is when the time is up", async () => {
    const jobs = runner();
    jobs.register({ name: "t.queue-wait" as never, concurrency: 1, handler: async () => [{ done: true }] });
    jobs.start();
    try {
      const { id } = await jobs.submit({ queue: "t.queue-wait" as never, payload: {} } as never);
      const done = await jobs.store.waitFor(id, 20_000);
      expect(done).toMatchObject({ status: "completed", progress: 100 });
      expect(JSON.parse(done!.results!)).toEqual([{ done: true }]);

      // No worker takes this queue: the wait ends at its deadline with the job still pending.
      const { id: idle } = await jobs.submit({ queue: "t.queue-nobody" as never, payload: {} } as never);
      const started = Date.now();
      expect(await jobs.store.waitFor(idle, 300)).toMatchObject({ status: "pending" });
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      expect(await jobs.store.waitFor(crypto.randomUUID(), 1_000)).toBeNull();
    } finally {
      await jobs.stop(1_000);
    }
  });

  test("placement: into a folder and its project, a project's top level, else the Default project; refusals", async () => {
    const db = client();
    const org = `org-place-${name}-${crypto.randomUUID().slice(0, 8)}`;
    const other = `org-other-${name}-${crypto.randomUUID().slice(0, 8)}`;
    const { projectId: defaultProject } = await tenant(db, org);
    const { projectId: otherDefault } = await tenant(db, other);
    const travel = await project(db, org, "travel");
    const inTravel = await folder(db, org, travel, "2026");
    const foreign = await folder(db, other, otherDefault, "theirs");

    expect(await placement(db, org, inTravel, null)).toEqual({ projectId: travel, folderId: inTravel });
    expect(await placement(db, org, inTravel, travel)).toEqual({ projectId: travel, folderId: inTravel });
    expect(await placement(db, org, null, travel)).toEqual({ projectId: travel, folderId: null });
    expect(await placement(db, org, null, null)).toEqual({ projectId: defaultProject, folderId: null });
    await expect(placement(db, org, inTravel, defaultProject)).rejects.toMatchObject({ status: 400 });
    await expect(placement(db, org, foreign, null)).rejects.toMatchObject({ code: "FOLDER_NOT_FOUND" });
    await expect(placement(db, org, null, otherDefault)).rejects.toMatchObject({ code: "PROJECT_NOT_FOUND" });
    // Inside a transaction, through its tx.
    expect(await db.transaction((tx) => placement(tx, org, null, travel))).toEqual({ projectId: travel, folderId: null });
  });

  test("usage counters: recorded by month, reserved up to a limit, released never below zero", async () => {
    const db = client();
    const org = `org-usage-${name}-${crypto.randomUUID().slice(0, 8)}`;
    await tenant(db, org);
    const march = Date.parse("2026-03-15T12:00:00Z");
    const april = Date.parse("2026-04-01T00:00:00Z");
    expect(period(march)).toBe("2026-03");
    expect(await usageThisMonth(db, org, "ai_descriptions", march)).toBe(0);
    await recordUsage(db, org, "ai_descriptions", 2, march);
    await recordUsage(db, org, "ai_descriptions", 0, march);
    await recordUsage(db, org, "chat_messages", 5, march);
    expect(await usageThisMonth(db, org, "ai_descriptions", march)).toBe(2);
    expect(await usageThisMonth(db, org, "ai_descriptions", april)).toBe(0);

    expect(await reserveUsage(db, org, "ai_descriptions", 2, 5, march)).toBe(true); // 4 of 5
    expect(await reserveUsage(db, org, "ai_descriptions", 2, 5, march)).toBe(false); // 6 > 5: nothing taken
    expect(await reserveUsage(db, org, "ai_descriptions", 1, 5, march)).toBe(true); // 5 of 5
    expect(await usageThisMonth(db, org, "ai_descriptions", march)).toBe(5);
    expect(await reserveUsage(db, org, "ai_descriptions", 3, 2, april)).toBe(false); // more than the limit in a fresh month
    expect(await reserveUsage(db, org, "ai_descriptions", 3, null, april)).toBe(true); // no limit
    expect(await usageThisMonth(db, org, "ai_descriptions", april)).toBe(3);

    await releaseUsage(db, org, "ai_descriptions", 2, march);
    expect(await usageThisMonth(db, org, "ai_descriptions", march)).toBe(3);
    await releaseUsage(db, org, "ai_descriptions", 10, march);
    expect(await usageThisMonth(db, org, "ai_descriptions", march)).toBe(0);
    expect(await usageThisMonth(db, org, "chat_messages", march)).toBe(5);

    // A reservation inside a transaction that rolls back gives nothing away.
    await expect(db.transaction(async (tx) => {
      expect(await reserveUsage(tx, org, "ai_descriptions", 1, 5, march)).toBe(true);
      throw new Error("the upload's record failed");
    })).rejects.toThrow(/record failed/);
    expect(await usageThisMonth(db, org, "ai_descriptions", march)).toBe(0);
  });

  test.if(name === "postgres")("uploads reserving at once never take the quota past its last credit", async () => {
    const db = client();
    const org = `org-race-${crypto.randomUUID().slice(0, 8)}`;
    await tenant(db, org);
    const now = Date.parse("2026-05-10T08:00:00Z");
    await recordUsage(db, org, "ai_descriptions", 7, now); // 3 of 10 left
    // Eight transactions, each reserving one credit and then holding its transaction open a moment
    // (the rest of an upload's record), all started together on their own connections.
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () =>
        db.transaction(async (tx) => {
          const granted = await reserveUsage(tx, org, "ai_descriptions", 1, 10, now);
          await tx.one("SELECT pg_sleep(0.05)");
          return granted;
        }),
      ),
    );
    expect(outcomes.filter(Boolean)).toHaveLength(3);
    expect(await usageThisMonth(db, org, "ai_descriptions", now)).toBe(10);

    // The first reservation of a month, by several at once: the row is created once, the limit holds.
    const may = Date.parse("2026-06-02T08:00:00Z");
    const first = await Promise.all(
      Array.from({ length: 6 }, () =>
        db.transaction(async (tx) => {
          const granted = await reserveUsage(tx, org, "ai_descriptions", 2, 5, may);
          await tx.one("SELECT pg_sleep(0.05)");
          return granted;
        }),
      ),
    );
    expect(first.filter(Boolean)).toHaveLength(2);
    expect(await usageThisMonth(db, org, "ai_descriptions", may)).toBe(4);
  });

  test("the stage runner records each stage's outcome in file_stage_runs, a run again replacing it", async () => {
    const db = client();
    const org = `org-stages-${name}-${crypto.randomUUID().slice(0, 8)}`;
    const { projectId } = await tenant(db, org);
    const id = crypto.randomUUID();
    const files = new FileRepository(db, systemClock);
    await files.create({
      id, orgId: org, projectId, folderId: null, filename: "note.md", size: 10, sha256: `sha-${id}`,
      type: { mediaType: "document", mime: "text/markdown", format: "md", documentType: "md" },
      blobKey: `orgs/${org}/files/${id}/original`, uploadMethod: "streaming", sessionId: null, uploadedBy: null, processingJobId: `job-${id}`,
      title: null, tags: [], storageTarget: "default", autoDescribe: false, contentCategory: "general", customSchemaId: null, description: null,
    });
    const job = { jobId: "j", payload: {}, orgId: org, attempt: 1, maxAttempts: 1, signal: new AbortController().signal, progress: () => {}, log, transaction: () => Promise.reject(new Error("unused")) } as unknown as JobContext<unknown>;
    const run = async (failText: boolean) => {
      const work: FileWork = { ctx: { clock: systemClock, sql: db, metrics: new Metrics(db, systemClock, null), progress: new LocalProgressBoard() }, job, file: (await files.byId(id))!, outcomes: {}, signal: job.signal };
      return runStages(work, [
        { name: "read", async run() {} },
        { name: "text", async run() { if (failText) throw new Error("no text layer"); } },
        { name: "ocr", appliesTo: () => "not a scan", async run() {} },
      ]);
    };
    const rows = () => db.all<{ stage: string; status: string; error: string | null }>("SELECT stage, status, error FROM file_stage_runs WHERE file_id = ? ORDER BY stage", [id]);
    await run(true);
    expect(await rows()).toEqual([
      { stage: "ocr", status: "skipped", error: "not a scan" },
      { stage: "read", status: "completed", error: null },
      { stage: "text", status: "failed", error: expect.stringContaining("no text layer") },
    ]);
    await run(false);
    expect((await rows()).map((r) => [r.stage, r.status])).toEqual([["ocr", "skipped"], ["read", "completed"], ["text", "completed"]]);
  });
});
