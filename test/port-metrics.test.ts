/**
 * The job figures of GET /metrics (metrics.ts) read through the data-access port, on both
 * databases: jobs by queue and status, the due pending jobs' depth and the oldest one's age; the
 * database's file sizes only where there is a file (SQLite).
 */
import { describe, expect, test } from "bun:test";
import { ManualClock } from "../src/clock.ts";
import { Metrics } from "../src/metrics.ts";
import { portEngines } from "./support/port-engines.ts";

const { engines } = portEngines("port_metrics");

describe.each(engines)("metrics on $name", ({ client }) => {
  test("jobs by queue and status, due depth and the oldest due job's age are read at scrape time", async () => {
    const db = client();
    const clock = new ManualClock(Date.UTC(2031, 0, 1));
    const now = clock.now();
    const job = (queue: string, status: string, runAt: number) =>
      db.run("INSERT INTO jobs (id, queue, payload, status, max_attempts, run_at, created_at, updated_at) VALUES (?, ?, '{}', ?, 3, ?, 'x', 'x')", [crypto.randomUUID(), queue, status, runAt]);
    await job("file.process", "pending", now - 90_000);
    await job("file.process", "pending", now - 30_000);
    await job("file.process", "pending", now + 60_000); // not due yet
    await job("file.process", "completed", now - 100_000);
    await job("image.variants", "processing", now - 5_000);
    const metrics = new Metrics(db, clock, null);
    const body = (await metrics.scrape()).body;
    expect(body).toContain('mediabox_jobs{queue="file.process",status="pending"} 3');
    expect(body).toContain('mediabox_jobs{queue="file.process",status="completed"} 1');
    expect(body).toContain('mediabox_jobs{queue="image.variants",status="processing"} 1');
    expect(body).toContain('mediabox_queue_depth{queue="file.process"} 2');
    expect(body).toContain('mediabox_queue_oldest_pending_age_seconds{queue="file.process"} 90');
    expect(body).not.toContain("mediabox_database_bytes");
  });
});
