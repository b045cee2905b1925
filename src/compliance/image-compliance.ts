/**
 * A photo's compliance check as asked at upload (compliance_type / compliance_standard /
 * compliance_image_type) and its verdict, in `image_compliance` (this module is its only
 * writer): the image pipeline's compliance stage reads the request and records the verdict.
 */
import type { Database } from "bun:sqlite";

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
export function complianceRequested(db: Database, fileId: string, request: ComplianceRequest): void {
  db.query("INSERT INTO image_compliance (file_id, type, standard, image_type) VALUES (?, ?, ?, ?)").run(fileId, request.type, request.standard, request.imageType);
}

export function complianceChecked(db: Database, fileId: string, status: "pass" | "fail"): void {
  db.query("UPDATE image_compliance SET status = ? WHERE file_id = ?").run(status, fileId);
}

/** Null when no check was asked for. */
export function complianceOf(db: Database, fileId: string): ImageCompliance | null {
  const row = db
    .query<{ type: string; standard: string; image_type: string | null; status: "pass" | "fail" | null }, [string]>(
      "SELECT type, standard, image_type, status FROM image_compliance WHERE file_id = ?",
    )
    .get(fileId);
  return row ? { type: row.type, standard: row.standard, imageType: row.image_type, status: row.status } : null;
}
