/**
 * Stored extraction results, one per (file, domain): what a model or rule produced (`data`,
 * never changed by a review) and the review corrections layered over it. Re-running a stage
 * replaces `data` and keeps the corrections; reads show both the original and the corrected view.
 */
import { type SqlClient } from "../db/sql-client.ts";
import { isoAt, type Clock } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { applyCorrections, emptyCorrections, mergeCorrections, validateAgainst, type Corrections } from "./review.ts";

export interface Extraction {
  domain: string;
  source: string;
  data: unknown;
  corrections: Corrections;
  /** data with the corrections applied. */
  corrected: unknown;
  created_at: string;
  updated_at: string;
  reviewed_at: string | null;
}

interface ExtractionRow {
  domain: string;
  source: string;
  data: string;
  corrections: string;
  created_at: string;
  updated_at: string;
  reviewed_at: string | null;
}

function toExtraction(row: ExtractionRow): Extraction {
  const data = JSON.parse(row.data) as unknown;
  const corrections = JSON.parse(row.corrections) as Corrections;
  return {
    domain: row.domain,
    source: row.source,
    data,
    corrections,
    corrected: applyCorrections(data, corrections),
    created_at: row.created_at,
    updated_at: row.updated_at,
    reviewed_at: row.reviewed_at,
  };
}

export async function saveExtraction(sql: SqlClient, clock: Clock, fileId: string, domain: string, source: string, data: unknown): Promise<void> {
  const at = isoAt(clock.now());
  await sql.run(
    `INSERT INTO file_extractions (file_id, domain, data, source, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (file_id, domain) DO UPDATE SET data = excluded.data, source = excluded.source, updated_at = excluded.updated_at`,
    [fileId, domain, JSON.stringify(data), source, at, at],
  );
}

export async function listExtractions(sql: SqlClient, fileId: string): Promise<Extraction[]> {
  return (await sql.all<ExtractionRow>("SELECT * FROM file_extractions WHERE file_id = ? ORDER BY domain", [fileId])).map(toExtraction);
}

export async function getExtraction(sql: SqlClient, fileId: string, domain: string): Promise<Extraction | null> {
  const row = await sql.one<ExtractionRow>("SELECT * FROM file_extractions WHERE file_id = ? AND domain = ?", [fileId, domain]);
  return row ? toExtraction(row) : null;
}


/**
 * Merges a review into the stored corrections (additively) and returns the merged corrections.
 * The read and the write are one transaction, the row locked on PostgreSQL, so two reviews at once
 * both land (each merged into the other's).
 */
export function reviewExtraction(sql: SqlClient, clock: Clock, fileId: string, domain: string, incoming: Corrections): Promise<{ corrections: Corrections; updated_at: string }> {
  return sql.transaction(async (tx) => {
    const row = await tx.one<ExtractionRow>(`SELECT * FROM file_extractions WHERE file_id = ? AND domain = ? ${tx.dialect.forUpdate}`, [fileId, domain]);
    if (!row) throw new ApiError("EXTRACTION_NOT_FOUND", `file ${fileId} has no ${domain} extraction to review`);
    const current = toExtraction(row);
    validateAgainst(current.data, incoming);
    const merged = mergeCorrections(current.corrections ?? emptyCorrections(), incoming);
    const at = isoAt(clock.now());
    await tx.run("UPDATE file_extractions SET corrections = ?, reviewed_at = ? WHERE file_id = ? AND domain = ?", [JSON.stringify(merged), at, fileId, domain]);
    return { corrections: merged, updated_at: at };
  });
}
