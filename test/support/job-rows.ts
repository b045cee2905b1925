/**
 * A job's row read straight from a test's SQLite handle: synchronous, so a test can poll it in a
 * `waitFor` probe. The application reads jobs through JobStore (src/jobs/job-store.ts).
 */
import type { Database } from "bun:sqlite";
import type { JobRow } from "../../src/jobs/queue.ts";

export function jobRow(db: Database, id: string): JobRow | null {
  return db.query<JobRow, [string]>("SELECT * FROM jobs WHERE id = ?").get(id);
}
