/**
 * Progress while a file is analysed: the stage runner's live progress (stage, its place, the
 * percentage, the pages or frames done) reaches `GET /files/uploads-status/{id}` as `progress`
 * while a stage runs and is gone when the run ends, and the file's page in Debian's chromium
 * says it in words with a progress bar. A stage held on a gate makes the moment certain.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import type { JobContext } from "../src/jobs/runner.ts";
import { runStages, type FileWork, type Stage } from "../src/processing/stage-runner.ts";
import { expectNoSidewaysScroll, launchChromium, newPage, SHOTS, signIn, watchFailures, WIDTHS } from "./support/chromium.ts";
import { waitFor } from "./support/polling.ts";
import { insertFileRow, defaultProjectOf } from "./support/rows.ts";
import { startTestServer, type Tenant, type TestServer } from "./support/server.ts";

let server: TestServer;
let tenant: Tenant;
let browser: Browser;
beforeAll(async () => {
  server = await startTestServer();
  tenant = await server.tenant({ tier: "CUSTOM" });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Runs two stages over a document row; the first reports 3 of 10 pages, then waits for `gate`. */
async function heldRun(fileId: string, gate: Promise<void>): Promise<unknown> {
  const file = (await server.ctx.files.byId(fileId))!;
  const job = { jobId: "test", payload: {}, orgId: tenant.orgId, attempt: 1, maxAttempts: 1, signal: new AbortController().signal, progress: () => {}, write: (fn: () => unknown) => Promise.resolve(fn()), log: server.ctx.log } as unknown as JobContext<unknown>;
  const work: FileWork = { ctx: server.ctx, job, file, outcomes: {}, signal: job.signal };
  const stages: Stage<FileWork>[] = [
    {
      name: "extraction",
      weight: 4,
      async run(_work, progress) {
        progress(0.3, { done: 3, total: 10, unit: "page" });
        await gate;
      },
    },
    { name: "chunks", async run() {} },
  ];
  return runStages(work, stages);
}

test("a stage's pages reach the status endpoint and the file's page while it runs, and are gone after", async () => {
  const projectId = await defaultProjectOf(server.ctx.sql, tenant.orgId);
  const id = await insertFileRow(server.ctx.sql, { orgId: tenant.orgId, projectId, mediaType: "document", filename: "scan-10-pages.pdf" });
  await server.ctx.sql.run("UPDATE files SET processing_status = 'processing' WHERE id = ?", [id]);
  const gate = Promise.withResolvers<void>();
  const run = heldRun(id, gate.promise);
  try {
    // The run reads its file row before the first stage reports: wait for the report, not for the read.
    const status = await waitFor(async () => {
      const res = await tenant.api.get(`/files/uploads-status/${id}`);
      return res.status !== 200 || res.body.progress ? res : null;
    }, { what: "the stage's progress to be reported", timeoutMs: 30_000 });
    expect(status.status).toBe(200);
    // 0.3 of a stage weighing 4 of 5: 24 %.
    expect(status.body.progress).toEqual({ stage: "extraction", stage_number: 1, stage_count: 2, percent: 24, unit: "page", done: 3, total: 10 });
    // Another organization learns nothing of it.
    expect((await (await server.tenant()).api.get(`/files/uploads-status/${id}`)).status).toBe(404);

    const page = await newPage(browser, WIDTHS.phone, 844);
    const failures = watchFailures(page);
    try {
      await signIn(page, server.url, tenant.key);
      await page.goto(`${server.url}/#/files/${id}`);
      await page.getByText("Analysing: reading the pages, 3 of 10 pages (step 1 of 2, 24 %)").waitFor({ timeout: 30_000 });
      expect(await page.getByRole("progressbar", { name: "Analysis progress" }).getAttribute("value")).toBe("24");
      await expectNoSidewaysScroll(page);
      await page.screenshot({ path: join(SHOTS, "file-progress-390.png") });
      expect(failures.failed()).toEqual([]);
    } finally {
      await page.close();
    }
  } finally {
    gate.resolve();
    await run;
  }
  expect((await tenant.api.get(`/files/uploads-status/${id}`)).body.progress).toBeNull();
}, 120_000);
