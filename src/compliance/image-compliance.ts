/**
 * A photo's compliance check as asked at upload (compliance_type / compliance_standard /
 * compliance_image_type) and its verdict, in `image_compliance` (this module is its only
 * writer): the image pipeline's compliance stage reads the request and records the verdict.
 */
import type { SqlClient } from "../db/sql-client.ts";
import { factsRowsOf } from "../files/facts-table.ts";

export interface ComplianceRequest {
  type: string;
  standard: string;
  imageType: string | null;
}

export interface ImageCompliance extends ComplianceRequest {
  /** Null until the check has run. */
  status: "pass" | "fail" | null;
}

/** Asked at upload (in the transaction that records the file). */
export async function complianceRequested(sql: SqlClient, fileId: string, request: ComplianceRequest): Promise<void> {
  await sql.run("INSERT INTO image_compliance (file_id, type, standard, image_type) VALUES (?, ?, ?, ?)", [fileId, request.type, request.standard, request.imageType]);
}

export async function complianceChecked(sql: SqlClient, fileId: string, status: "pass" | "fail"): Promise<void> {
  await sql.run("UPDATE image_compliance SET status = ? WHERE file_id = ?", [status, fileId]);
}

interface ComplianceRow {
  file_id: string;
  type: string;
  standard: string;
  image_type: string | null;
  status: "pass" | "fail" | null;
}

const toCompliance = (row: ComplianceRow): ImageCompliance => ({ type: row.type, standard: row.standard, imageType: row.image_type, status: row.status });

/** Null when no check was asked for. */
export async function complianceOf(sql: SqlClient, fileId: string): Promise<ImageCompliance | null> {
  const row = await sql.one<ComplianceRow>("SELECT file_id, type, standard, image_type, status FROM image_compliance WHERE file_id = ?", [fileId]);
  return row ? toCompliance(row) : null;
}

/** The checks of several files in one read (a listing page's), by file id; a file with no check asked for is absent. */
export async function complianceOfFiles(sql: SqlClient, fileIds: readonly string[]): Promise<Map<string, ImageCompliance>> {
  const rows = await factsRowsOf<ComplianceRow>(sql, "image_compliance", "type, standard, image_type, status", fileIds);
  return new Map([...rows].map(([id, row]) => [id, toCompliance(row)]));
}
