/**
 * A kind's facts table: one row per file, keyed by `file_id` (deleted with the file by its
 * foreign key). The kind's owning module sets some of its columns at a time; the row is made by
 * the first write, its other columns taking their defaults.
 */
import type { SqlClient } from "../db/sql-client.ts";

export async function setFacts(sql: SqlClient, table: string, fileId: string, values: Record<string, string | number | null>): Promise<void> {
  const columns = Object.keys(values);
  await sql.run(
    `INSERT INTO ${table} (file_id, ${columns.join(", ")}) VALUES (?, ${columns.map(() => "?").join(", ")})
     ON CONFLICT (file_id) DO UPDATE SET ${columns.map((c) => `${c} = excluded.${c}`).join(", ")}`,
    [fileId, ...Object.values(values)],
  );
}

/**
 * The rows of a kind's facts table for several files, by file id, in one read (a listing page
 * asks for its files' facts at once); a file without a row is absent.
 */
export async function factsRowsOf<Row>(sql: SqlClient, table: string, columns: string, fileIds: readonly string[]): Promise<Map<string, Row>> {
  if (fileIds.length === 0) return new Map();
  const rows = await sql.all<Row & { file_id: string }>(`SELECT file_id, ${columns} FROM ${table} WHERE file_id IN (${sql.dialect.jsonValues})`, [JSON.stringify([...new Set(fileIds)])]);
  return new Map(rows.map((row) => [row.file_id, row]));
}
