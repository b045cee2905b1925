/**
 * The stage runner's bookkeeping when the database refuses it: a file purged while its pipeline
 * runs makes the stage's row (a foreign key to the file) fail, and with group commit the stage's
 * onFailure write fails in the same transaction. The run then ends on that error, and the stage's
 * own record, never awaited, must not become an unhandled rejection (each one a bug the safety net counts).
 */
import { expect, test } from "bun:test";
import { systemClock } from "../src/clock.ts";
import type { SqlClient } from "../src/db/sql-client.ts";
import type { JobContext } from "../src/jobs/runner.ts";
import { Logger } from "../src/log.ts";
import type { Metrics } from "../src/metrics.ts";
import type { FileRow } from "../src/files/file.ts";
import { LocalProgressBoard } from "../src/processing/progress-board.ts";
import { runStages, type FileWork } from "../src/processing/stage-runner.ts";

test("a run ended by a stage's onFailure write leaves no unhandled rejection of the stage's own record", async () => {
  let failCommit!: (err: Error) => void;
  const commit = new Promise<void>((_, reject) => (failCommit = reject));
  // Every write of the turn shares one commit, which fails.
  const sql = { run: () => commit } as unknown as SqlClient;
  const metrics = { stageDuration: { observe() {} } } as unknown as Metrics;
  const controller = new AbortController();
  const job = { jobId: "j", payload: {}, orgId: "o", attempt: 1, maxAttempts: 1, signal: controller.signal, progress: () => {}, log: new Logger("error") } as unknown as JobContext<unknown>;
  const file = { id: crypto.randomUUID(), media_type: "image", filename: "gone.png" } as FileRow;
  const work: FileWork = { ctx: { clock: systemClock, sql, metrics, progress: new LocalProgressBoard() }, job, file, outcomes: {}, signal: controller.signal };
  const run = runStages(work, [
    {
      name: "variants",
      async run() {
        throw new Error("the original is gone");
      },
      // By now the stage's row is on its way in the same commit.
      async onFailure() {
        failCommit(new Error('insert or update on table "file_stage_runs" violates foreign key constraint'));
        await commit;
      },
    },
  ]);
  await expect(run).rejects.toThrow("foreign key");
  // bun test fails the test on a rejection nobody handled, reported once the turn's microtasks have run.
  await new Promise((resolve) => setImmediate(resolve));
});
