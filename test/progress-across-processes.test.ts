/**
 * A file's live progress on a deployment of several processes (docs/scale-out.md, "Live progress
 * across processes"): an `api` server and a `worker` server over one PostgreSQL database and one
 * bucket, as in test/postgres-serving.test.ts. A run in the worker (held on a gate, so the moment
 * is certain) shows through the api's `GET /files/uploads-status/{id}` and is gone once the run
 * ends; a 10-page document processed by the worker sends a handful of notifications, not one a page.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PDFDocument, StandardFonts } from "pdf-lib";
import type { PostgresClient } from "../src/db/postgres-client.ts";
import type { JobContext } from "../src/jobs/runner.ts";
import { PROGRESS_CHANNEL, type LiveProgress } from "../src/processing/progress-board.ts";
import { runStages, type FileWork, type Stage } from "../src/processing/stage-runner.ts";
import type { RunningServer } from "../src/server.ts";
import { processed, waitFor } from "./support/polling.ts";
import { postgresOrSkip } from "./support/postgres.ts";
import { startTwoProcesses, type TwoProcesses } from "./support/two-processes.ts";
import { defaultProjectOf, insertFileRow } from "./support/rows.ts";
import { ApiClient } from "./support/server.ts";
import { uploadFile } from "./support/uploads.ts";

/** A PDF of `pages` pages, each with a line of text (read from its text layer, no OCR). */
async function pagedPdf(pages: number): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (let n = 1; n <= pages; n++) {
    pdf.addPage([595, 842]).drawText(`Harbor log page ${n}: the north quay crane was inspected and its valve tested.`, { x: 50, y: 780, size: 11, font });
  }
  return pdf.save();
}

const binaries = postgresOrSkip();

describe.skipIf(!binaries)("live progress from a worker to an api sharing one database", () => {
  let deployment: TwoProcesses;
  let admin: PostgresClient;
  let api: RunningServer;
  let worker: RunningServer;
  let orgId: string;
  let client: ApiClient;

  beforeAll(async () => {
    deployment = await startTwoProcesses(binaries!, "progress");
    ({ admin, api, worker, orgId } = deployment);
    client = new ApiClient(api.url, deployment.key);
  }, 180_000);

  afterAll(() => deployment?.stop());

  /** The api's answer once `accept` takes its `progress`, within a deadline. */
  function progressOnApi(id: string, what: string, accept: (progress: Record<string, unknown> | null) => boolean) {
    return waitFor(
      async () => {
        const res = await client.get(`/files/uploads-status/${id}`);
        if (res.status !== 200) throw new Error(`uploads-status answered ${res.status}: ${JSON.stringify(res.body)}`);
        return accept(res.body.progress) ? { progress: res.body.progress as Record<string, unknown> | null } : null;
      },
      { what, timeoutMs: 30_000 },
    );
  }

  test("a run in the worker shows its stage and pages through the api's status, its latest page after a burst, and nothing once it ends", async () => {
    const projectId = await defaultProjectOf(admin, orgId);
    const id = await insertFileRow(admin, { orgId, projectId, mediaType: "document", filename: "scan-10-pages.pdf" });
    await admin.run("UPDATE files SET processing_status = 'processing' WHERE id = ?", [id]);
    const burst = Promise.withResolvers<void>();
    const gate = Promise.withResolvers<void>();
    const ctx = worker.ctx;
    const job = { jobId: "test", payload: {}, orgId, attempt: 1, maxAttempts: 1, signal: new AbortController().signal, progress: () => {}, log: ctx.log } as unknown as JobContext<unknown>;
    const work: FileWork = { ctx, job, file: (await ctx.files.byId(id))!, outcomes: {}, signal: job.signal };
    const stages: Stage<FileWork>[] = [
      {
        name: "extraction",
        weight: 4,
        async run(_work, progress) {
          progress(0.3, { done: 3, total: 10, unit: "page" });
          await burst.promise;
          // Three pages at once: the throttle holds them back, then sends the latest.
          for (const done of [4, 5, 6]) progress(done / 10, { done, total: 10, unit: "page" });
          await gate.promise;
        },
      },
      { name: "chunks", async run() {} },
    ];
    const run = runStages(work, stages);
    try {
      const first = await progressOnApi(id, "the worker's first page report on the api", (p) => p?.done === 3);
      // 0.3 of a stage weighing 4 of 5: 24 %.
      expect(first.progress).toEqual({ stage: "extraction", stage_number: 1, stage_count: 2, percent: 24, unit: "page", done: 3, total: 10 });
      burst.resolve();
      const latest = await progressOnApi(id, "the burst's latest page on the api", (p) => p?.done === 6);
      expect(latest.progress).toEqual({ stage: "extraction", stage_number: 1, stage_count: 2, percent: 48, unit: "page", done: 6, total: 10 });
    } finally {
      burst.resolve();
      gate.resolve();
      await run;
    }
    expect((await progressOnApi(id, "the progress gone from the api after the run", (p) => p === null)).progress).toBeNull();
  }, 120_000);

  test("a 10-page document processed by the worker sends a few notifications, not one a page, the end last", async () => {
    const messages: { file: string; progress: LiveProgress | null; at: number }[] = [];
    const listening = await admin.listen(PROGRESS_CHANNEL, (payload) => messages.push({ ...JSON.parse(payload), at: performance.now() }));
    try {
      const id = await uploadFile(client, await pagedPdf(10), "harbor-log.pdf");
      expect((await processed({ api: client }, id)).processing_status).toBe("completed");
      await waitFor(() => messages.some((m) => m.file === id && m.progress === null), { what: "the run's end on the channel", timeoutMs: 30_000 });
      const ours = messages.filter((m) => m.file === id);
      expect(ours.at(-1)!.progress).toBeNull();
      const reports = ours.slice(0, -1).map((m) => m.progress!);
      // Every page was read and reported, yet the notifications are bounded by the stages (each
      // one's first report goes at once) and the run's length (one more per 400 ms at most).
      const stageCount = reports[0]!.stageCount;
      const spanMs = ours.at(-1)!.at - ours[0]!.at;
      expect(reports.map((p) => p.stageNumber)).toEqual([...reports.map((p) => p.stageNumber)].sort((a, b) => a - b));
      expect(new Set(reports.map((p) => p.stageNumber)).size).toBe(stageCount);
      expect(ours.length).toBeLessThanOrEqual(stageCount + 1 + Math.ceil(spanMs / 400) + 1);
      console.info(`progress notifications for a 10-page PDF: ${ours.length} (${stageCount} stages, ${Math.round(spanMs)} ms from the first to the end; sent: ${ours.map((m) => (m.progress ? `${m.progress.stage}${m.progress.unit ? ` ${m.progress.done}/${m.progress.total}` : ""} ${m.progress.percent}% +${Math.round(m.at - ours[0]!.at)}ms` : "end")).join("; ")})`);
    } finally {
      await listening.unlisten();
    }
  }, 120_000);
});
