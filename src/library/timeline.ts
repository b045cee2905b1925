/**
 * The library by when things were taken (`GET /files/timeline`): counts of files per UTC month
 * (or day, or year) of `content_created_at`, under the same filters as GET /files, plus how many
 * have no date. A bucket's files are GET /files?taken_from=<start>&taken_to=<end> of its bounds.
 */
import type { SqlClient } from "../db/sql-client.ts";
import { fileConditions, type FileFilters } from "../files/queries.ts";

export const GRANULARITIES = ["year", "month", "day"] as const;
export type Granularity = (typeof GRANULARITIES)[number];

export interface TimelineBucket {
  /** "2021", "2021-06" or "2021-06-01" (UTC). */
  key: string;
  count: number;
  /** The bucket's bounds as instants (inclusive start, exclusive end). */
  start: string;
  end: string;
}

export interface Timeline {
  granularity: Granularity;
  buckets: TimelineBucket[];
  /** Files with a date, over all buckets. */
  datedCount: number;
  /** Files matching the filters that have no content_created_at. */
  undatedCount: number;
}

function bounds(key: string, granularity: Granularity): { start: string; end: string } {
  const [y, m = 1, d = 1] = key.split("-").map(Number) as [number, number?, number?];
  const start = new Date(Date.UTC(y, m - 1, d));
  const end =
    granularity === "year" ? new Date(Date.UTC(y + 1, 0, 1)) : granularity === "month" ? new Date(Date.UTC(y, m, 1)) : new Date(Date.UTC(y, m - 1, d + 1));
  return { start: start.toISOString(), end: end.toISOString() };
}

export async function timeline(db: SqlClient, orgId: string, filters: FileFilters, granularity: Granularity, order: "asc" | "desc"): Promise<Timeline> {
  const { filters: conditions, params } = fileConditions(db.dialect, filters);
  const where = ["f.org_id = ?", "f.deleted_at IS NULL", ...conditions].join(" AND ");
  // The listing's content_created_at index (org_id, content_created_at) serves the grouping.
  // The undated files' row (key NULL) is told apart below, wherever each engine sorts it.
  const rows = await db.all<{ key: string | null; n: number }>(
    `SELECT ${db.dialect.utcPeriod("f.content_created_at", granularity)} AS key, count(*) AS n FROM files f WHERE ${where} GROUP BY key ORDER BY key ${order === "asc" ? "ASC" : "DESC"}`,
    [orgId, ...params],
  );
  const buckets = rows.filter((row) => row.key !== null).map((row) => ({ key: row.key!, count: row.n, ...bounds(row.key!, granularity) }));
  return {
    granularity,
    buckets,
    datedCount: buckets.reduce((sum, b) => sum + b.count, 0),
    undatedCount: rows.find((row) => row.key === null)?.n ?? 0,
  };
}
