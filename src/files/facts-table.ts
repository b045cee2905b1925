/**
 * A kind's facts table: one row per file, keyed by `file_id` (deleted with the file by its
 * foreign key). The kind's owning module sets some of its columns at a time; the row is made by
 * the first write, its other columns taking their defaults.
 */
import type { Database } from "bun:sqlite";

export function setFacts(db: Database, table: string, fileId: string, values: Record<string, string | number | null>): void {
  const columns = Object.keys(values);
  db.query(
    `INSERT INTO ${table} (file_id, ${columns.join(", ")}) VALUES (?, ${columns.map(() => "?").join(", ")})
     ON CONFLICT (file_id) DO UPDATE SET ${columns.map((c) => `${c} = excluded.${c}`).join(", ")}`,
  ).run(fileId, ...Object.values(values));
}
