/**
 * A job's row read straight through the test server's data-access port, so a test can poll it in
 * a `waitFor` probe. The application reads jobs through JobStore (src/jobs/job-store.ts).
 */
import type { SqlClient } from "../../src/db/sql-client.ts";
import type { JobRow } from "../../src/jobs/queue.ts";

export function jobRow(db: SqlClient, id: string): Promise<JobRow | null> {
  return db.one<JobRow>("SELECT * FROM jobs WHERE id = ?", [id]);
}
