/** Every job queue the appliance registers has a label in the user's words on the Activity page. */
import { afterAll, expect, test } from "bun:test";
import { JOB_LABELS } from "../src/dashboard/web/job-labels.ts";
import { startTestServer } from "./support/server.ts";

const server = await startTestServer();
afterAll(() => server.close());

test("the job monitor names every registered queue", () => {
  const names = server.ctx.jobs.queueNames();
  expect(names.length).toBeGreaterThan(10);
  expect(names.filter((name) => !JOB_LABELS[name])).toEqual([]);
});
